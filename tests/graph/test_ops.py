"""Graph functions on hand-built graphs with known answers, and the stored graph."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from costeer_lab.embed import get_embedder
from costeer_lab.errors import InvalidInputError, NotFoundError
from costeer_lab.graph import (
    COMPONENT,
    ERROR,
    NODE_KINDS,
    TASK_DESCRIPTION,
    KnowledgeGraph,
    constrained_query,
    intersection,
    neighbors_within,
    node_id,
    nodes_of_kind,
    similar_nodes,
)
from costeer_lab.store import SQLiteStore


@pytest.fixture
def G() -> nx.Graph:
    """t1–c1, t1–c2, t2–c1, t2–c3, t3–c2, t3–c3, e1–tr1–t1."""
    g = nx.Graph()
    kinds = dict.fromkeys(["t1", "t2", "t3"], TASK_DESCRIPTION)
    kinds.update(dict.fromkeys(["c1", "c2", "c3"], COMPONENT), tr1="task_trace", e1=ERROR)
    for n, k in kinds.items():
        g.add_node(n, kind=k)
    g.add_edges_from([("t1", "c1"), ("t1", "c2"), ("t2", "c1"), ("t2", "c3"), ("t3", "c2"),
                      ("t3", "c3"), ("tr1", "t1"), ("tr1", "e1")])  # fmt: skip
    return g


def test_node_kinds_and_ids() -> None:
    assert NODE_KINDS == (
        "component", "task_description", "task_trace", "task_success_implement", "error"
    )  # fmt: skip
    assert node_id(COMPONENT, "op:mean") == node_id(COMPONENT, "op:mean")
    assert node_id(COMPONENT, "op:mean") != node_id(ERROR, "op:mean")
    assert node_id(COMPONENT, "op:mean") != node_id(COMPONENT, "op:std")
    with pytest.raises(InvalidInputError):
        node_id("", "x")


def test_nodes_of_kind(G: nx.Graph) -> None:
    assert nodes_of_kind(G, COMPONENT) == ["c1", "c2", "c3"]
    assert nodes_of_kind(G, "nothing") == []


def test_neighbors_within(G: nx.Graph) -> None:
    assert neighbors_within(G, "t1") == {"c1": 1, "c2": 1, "tr1": 1}
    assert neighbors_within(G, "t1", depth=2, kinds=TASK_DESCRIPTION) == {"t2": 2, "t3": 2}
    assert neighbors_within(G, "e1", depth=3, kinds=[COMPONENT]) == {"c1": 3, "c2": 3}
    with pytest.raises(NotFoundError, match="nope"):
        neighbors_within(G, "nope")
    with pytest.raises(InvalidInputError):
        neighbors_within(G, "t1", depth=0)


def test_intersection(G: nx.Graph) -> None:
    assert intersection(G, ["c1", "c2"]) == {"t1"}
    assert intersection(G, ["c1", "c3"]) == {"t2"}
    assert intersection(G, ["c1", "c2", "c3"]) == set()
    assert intersection(G, ["c1"], kinds=TASK_DESCRIPTION) == {"t1", "t2"}
    assert intersection(G, ["t1", "t2"], depth=2, kinds=TASK_DESCRIPTION) == {"t3"}
    assert intersection(G, []) == set()


def test_constrained_query(G: nx.Graph) -> None:
    assert constrained_query(G, ["t1"], kinds=TASK_DESCRIPTION, max_depth=2) == [
        ("t2", 2), ("t3", 2)
    ]  # fmt: skip
    assert constrained_query(G, ["t1"], kinds=TASK_DESCRIPTION, max_depth=2, limit=1) == [
        ("t2", 2)
    ]
    assert constrained_query(G, ["c1", "c2"], kinds=TASK_DESCRIPTION, require_all=True) == [
        ("t1", 1)
    ]
    assert constrained_query(G, ["c1", "c2"], kinds=TASK_DESCRIPTION) == [
        ("t1", 1), ("t2", 1), ("t3", 1)
    ]  # fmt: skip
    assert constrained_query(G, ["e1"], max_depth=2, where={"kind": TASK_DESCRIPTION}) == [
        ("t1", 2)
    ]


def test_stored_graph_dedupes_persists_and_searches(tmp_path: Path) -> None:
    emb = get_embedder("hashing", dim=64)
    with SQLiteStore(tmp_path / "g.db") as store:
        kg = KnowledgeGraph(store, emb, [ERROR])
        a = kg.add_node(ERROR, "KeyError: <str>")
        b = kg.add_node(ERROR, "KeyError: <str>")
        c = kg.add_node(ERROR, "ZeroDivisionError: division by zero")
        t = kg.add_node(TASK_DESCRIPTION, "mean of close", {"task": {"id": "t"}})
        kg.add_edges([(t, a, "hit_error"), (t, a, "hit_error")])
        assert a == b and kg.count(ERROR) == 2 and store.count_nodes(ERROR) == 2
        assert store.count_edges() == 1
        assert similar_nodes(kg.collections[ERROR], "KeyError: <str>", 1) == [  # type: ignore[comparison-overlap]
            (a, pytest.approx(1.0))
        ]
        assert [i for i, _ in similar_nodes(kg.collections[ERROR], "x", 5, filter={c})] == [c]
    with SQLiteStore(tmp_path / "g.db") as store:
        kg2 = KnowledgeGraph(store, emb, [ERROR])
        assert set(kg2.G.nodes) == {a, c, t}
        assert kg2.kind(a) == ERROR and kg2.G.has_edge(a, t)
        assert kg2.get_nodes([t])[t].attrs == {"task": {"id": "t"}}
        assert len(kg2.collections[ERROR]) == 2
