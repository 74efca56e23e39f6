"""Schema versions: newer files are refused, older ones migrate in place."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from costeer_lab.errors import SchemaVersionError, StoreError
from costeer_lab.store import SCHEMA_VERSION, SQLiteStore
from costeer_lab.store._migrations import MIGRATIONS, migrate, read_schema_version


def _set_version(path: Path, version: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
    conn.commit()
    conn.close()


def test_newer_schema_is_refused_naming_both_versions(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    with SQLiteStore(path) as store:
        store.put_record("rec", "k", 1)
    _set_version(path, SCHEMA_VERSION + 1)
    with pytest.raises(SchemaVersionError) as info:
        SQLiteStore(path)
    message = str(info.value)
    assert f"schema version {SCHEMA_VERSION + 1}" in message
    assert f"up to {SCHEMA_VERSION}" in message
    assert "upgrade costeer_lab" in message and "future.db" in message
    _set_version(path, SCHEMA_VERSION)  # the refusal did not touch the file
    with SQLiteStore(path) as store:
        assert store.get_record("rec", "k") == 1


def test_empty_version_zero_file_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "v0.db"
    conn = sqlite3.connect(path)  # a SQLite file with nothing in it is version 0
    conn.execute("PRAGMA user_version = 0")
    conn.commit()
    conn.close()
    with SQLiteStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        store.put_record("rec", "k", 1)


def test_meta_table_without_version_counts_as_zero(tmp_path: Path) -> None:
    path = tmp_path / "v0meta.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('owner', 'me')")
    conn.commit()
    conn.close()
    with SQLiteStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.get_meta("owner") == "me"


def test_garbled_version_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = 'two' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="'two'"):
        SQLiteStore(path)


def _add_column(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE records ADD COLUMN note TEXT DEFAULT 'migrated'")


def _fail(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE half_done (x INTEGER)")
    raise RuntimeError("step 3 failed")


def test_later_steps_upgrade_an_old_file_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with SQLiteStore(path) as store:  # a version-1 file with data
        store.put_record("rec", "k", {"v": 1})
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert migrate(conn, str(path), [*MIGRATIONS, _add_column]) == len(MIGRATIONS) + 1
        assert read_schema_version(conn, str(path)) == len(MIGRATIONS) + 1
        assert conn.execute("SELECT key, note FROM records").fetchall() == [("k", "migrated")]
        # running again is a no-op
        assert migrate(conn, str(path), [*MIGRATIONS, _add_column]) == len(MIGRATIONS) + 1
    finally:
        conn.close()


def test_a_failing_step_leaves_the_file_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        with pytest.raises(RuntimeError, match="step 3"):
            migrate(conn, str(path), [*MIGRATIONS, _add_column, _fail])
        assert read_schema_version(conn, str(path)) == SCHEMA_VERSION
        columns = [row[1] for row in conn.execute("PRAGMA table_info(records)")]
        assert "note" not in columns
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
        assert "half_done" not in tables
    finally:
        conn.close()


def test_version_one_collections_get_an_etag(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, str(path), MIGRATIONS[:1])  # a file of schema version 1 holding a collection
    conn.execute("INSERT INTO collections (name, version) VALUES ('kg:x', 7), ('kg:y', 7)")
    conn.close()
    with SQLiteStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION >= 2
        (vx, tx), (vy, ty) = store.collection_state("kg:x"), store.collection_state("kg:y")
        assert vx == vy == 7 and len(tx) == len(ty) == 16 and tx != ty
