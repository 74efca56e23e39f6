"""SQLiteStore: the shared backend suite on a file and in memory, plus SQLite specifics."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from costeer_lab.errors import InvalidInputError, StoreError
from costeer_lab.store import SCHEMA_VERSION, EdgeRecord, NodeRecord, SQLiteStore, get_store
from costeer_lab.testing import StoreTestSuite


class TestSQLiteFile(StoreTestSuite):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[SQLiteStore]:
        with SQLiteStore(tmp_path / "lab.db") as store:
            yield store


class TestSQLiteMemory(StoreTestSuite):
    @pytest.fixture
    def store(self) -> Iterator[SQLiteStore]:
        with SQLiteStore(":memory:") as store:
            yield store


def test_data_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "lab.db"
    with SQLiteStore(path) as store:
        store.put_nodes([NodeRecord("n", "component", "ünï", {"a": [1]})])
        store.put_edges([EdgeRecord("n", "m", "r")])
        store.put_record("rec", "k", {"v": 1})
        store.put_vectors("c", "e@1:2", ["x"], np.array([[0.5, -1.5]], dtype=np.float32))
        store.set_meta("owner", "me")
        version = store.collection_version("c")
    with SQLiteStore(str(path)) as store:
        node = store.get_node("n")
        assert node is not None
        assert (node.kind, node.content, node.attrs) == ("component", "ünï", {"a": [1]})
        assert store.count_edges() == 1
        assert store.get_record("rec", "k") == {"v": 1}
        assert store.load_vectors("c")[1].tolist() == [[0.5, -1.5]]
        assert store.collection_version("c") == version
        assert store.get_meta("owner") == "me"
        assert store.schema_version == SCHEMA_VERSION


def test_file_is_in_wal_mode_with_the_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "lab.db"
    SQLiteStore(path, synchronous="FULL").close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert row == (str(SCHEMA_VERSION),)
    finally:
        conn.close()


def test_url_reopens_the_same_file(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "a.db") as store:
        store.put_record("rec", "k", 1)
        assert store.url == f"sqlite:///{tmp_path / 'a.db'}"
        with get_store(store.url) as again:
            assert again.get_record("rec", "k") == 1
    with SQLiteStore() as memory:
        assert memory.url == "sqlite:///:memory:"


def test_uncommitted_writes_are_invisible_to_other_connections(tmp_path: Path) -> None:
    path = tmp_path / "lab.db"
    with SQLiteStore(path) as writer, SQLiteStore(path, busy_timeout_s=0.05) as reader:
        with writer.transaction():
            writer.put_record("rec", "k", 1)
            assert reader.get_record("rec", "k") is None  # WAL: readers are not blocked
            with pytest.raises(StoreError, match="locked"):
                reader.put_record("rec", "other", 2)  # a second writer waits, then gives up
        assert reader.get_record("rec", "k") == 1


def test_not_a_database_names_the_path(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.db"
    bogus.write_text("this is not a database " * 100)
    with pytest.raises(StoreError, match=r"notes\.db"):
        SQLiteStore(bogus)
    with pytest.raises(StoreError, match="directory"):
        SQLiteStore(tmp_path)
    with pytest.raises(StoreError, match="missing"):
        SQLiteStore(tmp_path / "missing" / "x.db")  # SQLiteStore does not create directories


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=r"not a costeer_lab store.*users"):
        SQLiteStore(path)


def test_reserved_meta_key_and_bad_arguments() -> None:
    with SQLiteStore() as store:
        with pytest.raises(InvalidInputError, match="reserved"):
            store.set_meta("schema_version", "99")
        assert store.schema_version == SCHEMA_VERSION
    with pytest.raises(InvalidInputError, match="synchronous"):
        SQLiteStore(synchronous="OFF")  # type: ignore[arg-type]


def test_large_batches_in_one_transaction() -> None:
    n = 20_000
    with SQLiteStore() as store:
        with store.transaction():
            store.put_nodes(NodeRecord(f"n{i}", "k" if i % 2 else "j", f"c{i}") for i in range(n))
            store.put_edges(EdgeRecord(f"n{i}", f"n{i + 1}", "next") for i in range(n - 1))
        assert store.count_nodes() == n and store.count_nodes("k") == n // 2
        assert sum(1 for _ in store.iter_edges(kind="next")) == n - 1
        assert [e.dst for e in store.iter_edges(node="n500")] == ["n500", "n501"]
        assert store.delete_nodes([f"n{i}" for i in range(0, n, 2)]) == n // 2
        assert store.count_edges() == 0


def test_a_store_object_belongs_to_its_thread(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    with SQLiteStore(tmp_path / "lab.db") as store:

        def use() -> None:
            try:
                store.get_record("rec", "k")
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=use)
        thread.start()
        thread.join()
        assert len(errors) == 1 and isinstance(errors[0], StoreError)
        assert "thread" in str(errors[0])
        store.put_record("rec", "k", 1)  # still fine in the owning thread


def test_sqlite_errors_in_user_code_are_not_rewrapped(tmp_path: Path) -> None:
    other = sqlite3.connect(":memory:")
    with SQLiteStore(tmp_path / "lab.db") as store:
        with pytest.raises(sqlite3.OperationalError), store.transaction():
            store.put_record("rec", "k", 1)
            other.execute("SELECT * FROM no_such_table")
        assert store.get_record("rec", "k") is None
    other.close()
