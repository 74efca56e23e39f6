"""Opening a V2 knowledge base reads no graph and no attempt record; the first use of the
lookups reads the attempt records, then the ``has_component`` edges, once; the networkx graph is
read (ids and kinds only) only when it is used itself, and never by the lookups (issue 27).

The store is not under test here: a subclass of the real SQLite store counts which read methods
an open calls, and the opened KB must equal the one that wrote the store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import networkx as nx

from costeer_lab.embed import get_embedder
from costeer_lab.knowledge import KnowledgeBaseV2, RAGSettings, RAGStrategyV2
from costeer_lab.store import EdgeRecord, NodeRecord, SQLiteStore
from costeer_lab.store._base import VECTOR_PAGE, JSONScalar
from costeer_lab.store._types import JSONValue

from ._kb_helpers import code, crash, factor, ok, seed, wrong


class CountingStore(SQLiteStore):
    """The SQLite store, counting calls of its graph read methods."""

    calls: Counter[str]

    def iter_nodes(self, kind: str | None = None) -> Iterator[NodeRecord]:
        self.calls["iter_nodes"] += 1
        return super().iter_nodes(kind)

    def iter_node_kinds(self, kind: str | None = None) -> Iterator[tuple[str, str]]:
        self.calls["iter_node_kinds"] += 1
        return super().iter_node_kinds(kind)

    def iter_edges(self, kind: str | None = None, node: str | None = None) -> Iterator[EdgeRecord]:
        self.calls["iter_edges"] += 1
        return super().iter_edges(kind, node)

    def iter_edge_keys(self, kind: str | None = None) -> Iterator[tuple[str, str, str]]:
        self.calls["iter_edge_keys"] += 1
        return super().iter_edge_keys(kind)

    def iter_records(
        self, kind: str, where: Mapping[str, JSONScalar] | None = None
    ) -> Iterator[tuple[str, JSONValue]]:
        self.calls[f"iter_records:{kind}"] += 1
        return super().iter_records(kind, where)

    def load_vectors(self, collection: str) -> tuple[list[str], Any, str | None]:
        self.calls["load_vectors"] += 1
        return super().load_vectors(collection)

    def iter_vectors(self, collection: str, page: int = VECTOR_PAGE) -> Any:
        self.calls["iter_vectors"] += 1
        return super().iter_vectors(collection, page)


def counting(path: Path) -> CountingStore:
    s = CountingStore(path)
    s.calls = Counter()
    return s


def build(path: Path) -> KnowledgeBaseV2:
    """A KB with seeds, failed and successful attempts of two runs."""
    ma5 = factor("MA5", "Mean($close, 5)/$close", "average close over 5 days", "MA")
    std5 = factor("STD5", "Std($close, 5)/$close", "standard deviation of close", "STD")
    vma5 = factor("VMA5", "Mean($volume, 5)/$volume", "average volume over 5 days", "VMA")
    kb = KnowledgeBaseV2(SQLiteStore(path), get_embedder("hashing"))
    kb.add_seed_knowledge([seed(ma5, "ma5")])
    rag = RAGStrategyV2(RAGSettings())
    for run in ("r1", "r2"):
        rag.generate_knowledge(kb, [(std5, code("a"), crash("KeyError: 'close'"))], run_id=run)
        rag.generate_knowledge(kb, [(std5, code("b"), wrong(0.2))], run_id=run)
        rag.generate_knowledge(kb, [(std5, code("c"), ok())], run_id=run)
        rag.generate_knowledge(kb, [(vma5, code(run), crash("TypeError: x"))], run_id=run)
    return kb


LOOKUPS_READ = Counter({"iter_records:kg_attempt": 1, "iter_edge_keys": 1})
GRAPH_READ = Counter({"iter_node_kinds": 1, "iter_edge_keys": 1})


def test_open_reads_ids_and_kinds_once_and_rebuilds_the_same_kb(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    before = build(path)
    before.close()  # saves the indexes the writes moved on
    store = counting(path)
    opened = KnowledgeBaseV2(store, get_embedder("hashing"))
    assert store.calls == Counter() and not opened.loaded  # indexes loaded from their files
    assert opened.success == before.success  # first use: the records, then component edges
    assert store.calls == LOOKUPS_READ and opened.loaded and not opened.graph.loaded
    assert opened.stats() == before.stats()  # counted by the store: the graph is not read
    assert store.calls == LOOKUPS_READ and not opened.graph.loaded
    assert opened.graph.G.number_of_nodes() > 10  # the graph, read on its own first use
    assert store.calls == LOOKUPS_READ + GRAPH_READ
    graph_first = KnowledgeBaseV2(counting(path), get_embedder("hashing"))
    assert graph_first.graph.G.number_of_edges() == before.store.count_edges()
    assert graph_first.store.calls == GRAPH_READ and not graph_first.loaded
    graph_first.store.close()
    assert nx.utils.graphs_equal(opened.graph.G, before.graph.G)
    assert opened.graph.G.number_of_nodes() == before.store.count_nodes() > 10
    assert opened.graph.G.number_of_edges() == before.store.count_edges()
    assert opened.stats() == before.stats()
    assert opened.attempts == before.attempts and opened.task_td == before.task_td
    assert opened.success == before.success and opened.solved.tds == before.solved.tds
    components = {c for td in before.solved.tds for c in before.graph.G.neighbors(td)}
    for c in components:
        assert opened.solved.posting(c).tolist() == before.solved.posting(c).tolist()
    assert opened.error_fixes == before.error_fixes
    assert store.calls == LOOKUPS_READ + GRAPH_READ  # read once, whatever is used
    store.calls.clear()
    opened.reload()  # an explicit reload reads both once more (the graph, as it was in use)
    assert store.calls == LOOKUPS_READ + GRAPH_READ
    assert nx.utils.graphs_equal(opened.graph.G, before.graph.G)
    before.store.close()
    store.close()


def _build_into(path: Path, *, graph_first: bool) -> KnowledgeBaseV2:
    """:func:`build`, on a KB whose networkx graph is read before the writes or never."""
    kb = KnowledgeBaseV2(SQLiteStore(path), get_embedder("hashing"))
    if graph_first:
        assert kb.graph.G.number_of_nodes() == 0
    ma5 = factor("MA5", "Mean($close, 5)/$close", "average close over 5 days", "MA")
    std5 = factor("STD5", "Std($close, 5)/$close", "standard deviation of close", "STD")
    kb.add_seed_knowledge([seed(ma5, "ma5")])
    rag = RAGStrategyV2(RAGSettings())
    for run in ("r1", "r2"):  # STD5 fails first: solved later, its components already stored
        rag.generate_knowledge(kb, [(std5, code("a"), crash("KeyError: 'close'"))], run_id=run)
        rag.generate_knowledge(kb, [(std5, code("c"), ok())], run_id=run)
        rag.generate_knowledge(kb, [(ma5, code("a"), crash("KeyError: 'close'"))], run_id=run)
    assert kb.graph.loaded == graph_first
    return kb


def test_writes_without_the_graph_leave_the_same_store_and_lookups(tmp_path: Path) -> None:
    """The lookups never read the networkx graph, and a write does not either: nodes are looked
    up in the vector collections, the component edges of a known task description in the KB's
    compact task description → components map. Store, lookups and the graph read afterwards
    equal those of a KB whose graph was read first and kept up to date by every write."""
    lazy = _build_into(tmp_path / "lazy.db", graph_first=False)
    eager = _build_into(tmp_path / "eager.db", graph_first=True)
    for a, b in [(lazy.store, eager.store)]:
        assert sorted(n.id for n in a.iter_nodes()) == sorted(n.id for n in b.iter_nodes())
        assert sorted(a.iter_edge_keys()) == sorted(b.iter_edge_keys())
    assert lazy.stats() == eager.stats()
    assert lazy.attempts == eager.attempts and lazy.task_td == eager.task_td
    assert lazy.success == eager.success and lazy.solved.tds == eager.solved.tds
    assert lazy.error_fixes == eager.error_fixes
    for td in eager.solved.tds:
        comps = [c for c in eager.graph.G.neighbors(td) if eager.graph.kind(c) == "component"]
        assert comps
        assert [lazy.solved.posting(c).tolist() for c in comps] == [
            eager.solved.posting(c).tolist() for c in comps
        ]
    assert nx.utils.graphs_equal(lazy.graph.G, eager.graph.G)
    reopened = KnowledgeBaseV2(SQLiteStore(tmp_path / "lazy.db"), get_embedder("hashing"))
    assert reopened.solved.tds == eager.solved.tds and reopened.error_fixes == eager.error_fixes
    for c in {c for td in eager.solved.tds for c in eager.graph.G.neighbors(td)}:
        assert reopened.solved.posting(c).tolist() == eager.solved.posting(c).tolist()
    for kb in (lazy, eager, reopened):
        kb.store.close()
