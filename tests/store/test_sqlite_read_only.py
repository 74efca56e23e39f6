"""Read-only stores (``kb stats`` / ``kb query``): real SQLite files, a real second process
holding the lock, and the files compared byte for byte before and after."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.embed import get_embedder
from costeer_lab.errors import StoreError, StoreLockedError
from costeer_lab.graph import collection_name
from costeer_lab.index import VectorCollection
from costeer_lab.store import NodeRecord, SQLiteStore, open_existing_store

REPO_ROOT = Path(__file__).resolve().parents[2]
LOCKED = "is locked by another process (a run still writing?); try again when it ends"

# Holds a lock on argv[1] until its stdin closes: argv[2] is "rollback" (BEGIN EXCLUSIVE on a
# rollback-journal file) or "wal-exclusive" (a WAL writer in exclusive locking mode).
_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "wal-exclusive":
    conn.execute("PRAGMA locking_mode = EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("INSERT INTO meta(key, value) VALUES ('held', '1')")
if sys.argv[2] == "wal-exclusive":
    conn.execute("COMMIT")  # exclusive locking mode keeps the lock after the commit
print("held", flush=True)
sys.stdin.read()
"""


def _kb(path: Path) -> Path:
    """A small real knowledge base: two component nodes with hashing vectors (WAL, closed)."""
    with SQLiteStore(path) as store:
        store.put_nodes(
            [
                NodeRecord("c1", "component", "op:mean"),
                NodeRecord("c2", "component", "field:close"),
            ]
        )
        col = VectorCollection(store, collection_name("component"), get_embedder("hashing"))
        col.upsert_texts(["c1", "c2"], ["op:mean", "field:close"])
    return path


def _state(folder: Path, *, shm: bool = True) -> dict[str, tuple[str, int]]:
    """Every file of ``folder``: sha256 and mtime (a rewrite or a new file shows).

    ``shm=False`` leaves out the contents of an existing ``-shm`` file: the shared-memory index
    of a live WAL database, where every reader (read-only ones too) records its read mark; it
    holds no data, and SQLite rebuilds it from the database and the WAL.
    """
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        if shm or not p.name.endswith("-shm")
        else ("shm", 0)
        for p in sorted(folder.iterdir())
    }


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "costeer_lab", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def holder() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()
        proc.wait(timeout=60)


def _hold(procs: list[subprocess.Popen[str]], path: Path, how: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), how],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    procs.append(proc)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"


def test_kb_commands_on_a_closed_wal_store_write_and_create_nothing(tmp_path: Path) -> None:
    _kb(tmp_path / "kb.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb.db"]  # closed: no -wal, -shm
    before = _state(tmp_path)
    stats = _cli("kb", "stats", "kb.db", cwd=tmp_path)
    assert stats.returncode == 0, stats.stderr
    assert "nodes.component" in stats.stdout and " 2" in stats.stdout
    # a query text never embedded before: a read-write open would cache its vector
    query = _cli(
        "kb", "query", "kb.db", "a brand new query text", "--kind", "component", cwd=tmp_path
    )
    assert query.returncode == 0, query.stderr
    assert "component" in query.stdout
    assert _state(tmp_path) == before


def test_kb_stats_reads_a_store_that_a_writer_has_open(tmp_path: Path) -> None:
    """WAL readers do not wait for writers: a live run's store is read, nothing written."""
    path = _kb(tmp_path / "kb.db")
    writer = SQLiteStore(path)
    try:
        writer.put_nodes([NodeRecord("c3", "component", "op:std")])
        assert (tmp_path / "kb.db-wal").exists()  # the open writer keeps its WAL
        with writer.transaction():  # an uncommitted write in progress
            writer.put_nodes([NodeRecord("c4", "component", "op:max")])
            before = _state(tmp_path, shm=False)
            out = _cli("kb", "stats", "kb.db", "--json", cwd=tmp_path)
            assert _state(tmp_path, shm=False) == before
    finally:
        writer.close()
    assert out.returncode == 0, out.stderr
    assert '"nodes.component": 3' in out.stdout  # committed rows only


@pytest.mark.parametrize("how", ["rollback", "wal-exclusive"])
@pytest.mark.parametrize("command", ["stats", "query"])
def test_a_store_locked_by_another_process_ends_in_one_line_exit_2(
    tmp_path: Path, holder: list[subprocess.Popen[str]], how: str, command: str
) -> None:
    path = _kb(tmp_path / "kb.db")
    if how == "rollback":
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
        conn.close()
    _hold(holder, path, how)
    before = _state(tmp_path)
    argv = ["kb", "stats", "kb.db"] if command == "stats" else ["kb", "query", "kb.db", "mean"]
    out = _cli(*argv, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.splitlines() == [f"costeer-lab: error: kb.db {LOCKED}"]
    assert _state(tmp_path) == before


def test_the_lock_is_reported_by_the_library_too(
    tmp_path: Path, holder: list[subprocess.Popen[str]]
) -> None:
    path = _kb(tmp_path / "kb.db")
    _hold(holder, path, "wal-exclusive")
    with pytest.raises(StoreLockedError, match=r"kb\.db is locked by another process"):
        open_existing_store(path, busy_timeout_s=0.1)
    url = f"sqlite:///{path}?busy_timeout_s=0.1"
    with pytest.raises(StoreLockedError):
        open_existing_store(url)
    holder[0].stdin.close()  # type: ignore[union-attr]
    holder[0].wait(timeout=60)
    with open_existing_store(url) as store:  # the writer is gone: readable again
        assert store.get_meta("held") == "1"


def test_a_read_only_store_refuses_every_write(tmp_path: Path) -> None:
    path = _kb(tmp_path / "kb.db")
    before = _state(tmp_path)
    with open_existing_store(path) as store:
        assert store.read_only
        assert store.count_nodes("component") == 2
        with pytest.raises(StoreError, match="opened read-only"):
            store.put_nodes([NodeRecord("c9", "component", "op:min")])
        with pytest.raises(StoreError, match="opened read-only"):
            store.set_meta("note", "x")
        with pytest.raises(StoreError, match="opened read-only"), store.transaction():
            pass
    assert _state(tmp_path) == before


def test_a_wal_store_left_with_its_wal_file_is_read_with_its_last_commits(tmp_path: Path) -> None:
    """A writer that died leaves ``-wal``/``-shm`` holding commits: ``mode=ro`` reads them."""
    path = _kb(tmp_path / "kb.db")
    code = (
        "import os, sys\n"
        "from costeer_lab.store import NodeRecord, SQLiteStore\n"
        "s = SQLiteStore(sys.argv[1])\n"
        "s.put_nodes([NodeRecord('c3', 'component', 'op:std')])\n"
        "os._exit(0)  # no close: the WAL is not checkpointed nor removed\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    subprocess.run([sys.executable, "-c", code, str(path)], env=env, check=True, timeout=120)
    assert (tmp_path / "kb.db-wal").exists()
    before = _state(tmp_path, shm=False)
    with open_existing_store(path) as store:
        assert store.count_nodes("component") == 3
    assert _state(tmp_path, shm=False) == before


def test_a_read_only_open_of_an_older_schema_asks_for_a_migration(tmp_path: Path) -> None:
    path = _kb(tmp_path / "kb.db")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="older than"):
        SQLiteStore(path, read_only=True)
    with pytest.raises(StoreError, match="no such file"):
        SQLiteStore(tmp_path / "missing.db", read_only=True)
    assert not (tmp_path / "missing.db").exists()
