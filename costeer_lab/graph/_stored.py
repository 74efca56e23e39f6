"""``KnowledgeGraph``: the typed graph held in a store, mirrored in memory as an ``nx.Graph``.

The store (nodes / edges tables) is the source of truth; the networkx graph and the per-kind
vector collections are derived views. The vector indexes are loaded when the graph is opened
(from their persisted files when fresh); the networkx graph is read on first use of ``G``, and
writes before that neither read nor need it (:meth:`KnowledgeGraph.has`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np
import numpy.typing as npt

from costeer_lab.graph._kinds import node_id
from costeer_lab.store import (
    BaseStore,
    BatchWrite,
    CheckedRows,
    EdgeRecord,
    NodeRecord,
    VectorWrite,
)

if TYPE_CHECKING:
    from costeer_lab.embed import BaseEmbedder
    from costeer_lab.index import VectorCollection

__all__ = ["GraphWrite", "KnowledgeGraph", "collection_name"]


@dataclass(frozen=True)
class GraphWrite:
    """A write planned by :meth:`KnowledgeGraph.plan_write`: what the store writes
    (:meth:`batch`) and what the in-memory views take in once it committed."""

    #: Every node written (upserted), by id.
    nodes: Mapping[str, NodeRecord]
    #: The edges new to the graph, ``(src, dst) -> kind``.
    edges: Mapping[tuple[str, str], str]
    #: The rows of the nodes and of the new edges, checked and encoded.
    node_rows: CheckedRows
    edge_rows: CheckedRows
    #: The vectors of the new nodes of embedded kinds, one write per node kind.
    vectors: list[tuple[str, VectorWrite]]
    #: Their raw embeddings for the embedding cache (see ``VectorCollection.vector_write``).
    cached: list[tuple[str, dict[str, npt.NDArray[np.float32]]]]

    def batch(self, records: Sequence[tuple[str, CheckedRows]] = ()) -> BatchWrite:
        """The store's transaction of this write, with ``records`` written last."""
        return BatchWrite(
            nodes=self.node_rows,
            cached=self.cached,
            vectors=[write for _, write in self.vectors],
            edges=self.edge_rows,
            records=list(records),
        )


def collection_name(kind: str) -> str:
    """Name of the store vector collection holding the embeddings of one node kind."""
    return f"kg:{kind}"


class KnowledgeGraph:
    """A typed knowledge graph persisted in a store.

    Nodes are identified by :func:`~costeer_lab.graph.node_id` (kind + sha256 of content), so
    adding identical content twice yields one node. The in-memory graph ``G`` keeps only each
    node's ``kind`` (payloads stay in the store and are read with :meth:`get_nodes`). Nodes of the
    kinds in ``embedded_kinds`` are also embedded into one vector collection per kind.

    Args:
        store: where nodes and edges live.
        embedder: embeds node contents (wrapped in a persistent cache by the collections).
        embedded_kinds: node kinds with a vector collection.
        index_kinds: FAISS index kind (``"exact"``, ``"hnsw"`` or ``"auto"``: exact below
            ``hnsw_above`` vectors, HNSW from there on) per node kind; default exact.
        index_kw: further index arguments (``hnsw_m``, ``ef_search``, …) of the HNSW and auto
            ones.
        hnsw_above: the size from which an ``auto`` collection uses HNSW.
        load: read the graph from the store on first use of :attr:`G` (``False``: the caller
            calls :meth:`reload` itself when it is ready; ``G`` is empty until then).
        persist_indexes: keep each vector index in a file at the store's place for it
            (:func:`~costeer_lab.index._location.index_file`), loaded on open when it matches
            the store and written again by :meth:`checkpoint`.

    Example:
        >>> from costeer_lab.embed import get_embedder
        >>> from costeer_lab.store import get_store
        >>> kg = KnowledgeGraph(get_store(":memory:"), get_embedder("hashing"), ["component"])
        >>> a = kg.add_node("component", "op:mean"); b = kg.add_node("component", "op:mean")
        >>> a == b, kg.G.number_of_nodes()
        (True, 1)
    """

    def __init__(
        self,
        store: BaseStore,
        embedder: BaseEmbedder,
        embedded_kinds: Sequence[str] = (),
        *,
        index_kinds: Mapping[str, str] | None = None,
        index_kw: Mapping[str, Any] | None = None,
        hnsw_above: int | None = None,
        load: bool = True,
        persist_indexes: bool = False,
    ) -> None:
        from costeer_lab.index import HNSW_ABOVE, VectorCollection

        self.store = store
        self._G: nx.Graph | None = None if load else nx.Graph()
        #: Called instead of :meth:`reload` on the first use of :attr:`G` (an owner that reads
        #: more than the graph, such as ``KnowledgeBaseV2``, reads it all at once).
        self.on_first_use: Callable[[], None] | None = None
        kinds = dict(index_kinds or {})
        self.collections: dict[str, VectorCollection] = {}
        for kind in embedded_kinds:
            choice = kinds.get(kind, "exact")
            self.collections[kind] = VectorCollection(
                store,
                collection_name(kind),
                embedder,
                kind=choice,  # type: ignore[arg-type]  # checked by the collection
                hnsw_above=HNSW_ABOVE if hnsw_above is None else hnsw_above,
                persist=persist_indexes,
                **(dict(index_kw or {}) if choice != "exact" else {}),
            )

    @property
    def G(self) -> nx.Graph:
        """The in-memory graph (node ids with their ``kind``, typed edges); read from the store
        on first use."""
        if self._G is None:
            (self.on_first_use or self.reload)()
            if self._G is None:  # a hook that did not read the graph
                self.reload()
            assert self._G is not None
        return self._G

    @G.setter
    def G(self, graph: nx.Graph) -> None:
        self._G = graph

    @property
    def loaded(self) -> bool:
        """Whether :attr:`G` holds the graph (read, or started empty with ``load=False``)."""
        return self._G is not None

    def checkpoint(self) -> None:
        """Write every persisted vector index that moved on since its file was written."""
        for col in self.collections.values():
            col.checkpoint()

    def reload(self) -> None:
        """Rebuild the in-memory graph from the store.

        Edges are read before nodes: a writer commits an edge with (or after) its nodes and
        nothing is deleted, so nodes read afterwards include every endpoint even while another
        process writes (each read sees what was committed when it ran). Only ids and kinds are
        read (:meth:`~costeer_lab.store.BaseStore.iter_node_kinds`, ``iter_edge_keys``): node
        contents and attributes stay in the store.
        """
        edges = [(s, d, {"kind": k}) for s, d, k in self.store.iter_edge_keys()]
        G = nx.Graph()
        G.add_nodes_from((nid, {"kind": kind}) for nid, kind in self.store.iter_node_kinds())
        G.add_edges_from(edges)
        self._G = G

    # -- writes ------------------------------------------------------------------------------
    def add_nodes(self, items: Iterable[tuple[str, str, dict[str, Any]]]) -> list[str]:
        """Add ``(kind, content, attrs)`` nodes (upserts); returns their ids in order.

        Nodes already present keep their stored attributes unless new ones are given.
        """
        ids: list[str] = []
        records: dict[str, NodeRecord] = {}
        for kind, content, attrs in items:
            nid = node_id(kind, content)
            ids.append(nid)
            if nid in self.G and not attrs:
                continue
            records[nid] = NodeRecord(nid, kind, content, dict(attrs))
        if records:
            with self.store.transaction():
                self.store.put_nodes(records.values())
                by_kind: dict[str, list[NodeRecord]] = {}
                for rec in records.values():
                    if rec.kind in self.collections and rec.id not in self.G:
                        by_kind.setdefault(rec.kind, []).append(rec)
                for kind, recs in by_kind.items():
                    self.collections[kind].upsert_texts(
                        [r.id for r in recs], [r.content for r in recs]
                    )
            self.G.add_nodes_from((r.id, {"kind": r.kind}) for r in records.values())
        return ids

    def write(
        self,
        nodes: Mapping[str, NodeRecord],
        edges: Mapping[tuple[str, str], str],
        records: Sequence[tuple[str, CheckedRows]] = (),
    ) -> None:
        """Write prepared nodes (ids computed by the caller) and ``(src, dst) -> kind`` edges in
        one transaction, with the caller's ``records`` (``(kind, rows)``, written last); the
        in-memory graph and the vector indexes change only once the transaction committed.

        Nodes of embedded kinds that are new to the graph are embedded with one embedder call
        for all kinds (through the cache). Edges already in the graph are skipped. If the
        transaction fails, nothing is written and nothing in memory changes.

        The steps can be taken apart: :meth:`plan_write` (what is written, as data),
        :meth:`~costeer_lab.store.BaseStore.write_batch` of its :meth:`GraphWrite.batch`
        (here or in a writer process) and :meth:`finish_write` (``KnowledgeBaseV2.record_stream``
        plans the next batch while the writer writes one).

        Example:
            >>> from costeer_lab.embed import get_embedder
            >>> from costeer_lab.store import get_store
            >>> kg = KnowledgeGraph(get_store(":memory:"), get_embedder("hashing"), ["component"])
            >>> a, b = node_id("component", "op:mean"), node_id("component", "op:std")
            >>> kg.write({a: NodeRecord(a, "component", "op:mean"),
            ...           b: NodeRecord(b, "component", "op:std")}, {(a, b): "related"})
            >>> kg.G.number_of_edges(), len(kg.collections["component"])
            (1, 2)
        """
        plan = self.plan_write(nodes, edges)
        self.finish_write(plan, self.store.write_batch(plan.batch(records)))

    def plan_write(
        self,
        nodes: Mapping[str, NodeRecord],
        edges: Mapping[tuple[str, str], str],
        after: Sequence[GraphWrite] = (),
    ) -> GraphWrite:
        """What :meth:`write` of ``nodes`` and ``edges`` writes: the nodes, the new nodes of
        embedded kinds with their embeddings (computed here, one embedder call through the
        cache), and the new edges; nothing is written. ``after``: writes planned before
        whose :meth:`finish_write` has not run yet (their nodes and edges count as present)."""
        G = self._G  # not read for a write: without it, edges are upserted (idempotent)
        held_nodes: set[str] = set().union(*(p.nodes for p in after))
        held_edges: set[tuple[str, str]] = set().union(*(p.edges for p in after))
        new = [
            r
            for r in nodes.values()
            if r.kind in self.collections and r.id not in held_nodes and not self.has(r.id, r.kind)
        ]
        fresh = {
            (s, d): k
            for (s, d), k in edges.items()
            if (s, d) not in held_edges and (G is None or not G.has_edge(s, d))
        }
        vectors, cached = self._vector_writes(new)
        return GraphWrite(
            nodes,
            fresh,
            self.store.check_nodes(nodes.values()),
            self.store.check_edge_keys((s, d, k) for (s, d), k in fresh.items()),
            vectors,
            cached,
        )

    def finish_write(
        self, plan: GraphWrite, states: Sequence[tuple[tuple[int, str], tuple[int, str]]]
    ) -> None:
        """Bring the vector indexes and the in-memory graph along with the committed batch of
        ``plan`` (``states``: what :meth:`~costeer_lab.store.BaseStore.write_batch` returned);
        plans are finished in the order they committed."""
        for (kind, write), (before, after) in zip(plan.vectors, states, strict=True):
            self.collections[kind].take_write(write, before, after)
        G = self._G
        if G is not None:
            G.add_nodes_from((r.id, {"kind": r.kind}) for r in plan.nodes.values())
            G.add_edges_from((s, d, {"kind": k}) for (s, d), k in plan.edges.items())

    def has(self, nid: str, kind: str) -> bool:
        """Whether node ``nid`` of ``kind`` is stored, without reading :attr:`G` when it is not
        loaded: a node of an embedded kind is looked up in its vector collection (written in
        the node's transaction), any other in the store.

        Example:
            >>> from costeer_lab.embed import get_embedder
            >>> from costeer_lab.store import get_store
            >>> kg = KnowledgeGraph(get_store(":memory:"), get_embedder("hashing"), ["component"])
            >>> a = kg.add_node("component", "op:mean")
            >>> kg.has(a, "component"), kg.has(node_id("component", "op:std"), "component")
            (True, False)
        """
        if self._G is not None:
            return nid in self._G
        col = self.collections.get(kind)
        if col is not None:
            return nid in col
        return self.store.get_node(nid) is not None

    def _vector_writes(
        self, records: Sequence[NodeRecord]
    ) -> tuple[
        list[tuple[str, VectorWrite]], list[tuple[str, dict[str, npt.NDArray[np.float32]]]]
    ]:
        """Embed new nodes of embedded kinds (one cached embedder call for all kinds); their
        vector write per kind, and what goes to the embedding cache."""
        if not records:
            return [], []
        first = next(iter(self.collections.values()))
        raw = first.embedder.embed([r.content for r in records], persist=False)
        rows: dict[str, list[int]] = {}
        for i, r in enumerate(records):
            rows.setdefault(r.kind, []).append(i)
        vectors, cached = [], []
        for kind, idx in rows.items():
            col = self.collections[kind]
            write, cache = col.vector_write(
                [records[i].id for i in idx], [records[i].content for i in idx], raw[idx]
            )
            vectors.append((kind, write))
            if cache:
                cached.append((col.embedder.id, cache))
        return vectors, cached

    def add_node(self, kind: str, content: str, attrs: dict[str, Any] | None = None) -> str:
        """Add one node (see :meth:`add_nodes`); returns its id."""
        return self.add_nodes([(kind, content, attrs or {})])[0]

    def add_edges(self, edges: Iterable[tuple[str, str, str]]) -> None:
        """Add ``(src, dst, kind)`` edges (upserts)."""
        fresh = [(s, d, k) for s, d, k in edges if not self.G.has_edge(s, d)]
        if not fresh:
            return
        self.store.put_edges(EdgeRecord(s, d, k) for s, d, k in fresh)
        self.G.add_edges_from((s, d, {"kind": k}) for s, d, k in fresh)

    # -- reads -------------------------------------------------------------------------------
    def get_nodes(self, ids: Sequence[str]) -> dict[str, NodeRecord]:
        """Stored nodes by id (missing ids are absent)."""
        if not ids:
            return {}
        return {n.id: n for n in self.store.get_nodes(list(dict.fromkeys(ids)))}

    def kind(self, nid: str) -> str | None:
        """Kind of a node, or ``None`` if absent."""
        data = self.G.nodes.get(nid)
        return None if data is None else str(data.get("kind"))

    def count(self, kind: str | None = None) -> int:
        """Number of nodes (of one kind)."""
        if kind is None:
            return int(self.G.number_of_nodes())
        return sum(1 for _, k in self.G.nodes(data="kind") if k == kind)
