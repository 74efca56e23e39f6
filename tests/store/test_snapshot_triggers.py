"""The undo-log triggers exist (SQLite) or are enabled (PostgreSQL) exactly while a snapshot does.

Both backends, real files and a real server: the first snapshot arms them in its own
transaction, dropping the last disarms them, a snapshot rolled back with its transaction leaves
none, writes of another connection right after the snapshot are logged, and a schema-4 store
is brought to that rule by its migration.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from costeer_lab.store import BaseStore, NodeRecord, get_store
from costeer_lab.store._migrations import MIGRATIONS, migrate
from costeer_lab.store._snapshot_schema import arm_sqlite_triggers

from ._openers import Opener


def _armed(store: BaseStore) -> int:
    """How many versioned tables have a live undo-log trigger (0 or 5)."""
    conn = store._connection()  # type: ignore[attr-defined]
    if store.url.startswith("sqlite"):
        row = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name GLOB "
            "'snap_*_insert'"
        ).fetchone()
    else:
        row = conn.execute(
            "SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE t.tgname = 'snap_log' "
            "AND n.nspname = current_schema() AND t.tgenabled <> 'D'"
        ).fetchone()
    return int(row[0])


def _logged(store: BaseStore) -> int:
    conn = store._connection()  # type: ignore[attr-defined]
    return int(conn.execute("SELECT count(*) FROM snap_nodes").fetchone()[0])


def test_triggers_live_only_while_a_snapshot_exists(opener: Opener) -> None:
    store = opener()
    store.put_nodes([NodeRecord("n1", "component", "a")])
    assert _armed(store) == 0
    assert _logged(store) == 0  # a write with no snapshot logs nothing
    store.snapshot("a")
    assert _armed(store) == 5
    store.snapshot("b")
    store.put_nodes([NodeRecord("n1", "component", "changed")])
    assert _logged(store) == 1
    store.drop_snapshot("a")
    assert _armed(store) == 5  # "b" still needs the log
    store.drop_snapshot("b")
    assert _armed(store) == 0
    store.put_nodes([NodeRecord("n2", "component", "b")])
    assert _logged(store) == 0
    store.snapshot("c")
    store.put_nodes([NodeRecord("n3", "component", "c")])
    assert store.rollback("c") == []
    assert _armed(store) == 5  # a rollback keeps its snapshot, so the log goes on
    assert store.count_nodes() == 2


def test_a_snapshot_undone_with_its_transaction_leaves_no_trigger(opener: Opener) -> None:
    store = opener()
    with pytest.raises(RuntimeError, match="undo"), store.transaction():
        store.snapshot("a")
        assert _armed(store) == 5
        raise RuntimeError("undo")
    assert store.snapshots() == []
    assert _armed(store) == 0


def test_another_connection_writes_around_the_first_snapshot(opener: Opener) -> None:
    """A writer holding its transaction while the snapshot is asked for lands before it; its
    next write, after the snapshot, is logged (no write falls between the mark and the log)."""
    store, other = opener(), opener()
    taken = threading.Event()
    errors: list[BaseException] = []

    def take() -> None:  # its own connection, opened in its thread
        try:
            with get_store(store.url) as taker:
                taker.snapshot("s")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        taken.set()

    with other.transaction():
        other.put_nodes([NodeRecord("before", "component", "x")])
        worker = threading.Thread(target=take)
        worker.start()  # waits for the write lock other holds
        other.put_nodes([NodeRecord("before2", "component", "y")])
    worker.join(timeout=120)
    assert taken.is_set() and not errors
    other.put_nodes([NodeRecord("after", "component", "z")])
    assert store.diff("s").tables["nodes"].added == (("after",),)
    store.rollback("s")
    assert sorted(n.id for n in store.iter_nodes()) == ["before", "before2"]


def test_a_schema_4_sqlite_store_drops_or_keeps_its_triggers(tmp_path: Path) -> None:
    plain, marked = tmp_path / "plain.db", tmp_path / "marked.db"
    for path in (plain, marked):
        conn = sqlite3.connect(path, isolation_level=None)
        migrate(conn, str(path), MIGRATIONS[:4])
        arm_sqlite_triggers(conn, True)  # schema 4 always had them
        if path == marked:  # a snapshot taken by schema-4 code
            conn.execute("UPDATE snapshot_clock SET epoch = 1")
            conn.execute("INSERT INTO snapshots VALUES (1, 'old', NULL, 0)")
        conn.close()
    with get_store(f"sqlite:///{plain}") as store:
        assert _armed(store) == 0
    with get_store(f"sqlite:///{marked}") as store:
        assert _armed(store) == 5
        store.put_nodes([NodeRecord("n", "component", "a")])
        assert store.diff("old").tables["nodes"].added == (("n",),)


def test_a_schema_4_postgres_store_disables_or_keeps_its_trigger(postgres_url: str) -> None:
    import psycopg

    from costeer_lab.store._postgres_schema import PG_MIGRATIONS, migrate_postgres
    from costeer_lab.store._snapshot_schema import arm_postgres_triggers

    for marked in (False, True):
        schema = "marked" if marked else "plain"
        with psycopg.connect(postgres_url, autocommit=True) as pg:
            pg.execute(f"CREATE SCHEMA {schema}")
            pg.execute(f"SET search_path TO {schema}, public")
            migrate_postgres(pg, schema, "test", PG_MIGRATIONS[:4])
            arm_postgres_triggers(pg, f'"{schema}".', True)  # schema 4 always had it on
            if marked:
                pg.execute("UPDATE snapshot_clock SET epoch = 1")
                pg.execute("INSERT INTO snapshots VALUES (1, 'old', NULL, 0)")
        sep = "&" if "?" in postgres_url else "?"
        with get_store(f"{postgres_url}{sep}schema={schema}") as store:
            assert _armed(store) == (5 if marked else 0)
            if marked:
                store.put_nodes([NodeRecord("n", "component", "a")])
                assert store.diff("old").tables["nodes"].added == (("n",),)
