"""The store contract: the durable source of truth of costeer_lab.

FAISS indexes and the in-memory networkx graph are derived views rebuilt from a store; everything
else (query logs, attempts, LLM response cache, experiment state) lives in the store as JSON
records.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Self

from costeer_lab.errors import InvalidInputError
from costeer_lab.store._batch import BatchWrite, CollectionState
from costeer_lab.store._rows import CheckedRows, edge_key_rows, edge_rows, node_rows, record_rows
from costeer_lab.store._types import EdgeRecord, JSONValue, NodeRecord, Snapshot, StoreDiff

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from costeer_lab.errors import StoreError
    from costeer_lab.store._writer import WriterProcess

__all__ = ["VECTOR_PAGE", "BaseStore"]

#: Rows per page of :meth:`BaseStore.iter_vectors`: an index rebuild holds one page of rows
#: (a few copies of 6 MB for 384-d float32) besides the index. Measured on a 100k x 384
#: collection, the peak RSS growth of an exact rebuild is 272 MB with 4k-row pages, 313 MB
#: with 8k, 464 MB with 20k and 576 MB with 50k (617 MB loading it whole; the index itself holds
#: 154 MB, and faiss briefly holds its storage twice while growing it), at the same speed.
VECTOR_PAGE = 4096

JSONScalar = str | int | float | bool | None


class BaseStore(abc.ABC):
    """Abstract durable store.

    Contract every backend honours (checked by ``costeer_lab.testing.StoreTestSuite``):

    * **Durability.** A write method that has returned is durable: after a crash (even SIGKILL of
      the writing process) the store reopens and holds it. Outside :meth:`transaction`, each write
      method call is its own transaction; inside, all calls commit or roll back together.
    * **Concurrency.** Several processes may open the same store and write concurrently; writers
      wait (busy timeout) rather than fail. One store object is used by one thread at a time;
      open one per thread/process.
    * **No mutation of inputs.** Arguments (records, arrays, dicts) are never modified; returned
      objects are fresh copies the caller may keep.
    * **JSON only.** Attributes and records are JSON-serializable; nothing is pickled. Vectors are
      raw little-endian float32 bytes tagged with their embedder id and dimension.
    * **Upserts.** ``put_*`` replace an existing item with the same key; a node keeps its
      ``created_at`` and gets a new ``updated_at``; an edge keeps its ``created_at``. When one
      call holds the same key twice, the last one wins. A replaced item keeps its position in
      the insertion order.
    * **Ordering.** ``iter_*`` yield items in insertion order (ties broken by key). A node's
      place is where its id was first stored, as a node or as an edge's endpoint (ids are
      interned once, see ``_interned``): a node written after an edge that names it comes
      where the edge named it, and one deleted and written again keeps its old place.
    * **Closed stores.** :meth:`close` is idempotent; any other call on a closed store raises
      :class:`~costeer_lab.errors.StoreError`.
    * **Schema versions.** Opening a store written by a newer schema version raises
      :class:`~costeer_lab.errors.SchemaVersionError`; older versions are migrated in place.
    * **Vector collections.** A collection holds vectors of exactly one embedder id and dimension;
      writing another raises :class:`~costeer_lab.errors.EmbedderMismatchError` naming both. Every
      change to a collection increments its version (:meth:`collection_version`) and replaces
      its random tag (:meth:`collection_state`), which lets derived indexes detect that they
      are stale.
    """

    #: URL the store was opened from (``sqlite:///path``, ``sqlite:///:memory:``, ``postgresql://…``).
    url: str
    #: Opened for reading only (``SQLiteStore(path, read_only=True)``): every write raises
    #: :class:`~costeer_lab.errors.StoreError`, and helpers that would write a cache skip it.
    read_only: bool = False
    #: Why a read-only store refuses writes, when it is not simply opened read-only (a
    #: snapshot view); the message of the :class:`~costeer_lab.errors.StoreError`.
    _read_only_reason: str | None = None

    # -- lifecycle -------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def schema_version(self) -> int:
        """Schema version of the opened store."""

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """Group writes: ``with store.transaction(): ...`` commits on success, rolls back on error.

        Nested calls join the outer transaction: nothing commits before the outermost block
        ends. An exception leaving a nested block rolls back that block's writes only (a
        savepoint); the outer block may catch it and still commit its own writes.
        """

    def lock_for_update(self) -> None:
        """Inside a transaction, hold the store's write lock from now until the transaction ends.

        For a read-modify-write: what is read next (a collection version, a counter record)
        cannot change before the transaction commits, since every other writer waits. Outside a
        transaction it does nothing. This base version relies on transactions that hold the
        write lock from their start (SQLite's ``BEGIN IMMEDIATE``); a backend whose
        transactions take it at the first write (PostgreSQL) overrides it.
        """
        return None  # SQLite: ``transaction()`` began with the lock held

    def bulk_writes(self) -> AbstractContextManager[None]:
        """Tune the store for a long run of large write transactions (a bulk load) while the
        block runs; what is written and when it is durable do not change.

        This base version does nothing; SQLite raises its page cache and checkpoints its WAL
        less often inside the block, then restores both and checkpoints what is left.

        Example:
            >>> from costeer_lab.store import get_store
            >>> store = get_store(":memory:")
            >>> with store.bulk_writes():
            ...     store.put_record("run", "r1", {"ok": True})
            >>> store.count_records("run")
            1
        """
        return nullcontext()

    def writer_process(self) -> WriterProcess | None:
        """A child process writing batches into this store (:class:`WriterProcess`) while
        this one goes on, or ``None`` where there is none (this base version: a batch is
        written here, by :meth:`write_batch`). The SQLite store file has one."""
        return None

    def write_batch(self, batch: BatchWrite) -> list[tuple[CollectionState, CollectionState]]:
        """Write ``batch`` (:class:`BatchWrite`) in one transaction; returns the state of each
        of its vector writes' collections before and after that write (what a vector index
        following the store needs, :meth:`collection_state`).

        Each collection's write holds the store's write lock (:meth:`lock_for_update`) from
        before its "before" state is read, so no other writer comes in between.
        """
        states: list[tuple[CollectionState, CollectionState]] = []
        with self.transaction():
            if batch.nodes is not None:
                self.put_nodes(batch.nodes)
            for embedder_id, items in batch.cached:
                if items:
                    self.put_cached_embeddings(embedder_id, items)
            for v in batch.vectors:
                self.lock_for_update()
                before = self.collection_state(v.collection)
                self.put_vectors(
                    v.collection, v.embedder_id, v.ids, v.vectors, text_hashes=v.text_hashes
                )
                states.append((before, self.collection_state(v.collection)))
            if batch.edges is not None:
                self.put_edges(batch.edges)
            for kind, rows in batch.records:
                self.put_records(kind, rows)
        return states

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections. Idempotent."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- nodes -----------------------------------------------------------------------------
    @abc.abstractmethod
    def put_nodes(self, nodes: Iterable[NodeRecord] | CheckedRows) -> None:
        """Insert or replace nodes by id (or the rows :meth:`check_nodes` made of them)."""

    def check_nodes(self, nodes: Iterable[NodeRecord]) -> CheckedRows:
        """The rows :meth:`put_nodes` writes for ``nodes``, checked and encoded now
        (:class:`CheckedRows`: a write on another thread is prepared on this one)."""
        return CheckedRows("nodes", node_rows(nodes, time.time()))

    @abc.abstractmethod
    def get_nodes(self, ids: Sequence[str]) -> list[NodeRecord]:
        """Nodes with these ids, in the order given; missing ids are skipped."""

    def get_node(self, node_id: str) -> NodeRecord | None:
        """The node with this id, or ``None``."""
        found = self.get_nodes([node_id])
        return found[0] if found else None

    @abc.abstractmethod
    def iter_nodes(self, kind: str | None = None) -> Iterator[NodeRecord]:
        """All nodes (of one kind when given), in insertion order (see the class)."""

    def iter_node_kinds(self, kind: str | None = None) -> Iterator[tuple[str, str]]:
        """``(id, kind)`` of all nodes (of one kind when given), in insertion order.

        What an in-memory graph needs, without reading contents or decoding attributes;
        backends override this default (which reads whole nodes) with a narrow query.

        Example:
            >>> from costeer_lab.store import get_store
            >>> s = get_store(":memory:")
            >>> s.put_nodes([NodeRecord("a", "component", "op:mean", {"big": [1, 2]})])
            >>> list(s.iter_node_kinds())
            [('a', 'component')]
        """
        for n in self.iter_nodes(kind):
            yield n.id, n.kind

    @abc.abstractmethod
    def count_nodes(self, kind: str | None = None) -> int:
        """Number of nodes (of one kind when given)."""

    @abc.abstractmethod
    def delete_nodes(self, ids: Sequence[str]) -> int:
        """Delete nodes and every edge touching them; returns the number of nodes deleted."""

    # -- edges -----------------------------------------------------------------------------
    @abc.abstractmethod
    def put_edges(self, edges: Iterable[EdgeRecord] | CheckedRows) -> None:
        """Insert or replace edges keyed by ``(src, dst, kind)``. Endpoints need not exist yet.
        Takes the rows :meth:`check_edges` made as well."""

    def check_edges(self, edges: Iterable[EdgeRecord]) -> CheckedRows:
        """The rows :meth:`put_edges` writes for ``edges``, checked and encoded now."""
        return CheckedRows("edges", edge_rows(edges, time.time()))

    def check_edge_keys(self, keys: Iterable[tuple[str, str, str]]) -> CheckedRows:
        """:meth:`check_edges` of attribute-less edges given as ``(src, dst, kind)`` triples.

        Example:
            >>> from costeer_lab.store import get_store
            >>> s = get_store(":memory:")
            >>> s.put_edges(s.check_edge_keys([("a", "b", "has_component")]))
            >>> list(s.iter_edge_keys())
            [('a', 'b', 'has_component')]
        """
        return CheckedRows("edges", edge_key_rows(keys, time.time()))

    @abc.abstractmethod
    def iter_edges(self, kind: str | None = None, node: str | None = None) -> Iterator[EdgeRecord]:
        """Edges (of one kind; touching ``node`` as src or dst, when given)."""

    def iter_edge_keys(self, kind: str | None = None) -> Iterator[tuple[str, str, str]]:
        """``(src, dst, kind)`` of all edges (of one kind when given), in insertion order,
        without decoding their attributes (backends override this default with a narrow query).

        Example:
            >>> from costeer_lab.store import get_store
            >>> s = get_store(":memory:")
            >>> s.put_edges([EdgeRecord("a", "b", "has_component", {"w": 1})])
            >>> list(s.iter_edge_keys())
            [('a', 'b', 'has_component')]
        """
        for e in self.iter_edges(kind):
            yield e.src, e.dst, e.kind

    @abc.abstractmethod
    def count_edges(self, kind: str | None = None) -> int:
        """Number of edges (of one kind when given)."""

    @abc.abstractmethod
    def delete_edges(self, keys: Sequence[tuple[str, str, str]]) -> int:
        """Delete edges by ``(src, dst, kind)``; returns how many existed."""

    # -- embedding cache -------------------------------------------------------------------
    @abc.abstractmethod
    def get_cached_embeddings(
        self, embedder_id: str, text_hashes: Sequence[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Cached vectors keyed by text sha256 (hex); absent hashes are missing from the dict.

        Looks in the cache and among collection vectors stored with a text hash
        (:meth:`put_vectors`).
        """

    @abc.abstractmethod
    def put_cached_embeddings(
        self, embedder_id: str, items: Mapping[str, npt.NDArray[np.float32]]
    ) -> None:
        """Cache vectors keyed by text sha256 (hex) for ``embedder_id``."""

    # -- vector collections (what FAISS indexes are rebuilt from) -----------------------------
    @abc.abstractmethod
    def put_vectors(
        self,
        collection: str,
        embedder_id: str,
        ids: Sequence[str],
        vectors: npt.NDArray[np.float32],
        *,
        text_hashes: Sequence[str | None] | None = None,
    ) -> None:
        """Insert or replace ``vectors[i]`` under ``ids[i]`` in ``collection``.

        ``text_hashes[i]``, when given and not ``None``, is the sha256 of the text whose
        embedding (by ``embedder_id``) is exactly ``vectors[i]``: :meth:`get_cached_embeddings`
        then finds the vector here, so it is not stored a second time in the cache.

        Raises:
            EmbedderMismatchError: the collection already holds another embedder id or dimension.
            InvalidInputError: ``len(ids) != len(vectors)`` or ``vectors`` is not 2-D.
        """

    @abc.abstractmethod
    def delete_vectors(self, collection: str, ids: Sequence[str]) -> int:
        """Remove vectors by id; returns how many existed."""

    @abc.abstractmethod
    def load_vectors(
        self, collection: str
    ) -> tuple[list[str], npt.NDArray[np.float32], str | None]:
        """``(ids, matrix (n, d), embedder_id)`` of a collection; ``(…, None)`` when empty."""

    def iter_vectors(
        self, collection: str, page: int = VECTOR_PAGE
    ) -> Iterator[tuple[list[str], npt.NDArray[np.float32], str]]:
        """:meth:`load_vectors` a page of at most ``page`` rows at a time, in the same order
        (``(ids, matrix, embedder_id)`` per page; nothing for an empty collection), so a caller
        that consumes each page (an index rebuild) never holds the whole collection twice.

        Each page is its own read: a write between two pages may show through (a rebuild
        labels its index with the collection state read *before* the first page, so such an
        index is found stale at its next check). This default slices :meth:`load_vectors`; the
        backends read one page per query.

        Example:
            >>> import numpy as np
            >>> from costeer_lab.store import get_store
            >>> s = get_store(":memory:")
            >>> s.put_vectors("c", "e@1:2", ["a", "b", "c"], np.ones((3, 2), dtype=np.float32))
            >>> [ids for ids, _, _ in s.iter_vectors("c", page=2)]
            [['a', 'b'], ['c']]
        """
        if page < 1:
            raise InvalidInputError(f"page must be a positive int, got {page!r}")
        ids, matrix, embedder_id = self.load_vectors(collection)
        for lo in range(0, len(ids), page):
            yield ids[lo : lo + page], matrix[lo : lo + page], str(embedder_id)

    def count_vectors(self, collection: str) -> int:
        """Number of vectors in a collection (0 when empty or missing); one cheap read on the
        backends (this default loads the collection).

        Example:
            >>> import numpy as np
            >>> from costeer_lab.store import get_store
            >>> s = get_store(":memory:")
            >>> s.put_vectors("c", "e@1:2", ["a", "b"], np.ones((2, 2), dtype=np.float32))
            >>> s.count_vectors("c"), s.count_vectors("nothing")
            (2, 0)
        """
        return len(self.load_vectors(collection)[0])

    @abc.abstractmethod
    def collection_version(self, collection: str) -> int:
        """A counter that increases with every change to the collection (0 when never written)."""

    def collection_state(self, collection: str) -> tuple[int, str]:
        """``(version, etag)`` of a collection: its :meth:`collection_version` and a random tag
        replaced by every write (``(0, "")`` when never written). One cheap read.

        Two states are equal only if the collection went through the same write history, so a
        derived index saved at one state is exactly valid for it (a file recreated at the same
        path, or a branch rolled back and written again, gets new tags). This default, for a
        backend without tags, returns an empty tag: indexes are then matched by version only.

        Example:
            >>> import numpy as np
            >>> from costeer_lab.store import get_store
            >>> s = get_store(":memory:")
            >>> s.put_vectors("c", "e@1:2", ["a"], np.ones((1, 2), dtype=np.float32))
            >>> version, etag = s.collection_state("c")
            >>> version == s.collection_version("c"), len(etag)
            (True, 16)
        """
        return self.collection_version(collection), ""

    def collection_states(self, collections: Sequence[str]) -> dict[str, tuple[int, str]]:
        """:meth:`collection_state` of each collection in ``collections`` (one read where the
        backend can).

        Example:
            >>> import numpy as np
            >>> from costeer_lab.store import get_store
            >>> s = get_store(":memory:")
            >>> s.put_vectors("c", "e@1:2", ["a"], np.ones((1, 2), dtype=np.float32))
            >>> states = s.collection_states(["c", "never"])
            >>> states["c"] == s.collection_state("c"), states["never"]
            (True, (0, ''))
        """
        return {c: self.collection_state(c) for c in collections}

    @abc.abstractmethod
    def collection_info(self, collection: str) -> tuple[str, int] | None:
        """``(embedder_id, dim)`` of a collection, or ``None`` when it holds no vectors."""

    def search_vectors(
        self,
        collection: str,
        query: npt.NDArray[np.float32],
        k: int,
        *,
        min_score: float | None = None,
        ids: Sequence[str] | None = None,
        ef_search: int | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` ids of ``collection`` most cosine-similar to ``query``, best first.

        Scores are cosine similarities in [-1, 1] (vectors are normalised here, stored ones
        included). ``min_score`` and ``ids`` (restrict the candidates) are applied *before* the
        top ``k`` are taken, so ``k`` results come back whenever ``k`` candidates qualify. Ties
        are broken by id. An empty or missing collection gives ``[]``.

        This default is an exact scan of :meth:`load_vectors`; a backend with a native vector
        index (PostgreSQL + pgvector) overrides it and may be approximate. ``ef_search`` is the
        beam width of such an index for this search (``None``: the store's own setting); an
        exact scan has none and ignores it.

        Raises:
            InvalidInputError: ``query`` is not 1-D, its dimension differs from the collection's,
                or ``k`` < 0.
        """
        import numpy as np

        from costeer_lab.errors import InvalidInputError

        vector = np.asarray(query, dtype=np.float32)
        if vector.ndim != 1:
            raise InvalidInputError(f"search_vectors: query must be 1-D, got shape {vector.shape}")
        if k < 0:
            raise InvalidInputError(f"search_vectors: k must be >= 0, got {k}")
        names, matrix, _ = self.load_vectors(collection)
        if not names or k == 0:
            return []
        if matrix.shape[1] != vector.shape[0]:
            raise InvalidInputError(
                f"search_vectors: query has dimension {vector.shape[0]}, collection "
                f"{collection!r} holds dimension {matrix.shape[1]}"
            )
        allowed = None if ids is None else set(ids)
        norms = np.linalg.norm(matrix, axis=1) * max(float(np.linalg.norm(vector)), 1e-30)
        scores = (matrix @ vector) / np.maximum(norms, 1e-30)
        hits = [
            (name, float(score))
            for name, score in zip(names, scores.tolist(), strict=True)
            if (allowed is None or name in allowed) and (min_score is None or score >= min_score)
        ]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits[:k]

    # -- JSON records ------------------------------------------------------------------------
    @abc.abstractmethod
    def put_records(self, kind: str, items: Iterable[tuple[str, JSONValue]] | CheckedRows) -> None:
        """Insert or replace JSON records ``(key, data)`` of a kind (or the rows
        :meth:`check_records` made of them)."""

    def check_records(self, kind: str, items: Iterable[tuple[str, JSONValue]]) -> CheckedRows:
        """The rows :meth:`put_records` writes for ``items``, checked and encoded now."""
        return CheckedRows("records", record_rows(kind, items, time.time()))

    def put_record(self, kind: str, key: str, data: JSONValue) -> None:
        """Insert or replace one JSON record."""
        self.put_records(kind, [(key, data)])

    @abc.abstractmethod
    def get_record(self, kind: str, key: str) -> JSONValue | None:
        """The record's data, or ``None``."""

    def get_records(self, kind: str, keys: Sequence[str]) -> dict[str, JSONValue]:
        """``{key: data}`` of the records of ``kind`` among ``keys`` (missing keys are left out).

        Backends override it with one query (a search reading its hits pays one round trip).

        Example:
            >>> from costeer_lab.store import get_store
            >>> store = get_store(":memory:")
            >>> store.put_record("note", "a", {"x": 1})
            >>> store.get_records("note", ["a", "b"])
            {'a': {'x': 1}}
        """
        found = ((key, self.get_record(kind, key)) for key in keys)
        return {key: data for key, data in found if data is not None}

    @abc.abstractmethod
    def iter_records(
        self, kind: str, where: Mapping[str, JSONScalar] | None = None
    ) -> Iterator[tuple[str, JSONValue]]:
        """Records of a kind in insertion order; ``where`` keeps those whose top-level JSON
        fields equal the given values (applied in the backend, not in Python)."""

    @abc.abstractmethod
    def count_records(self, kind: str, where: Mapping[str, JSONScalar] | None = None) -> int:
        """Number of records of a kind (matching ``where``)."""

    @abc.abstractmethod
    def delete_records(self, kind: str, keys: Sequence[str]) -> int:
        """Delete records; returns how many existed."""

    # -- metadata ----------------------------------------------------------------------------
    @abc.abstractmethod
    def get_meta(self, key: str) -> str | None:
        """A store-level metadata value."""

    @abc.abstractmethod
    def set_meta(self, key: str, value: str) -> None:
        """Set a store-level metadata value."""

    # -- snapshots (``_snapshots.py``; both shipped backends implement them) -----------------
    def _no_snapshots(self) -> StoreError:
        from costeer_lab.errors import StoreError

        return StoreError(f"{type(self).__name__} does not support snapshots")

    def snapshot(self, name: str) -> Snapshot:
        """Mark the store's current state under ``name`` (O(1); see ``_snapshots.py``).

        Raises:
            InvalidInputError: a snapshot of that name exists.
        """
        raise self._no_snapshots()

    def snapshots(self) -> list[Snapshot]:
        """The store's snapshots, oldest first."""
        return []

    def drop_snapshot(self, name: str) -> None:
        """Forget a snapshot (its undo entries no other snapshot needs are pruned)."""
        raise self._no_snapshots()

    def rollback(self, name: str) -> list[str]:
        """Return the store to snapshot ``name`` in one transaction; later snapshots are
        dropped and their names returned."""
        raise self._no_snapshots()

    def diff(self, a: str, b: str | None = None) -> StoreDiff:
        """What changed from snapshot ``a`` to snapshot ``b`` (``None``: now)."""
        raise self._no_snapshots()

    def at_snapshot(self, name: str) -> BaseStore:
        """A new, read-only store object showing this store as of snapshot ``name``."""
        raise self._no_snapshots()

    def branch(self, snapshot: str, target: BaseStore) -> BaseStore:
        """Fill the empty store ``target`` with the state of ``snapshot``; returns it."""
        raise self._no_snapshots()
