"""Store contract tests: nodes, edges and metadata (part of :class:`StoreTestSuite`)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.store import BaseStore, EdgeRecord, NodeRecord

__all__ = ["GraphStoreTests"]

UNICODE = "Δ rolling 平均 — ünïcödé ✓ 🚀 'quotes' \"double\" \\ back\nslash\ttab"


def _ids(nodes: object) -> list[str]:
    return [n.id for n in nodes]  # type: ignore[attr-defined]


class GraphStoreTests:
    """Node, edge and metadata CRUD, ordering and cascades."""

    # -- nodes -----------------------------------------------------------------------------
    def test_node_round_trip(self, store: BaseStore) -> None:
        attrs: dict[str, object] = {
            "n": 1,
            "x": 0.1,
            "ok": True,
            "none": None,
            "list": [1, "a"],
            "d": {"k": [{}]},
        }
        store.put_nodes([NodeRecord("n1", "component", UNICODE, attrs)])
        node = store.get_node("n1")
        assert node is not None
        assert (node.id, node.kind, node.content, node.attrs) == (
            "n1",
            "component",
            UNICODE,
            attrs,
        )
        assert node.created_at > 0 and node.updated_at >= node.created_at

    def test_unicode_ids_and_kinds(self, store: BaseStore) -> None:
        store.put_nodes([NodeRecord("ノード/1 ✓", "kïnd", "c")])
        assert _ids(store.iter_nodes("kïnd")) == ["ノード/1 ✓"]
        assert store.get_node("ノード/1 ✓") is not None

    def test_odd_ids_round_trip_through_every_keyed_path(self, store: BaseStore) -> None:
        """Ids travel to the database as a JSON array (interning, lookups): quotes,
        backslashes, control characters and non-BMP characters must come back unchanged."""
        ids = [UNICODE, 'q"uote', "back\\slash", "🙂", "\n", "\u2028", " sp ", "a", "ünï"]
        store.put_nodes([NodeRecord(i, "k", "c") for i in ids])
        store.put_edges([EdgeRecord(a, b, "e") for a, b in itertools.pairwise(ids)])
        assert _ids(store.iter_nodes()) == ids
        assert _ids(store.get_nodes(list(reversed(ids)))) == list(reversed(ids))
        assert [(e.src, e.dst) for e in store.iter_edges()] == list(itertools.pairwise(ids))
        assert [e.dst for e in store.iter_edges(node=ids[1])] == [ids[1], ids[2]]
        assert store.delete_edges([(ids[0], ids[1], "e")]) == 1
        assert store.delete_nodes([ids[2]]) == 1
        assert store.count_edges() == len(ids) - 4
        store.put_records("r", [(i, n) for n, i in enumerate(ids)])
        assert store.get_records("r", ids) == {i: n for n, i in enumerate(ids)}

    @pytest.mark.parametrize("bad", ["a\x00b", "x\ud800"], ids=["nul", "lone-surrogate"])
    def test_ids_that_cannot_be_stored_are_refused_by_name(
        self, store: BaseStore, bad: str
    ) -> None:
        store.put_nodes([NodeRecord("ok", "k", "c")])
        calls: list[tuple[Callable[[], object], str]] = [
            (lambda: store.put_nodes([NodeRecord(bad, "k", "c")]), "node id"),
            (lambda: store.put_edges([EdgeRecord("ok", bad, "e")]), "edge dst"),
            (lambda: store.put_edges([EdgeRecord(bad, "ok", "e")]), "edge src"),
            (lambda: store.put_records("r", [(bad, 1)]), "key of a 'r' record"),
            (lambda: store.get_nodes([bad]), "node id"),
            (lambda: store.get_record("r", bad), "record key"),
        ]
        for call, what in calls:
            with pytest.raises(InvalidInputError, match=f"^{what} must "):
                call()
        assert _ids(store.iter_nodes()) == ["ok"] and store.count_edges() == 0
        assert store.count_records("r") == 0

    def test_get_nodes_keeps_given_order_and_skips_missing(self, store: BaseStore) -> None:
        store.put_nodes(NodeRecord(f"n{i}", "k", f"c{i}") for i in range(5))
        assert _ids(store.get_nodes(["n3", "missing", "n0", "n4"])) == ["n3", "n0", "n4"]
        assert store.get_nodes([]) == []
        assert store.get_node("missing") is None

    def test_upsert_keeps_created_at_and_advances_updated_at(self, store: BaseStore) -> None:
        store.put_nodes([NodeRecord("a", "component", "v1", {"v": 1})])
        first = store.get_node("a")
        store.put_nodes([NodeRecord("a", "error", "v2", {"v": 2})])
        second = store.get_node("a")
        assert first is not None and second is not None
        assert (second.kind, second.content, second.attrs) == ("error", "v2", {"v": 2})
        assert second.created_at == first.created_at
        assert second.updated_at > first.updated_at
        assert store.count_nodes() == 1

    def test_explicit_created_at_is_kept_for_new_nodes(self, store: BaseStore) -> None:
        store.put_nodes([NodeRecord("old", "k", "c", created_at=1_000_000.5)])
        node = store.get_node("old")
        assert node is not None and node.created_at == 1_000_000.5

    def test_iter_nodes_insertion_order_and_kind(self, store: BaseStore) -> None:
        store.put_nodes(
            [NodeRecord("b", "x", ""), NodeRecord("a", "y", ""), NodeRecord("c", "x", "")]
        )
        store.put_nodes([NodeRecord("d", "y", ""), NodeRecord("b", "x", "updated")])
        assert _ids(store.iter_nodes()) == ["b", "a", "c", "d"]  # an upsert does not move
        assert _ids(store.iter_nodes("x")) == ["b", "c"]
        assert _ids(store.iter_nodes("none")) == []
        assert (store.count_nodes(), store.count_nodes("y"), store.count_nodes("z")) == (4, 2, 0)

    def test_iter_many_nodes_in_order(self, store: BaseStore) -> None:
        ids = [f"{(i * 7919) % 5003:05d}" for i in range(5003)]  # scrambled, not sorted
        store.put_nodes(NodeRecord(i, "k", i) for i in ids)
        assert _ids(store.iter_nodes()) == ids
        assert _ids(store.iter_nodes("k")) == ids
        assert list(store.iter_node_kinds()) == [(i, "k") for i in ids]  # across pages

    def test_iter_node_kinds_is_iter_nodes_without_payload(self, store: BaseStore) -> None:
        store.put_nodes(
            [
                NodeRecord("b", "x", UNICODE, {"big": list(range(50))}),
                NodeRecord("ノード/1 ✓", "kïnd", "", {}),
                NodeRecord("c", "x", "c"),
            ]
        )
        store.put_nodes([NodeRecord("d", "y", ""), NodeRecord("b", "x", "updated")])
        expected = [(n.id, n.kind) for n in store.iter_nodes()]
        assert expected == [("b", "x"), ("ノード/1 ✓", "kïnd"), ("c", "x"), ("d", "y")]
        assert list(store.iter_node_kinds()) == expected  # an upsert does not move
        assert list(store.iter_node_kinds("x")) == [("b", "x"), ("c", "x")]
        assert list(store.iter_node_kinds("none")) == []
        store.delete_nodes(["c"])
        assert [i for i, _ in store.iter_node_kinds()] == ["b", "ノード/1 ✓", "d"]

    def test_delete_nodes_cascades_edges(self, store: BaseStore) -> None:
        store.put_nodes(NodeRecord(i, "k", "") for i in "abc")
        store.put_edges(
            [EdgeRecord("a", "b", "r"), EdgeRecord("c", "a", "r"), EdgeRecord("b", "c", "r")]
        )
        assert store.delete_nodes(["a", "zzz"]) == 1
        assert _ids(store.iter_nodes()) == ["b", "c"]
        assert [(e.src, e.dst) for e in store.iter_edges()] == [("b", "c")]
        assert store.delete_nodes(["a"]) == 0
        assert store.delete_nodes([]) == 0

    def test_node_validation(self, store: BaseStore) -> None:
        with pytest.raises(InvalidInputError, match="content"):
            store.put_nodes([NodeRecord("a", "k", 123)])  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError):
            store.put_nodes([("a", "k", "c")])  # type: ignore[list-item]
        assert store.count_nodes() == 0

    def test_batch_with_a_bad_node_writes_nothing(self, store: BaseStore) -> None:
        good = [NodeRecord(f"n{i}", "k", "") for i in range(10)]
        bad = NodeRecord("bad", "k", "", {"s": {1, 2}})
        with pytest.raises(InvalidInputError, match="bad"):
            store.put_nodes([*good, bad])
        assert store.count_nodes() == 0

    # -- edges -----------------------------------------------------------------------------
    def test_iter_edge_keys_is_iter_edges_without_attrs(self, store: BaseStore) -> None:
        store.put_edges(
            [
                EdgeRecord("b", "a", "uses", {"w": [1, 2, 3]}),
                EdgeRecord("a", "b", "uses"),
                EdgeRecord("a", "b", "other", {"s": UNICODE}),
            ]
        )
        store.put_edges([EdgeRecord("b", "a", "uses", {"w": 0})])  # an upsert does not move
        expected = [(e.src, e.dst, e.kind) for e in store.iter_edges()]
        assert expected == [("b", "a", "uses"), ("a", "b", "uses"), ("a", "b", "other")]
        assert list(store.iter_edge_keys()) == expected
        assert list(store.iter_edge_keys("other")) == [("a", "b", "other")]
        assert list(store.iter_edge_keys("none")) == []

    def test_edge_round_trip_and_upsert(self, store: BaseStore) -> None:
        store.put_edges([EdgeRecord("x", "y", "uses", {"w": 0.5})])  # endpoints need not exist
        [edge] = store.iter_edges()
        assert (edge.src, edge.dst, edge.kind, edge.attrs) == ("x", "y", "uses", {"w": 0.5})
        assert edge.created_at > 0
        store.put_edges([EdgeRecord("x", "y", "uses", {"w": 2})])
        [again] = store.iter_edges()
        assert again.attrs == {"w": 2} and again.created_at == edge.created_at
        store.put_edges([EdgeRecord("x", "y", "other")])  # same endpoints, other kind
        assert store.count_edges() == 2

    def test_iter_edges_filters_and_order(self, store: BaseStore) -> None:
        edges = [
            EdgeRecord("b", "a", "r"),
            EdgeRecord("a", "c", "s"),
            EdgeRecord("c", "d", "r"),
            EdgeRecord("d", "a", "s"),
        ]
        store.put_edges(edges)
        key = [(e.src, e.dst, e.kind) for e in store.iter_edges()]
        assert key == [(e.src, e.dst, e.kind) for e in edges]
        assert [(e.src, e.dst) for e in store.iter_edges(kind="r")] == [("b", "a"), ("c", "d")]
        assert [(e.src, e.dst) for e in store.iter_edges(node="a")] == [
            ("b", "a"),
            ("a", "c"),
            ("d", "a"),
        ]
        assert [(e.src, e.dst) for e in store.iter_edges(kind="s", node="a")] == [
            ("a", "c"),
            ("d", "a"),
        ]
        assert list(store.iter_edges(node="nobody")) == []
        assert (store.count_edges(), store.count_edges("r"), store.count_edges("q")) == (4, 2, 0)

    def test_delete_edges_counts_existing(self, store: BaseStore) -> None:
        store.put_edges([EdgeRecord("a", "b", "r"), EdgeRecord("b", "c", "r")])
        assert store.delete_edges([("a", "b", "r"), ("a", "b", "r"), ("a", "b", "zz")]) == 1
        assert [(e.src, e.dst) for e in store.iter_edges()] == [("b", "c")]
        assert store.delete_edges([]) == 0

    # -- metadata ----------------------------------------------------------------------------
    def test_meta(self, store: BaseStore) -> None:
        assert store.get_meta("missing") is None
        store.set_meta("owner", UNICODE)
        assert store.get_meta("owner") == UNICODE
        store.set_meta("owner", "b")
        assert store.get_meta("owner") == "b"
