"""``BaseStore.bulk_writes``: SQLite tunes its page cache and WAL checkpoints for the block and
restores them after; what is written, and when it is durable, is what the same writes leave
without it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from costeer_lab.store import NodeRecord, SQLiteStore
from costeer_lab.store._sqlite_base import BULK_CACHE_KIB, BULK_CHECKPOINT_PAGES


def _pragmas(store: SQLiteStore) -> tuple[int, int, int]:
    conn = store._connection()
    cache, ckpt, timeout = (
        int(conn.execute(f"PRAGMA {p}").fetchone()[0])
        for p in ("cache_size", "wal_autocheckpoint", "busy_timeout")
    )
    return cache, ckpt, timeout


def _write(store: SQLiteStore, lo: int, hi: int) -> None:
    with store.transaction():
        store.put_nodes(NodeRecord(f"n{i}", "component", f"c{i}", {"i": i}) for i in range(lo, hi))
        store.put_records("r", [(f"k{i}", {"i": i}) for i in range(lo, hi)])


def _rows(path: Path) -> list[list[tuple[object, ...]]]:
    conn = sqlite3.connect(path)
    try:
        return [
            conn.execute(
                "SELECT n.seq, i.id, kind, content, attrs FROM nodes n JOIN ids i USING (seq) "
                "ORDER BY n.seq"
            ).fetchall(),
            conn.execute("SELECT seq, kind, key, data FROM records ORDER BY seq").fetchall(),
        ]
    finally:
        conn.close()


def test_settings_inside_and_restored_after(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "a.db")
    before = _pragmas(store)
    with store.bulk_writes():
        cache, ckpt, timeout = _pragmas(store)
        assert (cache, ckpt, timeout) == (-BULK_CACHE_KIB, BULK_CHECKPOINT_PAGES, before[2])
        with store.bulk_writes():  # nested: the outer settings come back at its end
            _write(store, 0, 10)
        assert _pragmas(store) == (cache, ckpt, timeout)
    assert _pragmas(store) == before
    store.close()


def test_same_rows_and_wal_truncated(tmp_path: Path) -> None:
    plain, bulk = SQLiteStore(tmp_path / "plain.db"), SQLiteStore(tmp_path / "bulk.db")
    for lo in range(0, 3000, 1000):
        _write(plain, lo, lo + 1000)
    with bulk.bulk_writes():
        for lo in range(0, 3000, 1000):
            _write(bulk, lo, lo + 1000)
        assert (tmp_path / "bulk.db-wal").stat().st_size > 0  # not checkpointed yet
    assert (tmp_path / "bulk.db-wal").stat().st_size == 0  # truncated at the end
    for s in (plain, bulk):
        s.close()
    assert _rows(tmp_path / "bulk.db") == _rows(tmp_path / "plain.db")


def test_other_reader_does_not_block_the_end(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "a.db", busy_timeout_s=30)
    reader = sqlite3.connect(tmp_path / "a.db", isolation_level=None)
    try:
        with store.bulk_writes():
            _write(store, 0, 500)
            reader.execute("BEGIN")
            assert reader.execute("SELECT COUNT(*) FROM nodes").fetchone()[0] == 500
            _write(store, 500, 1000)  # the reader's snapshot pins the WAL: no truncation
        assert _pragmas(store)[2] == 30_000  # returned at once, busy timeout restored
        reader.execute("COMMIT")
        assert store.count_nodes() == 1000
    finally:
        reader.close()
        store.close()


def test_committed_writes_survive_an_error_in_the_block(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "a.db")
    before = _pragmas(store)
    with pytest.raises(RuntimeError, match="stop"), store.bulk_writes():
        _write(store, 0, 5)
        raise RuntimeError("stop")
    assert _pragmas(store) == before
    store.close()
    assert len(_rows(tmp_path / "a.db")[0]) == 5


def test_read_only_and_memory_stores(tmp_path: Path) -> None:
    mem = SQLiteStore(":memory:")
    with mem.bulk_writes():
        _write(mem, 0, 3)
    assert mem.count_nodes() == 3
    SQLiteStore(tmp_path / "a.db").close()
    ro = SQLiteStore(tmp_path / "a.db", read_only=True)
    before = _pragmas(ro)
    with ro.bulk_writes():  # nothing to tune for a store that never writes
        assert ro.count_nodes() == 0
    assert _pragmas(ro) == before
    ro.close()
