"""Schema version 6 (``store/_interned.py``): node ids and edge endpoints interned as integers.

A version-5 store holding nodes, edges (one to an endpoint that is no node), a snapshot and
logged changes since it migrates in place on both backends: every row, edge ``seq``, the
snapshot's view, its diff and its rollback come out as before, with text ids.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.store import SCHEMA_VERSION, BaseStore, EdgeRecord, NodeRecord, get_store
from costeer_lab.store._migrations import MIGRATIONS, migrate

_NODE = "INSERT INTO nodes (id, kind, content, attrs, created_at, updated_at) VALUES ({})"
_EDGE = "INSERT INTO edges (src, dst, kind, attrs, created_at) VALUES ({})"
_SNAP_NODE = (
    "INSERT INTO snap_nodes (tag, existed, seq, id, kind, content, attrs, created_at, "
    "updated_at) VALUES ({})"
)
_SNAP_EDGE = (
    "INSERT INTO snap_edges (tag, existed, seq, src, dst, kind, attrs, created_at) VALUES ({})"
)


def _write_version_5(execute: Any, p: str) -> None:
    """A v5 store: n1, n2; edges n1->n2 and n2->ghost; snapshot ``s``; then (logged as a v5
    trigger would) n1's content changed, n3 added, edge n1->n2 removed, edge n3->n1 added."""

    def values(n: int) -> str:
        return ", ".join([p] * n)

    execute(_NODE.format(values(6)), ("n1", "component", "one", "{}", 1.0, 1.0))
    execute(_NODE.format(values(6)), ("n2", "component", "two", '{"w": 2}', 2.0, 2.0))
    execute(_EDGE.format(values(5)), ("n1", "n2", "has", '{"w": 1}', 3.0))
    execute(_EDGE.format(values(5)), ("n2", "ghost", "uses", "{}", 4.0))
    execute("UPDATE snapshot_clock SET epoch = 1")
    execute(
        f"INSERT INTO snapshots (epoch, name, parent, created_at) VALUES ({values(4)})",
        (1, "s", None, 5.0),
    )
    # after the snapshot: the changes and their pre-images
    execute(
        f"INSERT INTO snap_nodes (tag, existed, seq, id, kind, content, attrs, created_at, "
        f"updated_at) SELECT 1, 1, seq, id, kind, content, attrs, created_at, updated_at "
        f"FROM nodes WHERE id = {p}",
        ("n1",),
    )
    execute(f"UPDATE nodes SET content = {p}, updated_at = 6.0 WHERE id = {p}", ("uno", "n1"))
    execute(_NODE.format(values(6)), ("n3", "error", "three", "{}", 7.0, 7.0))
    execute(f"INSERT INTO snap_nodes (tag, existed, id) VALUES (1, 0, {p})", ("n3",))
    execute(
        "INSERT INTO snap_edges (tag, existed, seq, src, dst, kind, attrs, created_at) "
        f"SELECT 1, 1, seq, src, dst, kind, attrs, created_at FROM edges WHERE src = {p}",
        ("n1",),
    )
    execute(f"DELETE FROM edges WHERE src = {p}", ("n1",))
    execute(_EDGE.format(values(5)), ("n3", "n1", "hit", "{}", 8.0))
    execute(
        f"INSERT INTO snap_edges (tag, existed, src, dst, kind) VALUES (1, 0, {p}, {p}, {p})",
        ("n3", "n1", "hit"),
    )


def _nodes(store: BaseStore) -> list[tuple[str, str, str, dict[str, Any]]]:
    return [(n.id, n.kind, n.content, n.attrs) for n in store.iter_nodes()]


def _edges(store: BaseStore) -> list[tuple[str, str, str, dict[str, Any]]]:
    return [(e.src, e.dst, e.kind, e.attrs) for e in store.iter_edges()]


def _check_migrated(store: BaseStore) -> None:
    assert store.schema_version == SCHEMA_VERSION == 6
    assert _nodes(store) == [
        ("n1", "component", "uno", {}),
        ("n2", "component", "two", {"w": 2}),
        ("n3", "error", "three", {}),
    ]
    assert _edges(store) == [("n2", "ghost", "uses", {}), ("n3", "n1", "hit", {})]
    assert [e.kind for e in store.iter_edges(node="n1")] == ["hit"]
    assert [e.dst for e in store.iter_edges(node="ghost")] == ["ghost"]
    nodes, edges = store.diff("s").tables["nodes"], store.diff("s").tables["edges"]
    assert (nodes.added, nodes.changed, nodes.removed) == ((("n3",),), (("n1",),), ())
    assert (edges.added, edges.changed) == ((("n3", "n1", "hit"),), ())
    assert edges.removed == (("n1", "n2", "has"),)
    if not store.url.startswith("sqlite:///:memory:"):
        with store.at_snapshot("s") as view:
            assert _nodes(view) == [
                ("n1", "component", "one", {}),
                ("n2", "component", "two", {"w": 2}),
            ]
            assert _edges(view) == [("n1", "n2", "has", {"w": 1}), ("n2", "ghost", "uses", {})]
            assert view.get_node("n1").content == "one"  # type: ignore[union-attr]
    store.rollback("s")
    assert _nodes(store) == [("n1", "component", "one", {}), ("n2", "component", "two", {"w": 2})]
    assert _edges(store) == [("n1", "n2", "has", {"w": 1}), ("n2", "ghost", "uses", {})]
    # and it keeps working: new rows, a new edge between old and new ids, deletes
    store.put_nodes([NodeRecord("n4", "trace", "four")])
    store.put_edges([EdgeRecord("n4", "n1", "trace_of"), EdgeRecord("n4", "n2", "trace_of")])
    assert store.delete_edges([("n4", "n2", "trace_of")]) == 1
    assert store.delete_nodes(["n2"]) == 1  # and its edges
    assert _edges(store) == [("n4", "n1", "trace_of", {})]
    assert [n.id for n in store.iter_nodes()] == ["n1", "n4"]


def test_a_version_5_sqlite_store_migrates_with_its_snapshot_log(tmp_path: Path) -> None:
    path = tmp_path / "v5.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, str(path), MIGRATIONS[:5])
    _write_version_5(lambda sql, params=(): conn.execute(sql, params), "?")
    conn.close()
    with get_store(f"sqlite:///{path}") as store:
        _check_migrated(store)
    conn = sqlite3.connect(path)  # the old layout and the set-aside logs are gone
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "ids" in tables and not {t for t in tables if t.endswith(("_v5", "_v6"))}
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"nodes_kind", "edges_dst", "edges_kind", "snap_nodes_key", "snap_edges_key"} <= indexes
    conn.close()


def test_a_version_5_postgres_store_migrates_with_its_snapshot_log(postgres_url: str) -> None:
    import psycopg

    from costeer_lab.store._postgres_schema import PG_MIGRATIONS, migrate_postgres

    with psycopg.connect(postgres_url, autocommit=True) as pg:
        migrate_postgres(pg, "public", "test", PG_MIGRATIONS[:5])
        _write_version_5(lambda sql, params=(): pg.execute(sql, params), "%s")
    with get_store(postgres_url) as store:
        _check_migrated(store)
        store.put_edges([EdgeRecord("n1", "n4", "later")])  # the identity goes on after the max
        seqs = [r[0] for r in store._rows("SELECT seq FROM edges ORDER BY seq")]  # type: ignore[attr-defined]
        assert len(seqs) == len(set(seqs)) == 2


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_new_edges_and_nodes_append_to_the_integer_keys(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """An endpoint first seen in an edge gets its number then; the node written later keeps
    it, so the node reads back under its id and ``iter_nodes`` goes in order of first sight."""
    url = (
        f"sqlite:///{tmp_path / 'kb.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    with get_store(url) as store:
        store.put_edges([EdgeRecord("a", "b", "k")])
        store.put_nodes([NodeRecord("b", "component", "B"), NodeRecord("c", "component", "C")])
        store.put_nodes([NodeRecord("a", "component", "A")])
        assert [n.id for n in store.iter_nodes()] == ["a", "b", "c"]
        assert [n.content for n in store.get_nodes(["c", "a", "zz"])] == ["C", "A"]
        numbers = store._rows("SELECT id, seq FROM ids ORDER BY seq")  # type: ignore[attr-defined]
        assert [r[0] for r in numbers] == ["a", "b", "c"]
        edge = store._rows("SELECT src, dst FROM edges")  # type: ignore[attr-defined]
        assert [tuple(r) for r in edge] == [(numbers[0][1], numbers[1][1])]
        store.delete_nodes(["a"])  # the id keeps its number: a node written again reuses it
        store.put_nodes([NodeRecord("a", "component", "A2")])
        assert store._rows("SELECT count(*) FROM ids")[0][0] == 3  # type: ignore[attr-defined]
        assert store.get_node("a").content == "A2"  # type: ignore[union-attr]
        assert list(store.iter_edges()) == []  # deleting the node deleted its edge
