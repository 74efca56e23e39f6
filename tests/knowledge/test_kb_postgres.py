"""Scale-out: two processes share one knowledge base on PostgreSQL and lose nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import costeer_lab
from costeer_lab.graph import TASK_DESCRIPTION
from costeer_lab.knowledge import KnowledgeBaseV2, open_kb
from costeer_lab.store import PostgresStore

from ._kb_worker import shared_task, task

WORKER = Path(__file__).with_name("_kb_worker.py")
REPO = Path(costeer_lab.__file__).resolve().parents[1]
N = 40


def _run_two_workers(url: str, sync: Path) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), url, str(w), str(N), str(sync)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for w in (0, 1)
    ]
    (sync / "go").touch()  # both start writing at once
    done = []
    try:
        for proc in procs:
            done.append(proc.communicate(timeout=300))
    finally:  # one failed or hung: the other is not left running
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    reports = []
    for w, (proc, (out, err)) in enumerate(zip(procs, done, strict=True)):
        assert proc.returncode == 0, f"worker {w} failed:\n{err}"
        reports.append(json.loads(out))
    return reports


def test_two_processes_share_one_postgres_kb(postgres_url: str, tmp_path: Path) -> None:
    reports = _run_two_workers(postgres_url, tmp_path)
    solved_each = len(range(0, N, 2))
    for report in reports:  # each worker, after a reload, sees all of the other's knowledge
        assert report["attempts_of_other"] == N
        assert report["other_solved"] == solved_each
        assert report["other_found_by_search"] == N
        assert report["shared_runs"] == ["run0", "run1"]
        assert report["stats"]["attempts"] == 2 * N + 2
    with PostgresStore(postgres_url) as store:  # a KB opened afterwards sees everything
        kb = open_kb(store=store, version="v2", embedder="hashing")
        assert isinstance(kb, KnowledgeBaseV2)
        assert kb.stats() == reports[0]["stats"] == reports[1]["stats"]
        assert kb.stats()["nodes.task_description"] == 2 * N + 1
        assert kb.stats()["solved_task_descriptions"] == 2 * solved_each + 1
        index = kb.graph.collections[TASK_DESCRIPTION]
        assert len(index) == 2 * N + 1
        assert store.collection_version(index.name) == index.index.source_version
        for w in (0, 1):
            for i in range(N):
                t = task(w, i)
                assert len(kb.task_attempts(f"run{w}", t.id)) == 1
                assert index.search_text(t.get_task_information(), 1).ids[0] == kb.td_of(t)
        assert sorted(kb.success[kb.td_of(shared_task())].runs) == ["run0", "run1"]
        assert store.count_records("kg_attempt") == 2 * N + 2


def test_v1_kb_on_postgres_sees_another_writers_knowledge(postgres_url: str) -> None:
    """KB V1 by URL: two KB objects (two connections) write; each sees the other's after a
    reload, and similarity retrieval finds every success."""
    from costeer_lab.knowledge import KnowledgeBaseV1
    from costeer_lab.records import Workspace

    from ._kb_worker import feedback

    kbs = [open_kb(store=postgres_url, version="v1", embedder="hashing") for _ in range(2)]
    try:
        assert all(isinstance(kb, KnowledgeBaseV1) and kb.owns_store for kb in kbs)
        for i in range(6):
            for w, kb in enumerate(kbs):
                kb.record(task(w, i), Workspace({"main.py": f"# {w}/{i}"}), feedback(i),
                          run_id=f"run{w}", attempt=1)  # fmt: skip
        for w, kb in enumerate(kbs):
            kb.reload()
            other = 1 - w
            assert kb.stats() == {"attempts": 12, "successful_tasks": 6}
            assert kb.is_solved(task(other, 2).id, run_id=f"run{other}")
            assert not kb.is_solved(task(other, 3).id, run_id=f"run{other}")
            text = task(other, 4).get_task_information()
            assert kb.similar_successful(text, 1)[0][0].task.id == task(other, 4).id
    finally:
        for kb in kbs:
            kb.close()
