"""Real processes against one SQLite file: concurrent writers, SIGKILL durability."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import costeer_lab
from costeer_lab.store import SQLiteStore

WORKER = Path(__file__).with_name("_worker.py")
REPO = Path(costeer_lab.__file__).resolve().parents[1]


def _spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _run_concurrently(mode: str, path: Path, workers: int, n: int) -> None:
    go = path.with_suffix(".go")
    procs = [_spawn(mode, str(path), str(w), str(n), str(go)) for w in range(workers)]
    go.touch()  # release all workers at once; they open the fresh file concurrently
    outputs = [p.communicate(timeout=120) for p in procs]
    for w, (proc, (out, err)) in enumerate(zip(procs, outputs, strict=True)):
        assert proc.returncode == 0, f"worker {w} failed:\n{err}"
        assert out.strip() == f"worker {w} done" and err == ""


def test_four_processes_write_4000_records(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"  # does not exist yet: the workers race to create it
    _run_concurrently("records", path, workers=4, n=1000)
    with SQLiteStore(path) as store:
        assert store.count_records("stress") == 4000
        for w in range(4):
            keys = [k for k, _ in store.iter_records("stress", where={"worker": w})]
            assert keys == [f"w{w}-{i}" for i in range(1000)]  # each worker's order is kept
        assert store.get_record("stress", "w3-999") == {"worker": 3, "i": 999}


def test_concurrent_vector_writes_bump_the_version_every_time(tmp_path: Path) -> None:
    path = tmp_path / "vectors.db"
    _run_concurrently("vectors", path, workers=2, n=100)
    with SQLiteStore(path) as store:
        ids, matrix, embedder = store.load_vectors("shared")
        assert len(ids) == 200 and matrix.shape == (200, 4) and embedder == "e@1:4"
        assert store.collection_version("shared") == 200


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkilled_writer_loses_no_returned_write(tmp_path: Path) -> None:
    path = tmp_path / "durable.db"
    proc = _spawn("forever", str(path))
    assert proc.stdout is not None
    printed: list[str] = []
    try:
        for line in proc.stdout:
            printed.append(line.strip())
            if len(printed) >= 300:
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        rest, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, err
    printed += rest.split("\n")[:-1]  # complete lines only: the last one may be cut short
    assert printed[:300] == [f"k{i}" for i in range(300)]
    conn = sqlite3.connect(path)  # a raw integrity check first, as the WAL is recovered
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        conn.close()
    with SQLiteStore(path) as store:
        stored = {k for k, _ in store.iter_records("durable")}
        missing = [k for k in printed if k not in stored]
        assert missing == []
        assert len(stored) >= len(printed)
