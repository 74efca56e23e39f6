"""Real processes against one store, on a SQLite file and on PostgreSQL: concurrent writers,
collection versions under concurrency, and SIGKILL durability."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from costeer_lab.store import get_store
from tests._processes import kill_after_lines, spawn

WORKER = Path(__file__).with_name("_worker.py")
BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the workers write: a SQLite file that does not exist yet, or a fresh PostgreSQL
    database (pgvector enabled, no store tables yet: the workers race to create them)."""
    if request.param == "sqlite":
        return str(tmp_path / "shared.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


def _spawn(*args: str) -> subprocess.Popen[str]:
    return spawn(WORKER, *args)


def _run_concurrently(mode: str, target: str, go: Path, workers: int, n: int) -> None:
    procs = [_spawn(mode, target, str(w), str(n), str(go)) for w in range(workers)]
    go.touch()  # release all workers at once; they open the fresh store concurrently
    outputs = [p.communicate(timeout=300) for p in procs]
    for w, (proc, (out, err)) in enumerate(zip(procs, outputs, strict=True)):
        assert proc.returncode == 0, f"worker {w} failed:\n{err}"
        assert out.strip() == f"worker {w} done" and err == ""


def test_four_processes_write_4000_records(target: str, tmp_path: Path) -> None:
    _run_concurrently("records", target, tmp_path / "go", workers=4, n=1000)
    with get_store(target) as store:
        assert store.count_records("stress") == 4000
        for w in range(4):
            keys = [k for k, _ in store.iter_records("stress", where={"worker": w})]
            assert keys == [f"w{w}-{i}" for i in range(1000)]  # each worker's order is kept
        assert store.get_record("stress", "w3-999") == {"worker": 3, "i": 999}


def test_concurrent_vector_writes_bump_the_version_every_time(target: str, tmp_path: Path) -> None:
    _run_concurrently("vectors", target, tmp_path / "go", workers=2, n=100)
    with get_store(target) as store:
        ids, matrix, embedder = store.load_vectors("shared")
        assert len(ids) == 200 and matrix.shape == (200, 4) and embedder == "e@1:4"
        assert store.collection_version("shared") == 200


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkilled_writer_loses_no_returned_write(target: str) -> None:
    proc = _spawn("forever", target)
    printed = kill_after_lines(proc, 300)
    assert printed[:300] == [f"k{i}" for i in range(300)]
    if "://" not in target:
        conn = sqlite3.connect(target)  # a raw integrity check first, as the WAL is recovered
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        finally:
            conn.close()
    with get_store(target) as store:
        stored = {k for k, _ in store.iter_records("durable")}
        missing = [k for k in printed if k not in stored]
        assert missing == []
        assert len(stored) >= len(printed)
        store.put_record("durable", "after", {"i": -1})  # the store takes writes again
        assert store.get_record("durable", "after") == {"i": -1}
