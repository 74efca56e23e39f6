"""Store snapshots on both backends: snapshot, view as of, diff, rollback (atomic), branch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from costeer_lab.errors import InvalidInputError, StoreError, UnknownNameError
from costeer_lab.store import SCHEMA_VERSION, BaseStore, EdgeRecord, NodeRecord, get_store
from costeer_lab.store._postgres_schema import PG_SCHEMA_VERSION

from ._openers import Opener


def _vec(*rows: list[float]) -> np.ndarray:
    return np.array(rows, dtype=np.float32)


def _fill(store: BaseStore) -> None:
    store.put_nodes([NodeRecord("n1", "component", "a"), NodeRecord("n9", "component", "z")])
    store.put_edges([EdgeRecord("n1", "n9", "rel")])
    store.put_records("note", [("k1", {"v": 1}), ("k2", {"v": 2})])
    store.put_vectors("c", "e@1:2", ["x", "y"], _vec([1, 0], [0, 1]))


def _change(store: BaseStore) -> None:
    store.put_nodes([NodeRecord("n1", "component", "b"), NodeRecord("n2", "error", "c")])
    store.delete_nodes(["n9"])  # and its edge
    store.put_records("note", [("k1", {"v": 10}), ("k3", {"v": 3})])
    store.put_records("note", [("k1", {"v": 11})])  # a second change of one key
    store.delete_records("note", ["k2"])
    store.put_record("other", "o", [1])
    store.put_vectors("c", "e@1:2", ["y", "w"], _vec([0.5, 0.5], [0, -1]))
    store.delete_vectors("c", ["x"])


def _state(store: BaseStore) -> dict[str, object]:
    ids, matrix, _ = store.load_vectors("c")
    return {
        "nodes": [(n.id, n.kind, n.content) for n in store.iter_nodes()],
        "edges": [(e.src, e.dst, e.kind) for e in store.iter_edges()],
        "note": list(store.iter_records("note")),
        "other": list(store.iter_records("other")),
        "vectors": (ids, matrix.tolist()),
        "counts": (store.count_nodes(), store.count_edges(), store.count_records("note")),
    }


def test_a_view_shows_the_snapshot_and_the_store_moves_on(opener: Opener) -> None:
    store = opener()
    _fill(store)
    before = _state(store)
    snap = store.snapshot("base")
    assert (snap.name, snap.parent) == ("base", None)
    _change(store)
    after = _state(store)
    assert after != before
    view = store.at_snapshot("base")
    try:
        assert _state(view) == before
        assert view.get_node("n1").content == "a"  # type: ignore[union-attr]
        assert view.get_records("note", ["k1", "k3"]) == {"k1": {"v": 1}}
        assert view.count_records("note", where={"v": 2}) == 1
        assert view.search_vectors("c", _vec([1, 0])[0], 1)[0][0] == "x"
        with pytest.raises(StoreError, match=r"snapshot view .base.*read-only"):
            view.put_record("note", "k4", 4)
        with pytest.raises(StoreError, match="read-only"):
            view.snapshot("again")
        store.put_record("note", "k5", 5)  # later writes do not reach the view
        assert _state(view) == before
    finally:
        view.close()


def test_diff_lists_added_changed_removed_and_ignores_rewrites(opener: Opener) -> None:
    store = opener()
    _fill(store)
    store.snapshot("a")
    _change(store)
    store.put_nodes([NodeRecord("n2", "error", "c")])  # the same content again
    d = store.diff("a")
    assert d.tables["nodes"].added == (("n2",),)
    assert d.tables["nodes"].changed == (("n1",),)
    assert d.tables["nodes"].removed == (("n9",),)
    assert d.tables["edges"].removed == (("n1", "n9", "rel"),)
    assert d.records("note").added == (("k3",),)
    assert d.records("note").changed == (("k1",),)
    assert d.records("note").removed == (("k2",),)
    assert d.records("other").added == (("o",),)
    assert d.tables["vectors"].added == (("c", "w"),)
    assert d.tables["vectors"].changed == (("c", "y"),)
    assert d.tables["vectors"].removed == (("c", "x"),)
    store.snapshot("b")
    store.put_record("note", "k1", {"v": 1})  # back to what it was at "a"
    assert store.diff("a", "b").records("note") == d.records("note")
    assert store.diff("b").records("note").changed == (("k1",),)
    assert store.diff("a").records("note").changed == ()  # equal again: no change
    backwards = store.diff("b", "a")
    assert backwards.tables["nodes"].removed == (("n2",),)
    assert backwards.tables["nodes"].added == (("n9",),)
    assert len(store.diff("b", "b").tables["nodes"]) == 0


def test_rollback_restores_everything_and_drops_later_snapshots(opener: Opener) -> None:
    store = opener()
    _fill(store)
    before = _state(store)
    version = store.collection_version("c")
    store.snapshot("a")
    _change(store)
    store.snapshot("b")
    store.put_record("note", "k7", 7)
    store.snapshot("c")
    assert store.rollback("a") == ["b", "c"]
    assert _state(store) == before
    assert [s.name for s in store.snapshots()] == ["a"]
    assert store.collection_version("c") > version  # never restored: indexes see staleness
    assert len(store.diff("a").tables["records"]) == 0
    # the line goes on from "a": new changes, a new snapshot, a second rollback
    store.put_record("note", "k8", 8)
    assert store.snapshot("d").parent == "a"
    store.put_record("note", "k9", 9)
    assert store.rollback("d") == []
    assert [k for k, _ in store.iter_records("note")] == ["k1", "k2", "k8"]
    assert store.rollback("a") == ["d"]
    assert _state(store) == before


def test_snapshots_survive_reopening_and_errors_name_the_problem(opener: Opener) -> None:
    store = opener()
    _fill(store)
    store.snapshot("kept")
    store.put_record("note", "k3", 3)
    store.close()
    again = opener()
    assert [s.name for s in again.snapshots()] == ["kept"]
    assert again.diff("kept").records("note").added == (("k3",),)
    wanted = r"no snapshot named 'kep'.*known: 'kept'.*'kept'\?"
    with pytest.raises(UnknownNameError, match=wanted):
        again.rollback("kep")
    with pytest.raises(UnknownNameError, match="known: 'kept'"):
        again.at_snapshot("nope")
    with pytest.raises(InvalidInputError, match="snapshot 'kept' already exists"):
        again.snapshot("kept")
    with pytest.raises(InvalidInputError, match="must not be empty"):
        again.snapshot(" ")
    again.rollback("kept")
    assert again.count_records("note") == 2


def test_drop_snapshot_stops_logging_and_keeps_the_others_exact(opener: Opener) -> None:
    store = opener()
    _fill(store)
    store.snapshot("a")
    store.put_record("note", "k1", {"v": 100})
    store.snapshot("b")
    store.put_record("note", "k1", {"v": 200})
    store.drop_snapshot("b")
    store.put_record("note", "k1", {"v": 300})
    view = store.at_snapshot("a")
    try:
        assert view.get_record("note", "k1") == {"v": 1}
    finally:
        view.close()
    store.drop_snapshot("a")
    assert store.snapshots() == []
    with pytest.raises(UnknownNameError, match="it has no snapshots"):
        store.diff("a")


def test_a_failed_rollback_changes_nothing(opener: Opener) -> None:
    """A real trigger makes the rollback's first restoring INSERT fail after its DELETEs ran."""
    store = opener()
    _fill(store)
    store.snapshot("a")
    _change(store)
    store.snapshot("b")
    after = _state(store)
    version = store.collection_version("c")
    _install_failing_trigger(store)
    with pytest.raises(StoreError, match="injected"):
        store.rollback("a")
    assert _state(store) == after
    assert [s.name for s in store.snapshots()] == ["a", "b"]
    assert store.collection_version("c") == version
    assert len(store.diff("a").tables["nodes"]) == 3  # the undo log is intact
    _drop_failing_trigger(store)
    store.rollback("a")
    assert _state(store)["note"] == [("k1", {"v": 1}), ("k2", {"v": 2})]


def _install_failing_trigger(store: BaseStore) -> None:
    if store.url.startswith("sqlite"):
        conn = store._connection()  # type: ignore[attr-defined]
        conn.execute(
            "CREATE TRIGGER fail_restore BEFORE INSERT ON nodes "
            "WHEN NEW.seq = (SELECT seq FROM ids WHERE id = 'n1') "
            "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
        )
    else:
        conn = store._connection()  # type: ignore[attr-defined]
        conn.execute(
            "CREATE FUNCTION fail_restore() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.seq = (SELECT seq FROM ids WHERE id = 'n1') THEN "
            "RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; "
            "END $$"
        )
        conn.execute(
            "CREATE TRIGGER fail_restore BEFORE INSERT ON nodes FOR EACH ROW "
            "EXECUTE FUNCTION fail_restore()"
        )


def _drop_failing_trigger(store: BaseStore) -> None:
    conn = store._connection()  # type: ignore[attr-defined]
    if store.url.startswith("sqlite"):
        conn.execute("DROP TRIGGER fail_restore")
    else:
        conn.execute("DROP TRIGGER fail_restore ON nodes")


def test_rollback_inside_a_transaction_rolls_back_with_it(opener: Opener) -> None:
    store = opener()
    _fill(store)
    store.snapshot("a")
    _change(store)
    after = _state(store)
    with pytest.raises(RuntimeError), store.transaction():
        store.rollback("a")
        raise RuntimeError("the caller changes its mind")
    assert _state(store) == after
    assert len(store.diff("a").tables["records"]) == 4


def test_branch_is_an_independent_writable_store(opener: Opener, tmp_path: Path) -> None:
    store = opener()
    _fill(store)
    before = _state(store)
    store.snapshot("a")
    _change(store)
    branch = store.branch("a", get_store(tmp_path / "branch.db"))
    try:
        assert _state(branch) == before
        assert branch.get_meta("branched_from").endswith("#a")  # type: ignore[union-attr]
        assert [s.name for s in branch.snapshots()] == ["a"]
        branch.put_record("note", "mine", 1)
        assert branch.diff("a").records("note").added == (("mine",),)
        assert store.get_record("note", "mine") is None
        with pytest.raises(InvalidInputError, match="already holds data"):
            store.branch("a", branch)
    finally:
        branch.close()


def test_an_in_memory_store_has_snapshots_but_no_views() -> None:
    with get_store(":memory:") as store:
        store.put_record("note", "a", 1)
        store.snapshot("s")
        store.put_record("note", "b", 2)
        assert store.diff("s").records("note").added == (("b",),)
        with pytest.raises(StoreError, match="in-memory store cannot be opened as a view"):
            store.at_snapshot("s")
        store.rollback("s")
        assert store.count_records("note") == 1


def test_a_version_1_store_migrates_and_takes_snapshots(tmp_path: Path, postgres_url: str) -> None:
    import sqlite3

    import psycopg

    from costeer_lab.store._migrations import MIGRATIONS, migrate
    from costeer_lab.store._postgres_schema import PG_MIGRATIONS, migrate_postgres

    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, str(path), MIGRATIONS[:1])
    conn.execute("INSERT INTO records (kind, key, data, created_at, updated_at) "
                 "VALUES ('note', 'old', '1', 0, 0)")  # fmt: skip
    conn.close()
    with psycopg.connect(postgres_url, autocommit=True) as pg:
        migrate_postgres(pg, "public", "test", PG_MIGRATIONS[:1])
        pg.execute("INSERT INTO records (kind, key, data, created_at, updated_at) "
                   "VALUES ('note', 'old', '1', 0, 0)")  # fmt: skip
    for url in (f"sqlite:///{path}", postgres_url):
        with get_store(url) as store:
            assert store.schema_version == SCHEMA_VERSION == PG_SCHEMA_VERSION
            store.snapshot("first")
            store.put_record("note", "old", 2)
            assert store.diff("first").records("note").changed == (("old",),)
            store.rollback("first")
            assert store.get_record("note", "old") == 1
