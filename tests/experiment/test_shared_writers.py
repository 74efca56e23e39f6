"""Two real processes write their arms' knowledge into one shared store at the same time: no
write is lost or doubled (one PostgreSQL holding two arms' KBs, one PostgreSQL KB shared by both,
one SQLite file shared by both)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import costeer_lab
from costeer_lab.experiment import shared_target
from costeer_lab.knowledge import KnowledgeBaseV2, iter_query_log, open_kb
from costeer_lab.store import get_store

WRITER = Path(__file__).with_name("_shared_writer.py")
REPO = Path(costeer_lab.__file__).resolve().parents[1]
N = 30
RUNS = ("k0/armA-seed0", "k1/armB-seed0")


def _write_concurrently(targets: list[str], go: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER), target, run, str(N), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for target, run in zip(targets, RUNS, strict=True)
    ]
    go.touch()  # both start writing at once
    outs = []
    try:
        for proc in procs:
            outs.append(proc.communicate(timeout=300))
    finally:  # one failed or hung: the other is not left running
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0 and out.strip() == "done", err


def _check_run(target: str, run: str, *, others: tuple[str, ...]) -> None:
    """The store at ``target`` holds exactly the N steps of ``run`` (each once) and of
    ``others``, nothing else."""
    with get_store(target) as store:
        steps = [key for key, _ in store.iter_records("evo_step")]
        runs = (run, *others)
        assert sorted(steps) == sorted(f"{r}/{i:05d}" for r in runs for i in range(1, N + 1))
        assert store.count_records("kg_attempt") == len(runs) * (N + 1)
        assert store.count_records("kg_attempt", where={"run_id": run}) == N + 1
        logged = iter_query_log(store, run_id=run)
        assert sorted(r["attempt"] for r in logged) == list(range(1, N + 1))
        kb = open_kb(store=store, version="v2", embedder="hashing")
        assert isinstance(kb, KnowledgeBaseV2)
        for r in runs:
            for i in range(N):
                attempts = kb.task_attempts(r, f"{r}/t{i}")
                assert [a.succeeded for a in attempts] == [i % 2 == 0]
        shared = [r for r in runs if kb.task_attempts(r, "shared")]
        assert shared == list(runs)  # one task_description node, an attempt of each run
        # the shared task description: one node, however many writers added it
        assert kb.stats()["nodes.task_description"] == len(runs) * N + 1


def test_two_arms_in_their_own_schemas_of_one_postgres(postgres_url: str, tmp_path: Path) -> None:
    targets = [shared_target(postgres_url, "arm", "k", arm, 0) for arm in ("armA", "armB")]
    assert targets[0] != targets[1]
    _write_concurrently(targets, tmp_path / "go")
    _check_run(targets[0], RUNS[0], others=())  # each KB holds its own arm only
    _check_run(targets[1], RUNS[1], others=())
    with get_store(postgres_url) as store:  # and the base schema nothing
        assert store.count_records("kg_attempt") == 0


def test_two_processes_one_postgres_kb(postgres_url: str, tmp_path: Path) -> None:
    """Both create the (new) schema the URL names at the same moment, then share it."""
    sep = "&" if "?" in postgres_url else "?"
    url = f"{postgres_url}{sep}schema=team_kb"
    _write_concurrently([url, url], tmp_path / "go")
    _check_run(url, RUNS[0], others=(RUNS[1],))


@pytest.mark.parametrize("form", ["path", "url"])
def test_two_processes_one_sqlite_file(tmp_path: Path, form: str) -> None:
    path = tmp_path / "shared" / "lab.db"
    target = str(path) if form == "path" else f"sqlite:///{path}"
    _write_concurrently([target, target], tmp_path / "go")
    _check_run(target, RUNS[0], others=(RUNS[1],))
