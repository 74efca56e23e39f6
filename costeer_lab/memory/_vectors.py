"""Vector search of a memory collection, chosen by the store: FAISS on SQLite, SQL on PostgreSQL.

The store's vector collection is the source of truth on every backend.

* A store that overrides :meth:`BaseStore.search_vectors` with a native vector index (PostgreSQL +
  pgvector) is searched in the database: the similarity threshold and the candidate ids are
  applied in SQL, so every agent on every machine sees every committed write at once.
* Otherwise (SQLite) searches go through a :class:`~costeer_lab.index.FaissIndex` built from the
  store in this process. It follows this object's own writes and, before each search, compares
  the store's collection version with its own: when another process or store object changed the
  collection, it *catches up* by id — it reads the collection a page at a time, adds the ids it
  lacks and drops the ids the store no longer holds — instead of rebuilding (a memory id names an
  immutable text, so an id's vector never changes). The index is exact below
  ``settings.hnsw_above`` vectors and HNSW from there on (``index_kind="auto"``), or the kind
  the settings fix.

So the backend is picked by the store URL alone: ``sqlite:///…`` or ``postgresql://…``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from costeer_lab.store import BaseStore

if TYPE_CHECKING:
    from costeer_lab.index import FaissIndex
    from costeer_lab.settings import MemorySettings

__all__ = ["MemoryVectors", "has_native_search"]

_Matrix = npt.NDArray[np.float32]


def has_native_search(store: BaseStore) -> bool:
    """True when ``store`` searches vectors itself (it overrides ``BaseStore.search_vectors``).

    Example:
        >>> from costeer_lab.store import get_store
        >>> has_native_search(get_store(":memory:"))
        False
    """
    return type(store).search_vectors is not BaseStore.search_vectors


class MemoryVectors:
    """One vector collection of a memory: writes to the store, searches by the best backend.

    Args:
        store: the store holding the collection.
        collection: collection name.
        embedder_id: id of the embedder whose vectors the collection holds.
        dim: their dimension.
        settings: index kind, HNSW threshold and beam width.
    """

    def __init__(
        self,
        store: BaseStore,
        collection: str,
        embedder_id: str,
        dim: int,
        settings: MemorySettings,
    ) -> None:
        self.store = store
        self.collection = collection
        self.embedder_id = embedder_id
        self.dim = dim
        self.settings = settings
        self.native = has_native_search(store)
        self._index: FaissIndex | None = None
        #: How the FAISS index was last brought up to date (``built``, ``caught_up``, …).
        self.last_sync = "none"

    @property
    def backend(self) -> str:
        """``"store"`` (the database searches) or ``"faiss-exact"`` / ``"faiss-hnsw"``."""
        if self.native:
            return "store"
        kind = self._index.kind if self._index is not None else self._kind_for(0)
        return f"faiss-{kind}"

    def add(self, ids: Sequence[str], vectors: _Matrix) -> None:
        """Write ``vectors`` under ``ids`` (joins the caller's transaction) and follow them."""
        if not ids:
            return
        with self.store.transaction():
            before = self.store.collection_version(self.collection)
            self.store.put_vectors(self.collection, self.embedder_id, list(ids), vectors)
            after = self.store.collection_version(self.collection)
        index = self._index
        if index is not None and index.source_version == before:
            index.upsert(list(ids), vectors)
            index.source_version = after
            self._maybe_switch_kind()

    def search(
        self,
        vector: _Matrix,
        k: int,
        *,
        min_score: float | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        """``(id, cosine)`` of the ``k`` best matches scoring ``>= min_score``, best first."""
        if k <= 0 or (ids is not None and not ids):
            return []
        if self.native:
            return self.store.search_vectors(
                self.collection,
                vector,
                k,
                min_score=min_score,
                ids=ids,
                ef_search=self.settings.ef_search,
            )
        index = self.sync()
        if len(index) == 0:
            return []
        result = index.search(vector, k, filter=None if ids is None else set(ids))
        return [
            (item, float(score))
            for item, score in zip(result.ids, result.scores, strict=True)
            if min_score is None or score >= min_score
        ]

    # -- the FAISS view ----------------------------------------------------------------------
    def _kind_for(self, n: int) -> str:
        from costeer_lab.index import effective_kind

        return effective_kind(self.settings.index_kind, n, self.settings.hnsw_above)

    def sync(self) -> FaissIndex:
        """The FAISS index, built or caught up with the store's collection when stale."""
        from costeer_lab.index import FaissIndex

        version = self.store.collection_version(self.collection)
        index = self._index
        if index is not None and index.source_version == version:
            return index
        kind = self._kind_for(self.store.count_vectors(self.collection))
        pages = self.store.iter_vectors(self.collection)  # a page at a time: never all twice
        if index is None or kind != index.kind:
            index = FaissIndex(
                self.dim,
                kind="hnsw" if kind == "hnsw" else "exact",
                embedder_id=self.embedder_id,
                ef_search=self.settings.ef_search,
            )
            for names, matrix, _ in pages:
                index.add(names, matrix)
            self.last_sync = "built"
        else:
            held = set(index.ids())
            for names, matrix, _ in pages:
                held.difference_update(names)  # what is left at the end: gone from the store
                fresh = [i for i, name in enumerate(names) if name not in index]
                if fresh:
                    index.add([names[i] for i in fresh], matrix[fresh])
            if held:
                index.remove(held)
            self.last_sync = "caught_up"
        index.source_collection, index.source_version = self.collection, version
        self._index = index
        return index

    def _maybe_switch_kind(self) -> None:
        index = self._index
        if index is not None and self._kind_for(len(index)) != index.kind:
            index.source_version = -1  # the next search rebuilds with the other kind
