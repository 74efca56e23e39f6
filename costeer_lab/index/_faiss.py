"""``FaissIndex``: cosine-similarity search over string ids, exact or HNSW, with pre-filtering.

Design:

* Vectors are L2-normalised on the way in (add and search), so inner product is cosine similarity.
* ``kind="exact"`` is a faiss ``IndexFlatIP``; ``kind="hnsw"`` an inner-product
  ``IndexHNSWFlat``. String ids map to int64 *labels* kept beside the faiss index (two dicts);
  a label is the vector's row in the index's flat storage.
* Removing or replacing an id drops its label from the mapping and leaves a *tombstone* row that
  searches skip (HNSW graphs cannot delete; for both kinds this keeps removal O(1)). When
  tombstones exceed :attr:`FaissIndex.max_tombstone_fraction` of the rows, the index is rebuilt
  from the live rows, read back from the flat storage.
* Filters are applied *before* ranking, so ``k`` results come back whenever at least ``k`` items
  match. A selective filter (at most :attr:`FaissIndex.exact_below` matches, or under
  :attr:`FaissIndex.exact_fraction` / :attr:`FaissIndex.hnsw_exact_fraction` of the index) is
  scored exactly by a numpy scan of just the matching rows; a broader one goes to faiss with an
  ``IDSelectorBitmap``. Any query for which the HNSW walk found fewer than ``min(k, matches)``
  results is re-scored exactly, so results are always complete.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from costeer_lab.errors import InvalidInputError
from costeer_lab.index import _store_io
from costeer_lab.index._ops import (
    faiss_topk,
    labels_for_filter,
    new_faiss_index,
    scan_topk,
    storage_view,
)
from costeer_lab.index._result import SearchResult
from costeer_lab.index._threads import apply_faiss_threads
from costeer_lab.index._validate import (
    Filter,
    check_embedder,
    check_ids,
    check_k,
    normalize_rows,
)

if TYPE_CHECKING:
    from costeer_lab.store import BaseStore

__all__ = ["FaissIndex", "IndexKind", "Origin"]

IndexKind = Literal["exact", "hnsw"]
#: How an index object came to be: built in memory, loaded from a file, rebuilt from a store,
#: or made for an empty store collection.
Origin = Literal["new", "loaded", "rebuilt", "empty"]
_Labels = npt.NDArray[np.int64]
_Matrix = npt.NDArray[np.float32]


class FaissIndex:
    """A cosine-similarity vector index with string ids (exact or HNSW).

    Args:
        dim: vector dimension.
        kind: ``"exact"`` (flat, exact scores) or ``"hnsw"`` (graph, approximate).
        embedder_id: the embedder whose vectors the index holds (``None``: adopted from the
            first ``add`` that names one; never checked while unset).
        hnsw_m / ef_construction / ef_search: HNSW graph degree and beam widths (defaults 32 /
            80 / 128: recall@64 >= 0.99 against exact up to 100k task descriptions, see
            ``benchmarks/index_auto.py``). With one faiss thread (the default) a graph built
            from the same rows in the same order is the same graph.

    Not thread-safe for writes: use one index from one thread at a time (searches do not modify
    it and may run concurrently with each other, but not with ``add``/``upsert``/``remove``).
    A remove that pushes tombstones over :attr:`max_tombstone_fraction` rebuilds the index,
    which for HNSW costs as much as adding the live vectors again.

    Example:
        >>> import numpy as np
        >>> idx = FaissIndex(3)
        >>> idx.add(["a", "b"], np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32))
        >>> idx.search(np.array([1.0, 0.1, 0.0]), k=1).ids
        ('a',)
    """

    #: Filters matching at most this many items are scored by a numpy scan of their rows.
    exact_below: int = 2048
    #: Exact kind: filters matching less than this fraction of the index are scanned too; broader
    #: ones go to faiss with a bitmap selector (paired timings on 100k x 384, 1 thread: 2% of
    #: rows 0.34 ms scanned vs 0.45 ms faiss; 10%: 3.8 vs 2.8 ms).
    exact_fraction: float = 0.05
    #: HNSW: the same threshold against the graph walk (30k x 384: 5% of rows 0.30 ms scanned vs
    #: 0.64 ms walked; 10%: 0.69 vs 0.70 ms; 20%: 1.7 vs 0.72 ms).
    hnsw_exact_fraction: float = 0.10
    #: Rebuild the index when tombstones exceed this fraction of the stored rows.
    max_tombstone_fraction: float = 0.25

    def __init__(
        self,
        dim: int,
        *,
        kind: IndexKind = "exact",
        embedder_id: str | None = None,
        hnsw_m: int = 32,
        ef_construction: int = 80,
        ef_search: int = 128,
    ) -> None:
        for name, value in (
            ("dim", dim),
            ("hnsw_m", hnsw_m),
            ("ef_construction", ef_construction),
            ("ef_search", ef_search),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise InvalidInputError(f"{name} must be a positive int, got {value!r}")
        if kind not in ("exact", "hnsw"):
            raise InvalidInputError(f"kind must be 'exact' or 'hnsw', got {kind!r}")
        if embedder_id is not None and not isinstance(embedder_id, str):
            raise InvalidInputError(f"embedder_id must be a str or None, got {embedder_id!r}")
        self.dim = dim
        self.kind: IndexKind = kind
        self.embedder_id = embedder_id
        self.hnsw_m = hnsw_m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        #: Store collection and its version this index reflects (set by :meth:`from_store`).
        self.source_collection: str | None = None
        self.source_version: int | None = None
        #: The collection's etag at that version (see ``BaseStore.collection_state``).
        self.source_etag: str | None = None
        #: Why a persisted file was rejected when this index was rebuilt (``None``: it was not).
        self.load_error: str | None = None
        #: How this object was obtained (see :data:`Origin`).
        self.origin: Origin = "new"
        self._label_of: dict[str, int] = {}
        self._id_of: dict[int, str] = {}
        self._next_label = 0
        #: Changes whenever an existing id may get another label or lose its label (a removal,
        #: a rebuild, a load); adding new ids keeps it. Labels from :meth:`labels_of` stay
        #: valid while it is unchanged.
        self.label_epoch = 0
        apply_faiss_threads()
        self._view: _Matrix | None = None
        self._live: npt.NDArray[np.bool_] | None = None
        self._faiss: Any = self._new_faiss_index()

    # -- basic protocol ----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._label_of)

    def __contains__(self, item: object) -> bool:
        return isinstance(item, str) and item in self._label_of

    def __repr__(self) -> str:
        return f"<FaissIndex {self.kind} dim={self.dim} n={len(self)} embedder={self.embedder_id}>"

    def ids(self) -> list[str]:
        """The ids in the index (insertion order; an upserted id moves to the end)."""
        return list(self._label_of)

    @property
    def n_tombstones(self) -> int:
        """Rows still stored but no longer live (removed or replaced ids awaiting a rebuild)."""
        return int(self._index.ntotal) - len(self)

    # -- writes ------------------------------------------------------------------------------
    def add(self, ids: Sequence[str], vectors: object, *, embedder_id: str | None = None) -> None:
        """Add new vectors under new ids.

        Raises:
            InvalidInputError: empty input, non-string or repeated ids, an id already present
                (use :meth:`upsert`), a zero or non-finite vector.
            DimensionMismatchError: the vectors' dimension is not :attr:`dim`.
            EmbedderMismatchError: ``embedder_id`` differs from the index's.
        """
        id_list = check_ids(ids)
        check_embedder(self.embedder_id, embedder_id)
        matrix = normalize_rows(vectors, self.dim, n_rows=len(id_list))
        present = [i for i in id_list if i in self._label_of]
        if present:
            raise InvalidInputError(
                f"{len(present)} id(s) already in the index, e.g. {present[0]!r}; "
                "use upsert() to replace them"
            )
        self._append(id_list, matrix)
        self.embedder_id = self.embedder_id or embedder_id

    def upsert(
        self, ids: Sequence[str], vectors: object, *, embedder_id: str | None = None
    ) -> None:
        """Add vectors, replacing those of ids already present. Same errors as :meth:`add`."""
        id_list = check_ids(ids)
        check_embedder(self.embedder_id, embedder_id)
        matrix = normalize_rows(vectors, self.dim, n_rows=len(id_list))
        self._drop([i for i in id_list if i in self._label_of])
        self._append(id_list, matrix)
        self.embedder_id = self.embedder_id or embedder_id
        self._maybe_compact()

    def remove(self, ids: Collection[str]) -> int:
        """Remove ids (unknown ones are ignored); returns how many were present."""
        if isinstance(ids, str | bytes) or not isinstance(ids, Collection):
            raise InvalidInputError(f"ids must be a collection of strings, got {ids!r:.60}")
        bad = [i for i in ids if not isinstance(i, str)]
        if bad:
            raise InvalidInputError(f"ids must be strings, got {type(bad[0]).__name__} {bad[0]!r}")
        present = list(dict.fromkeys(i for i in ids if i in self._label_of))
        self._drop(present)
        self._maybe_compact()
        return len(present)

    # -- search ------------------------------------------------------------------------------
    def search(
        self,
        query: object,
        k: int,
        *,
        filter: Filter | None = None,
        embedder_id: str | None = None,
    ) -> SearchResult:
        """The ``k`` ids most similar to ``query`` (shape ``(dim,)`` or ``(1, dim)``).

        Args:
            query: the query vector (normalised here).
            k: how many results to return at most.
            filter: only ids in this collection / for which this predicate is true are ranked.
            embedder_id: the query's embedder, checked against the index's when both are set.

        Example:
            >>> import numpy as np
            >>> idx = FaissIndex(2)
            >>> idx.add(["x", "y"], np.eye(2, dtype=np.float32))
            >>> idx.search(np.array([1.0, 1.0]), 5, filter={"y"}).ids
            ('y',)
        """
        arr = np.asarray(query)
        if arr.ndim == 1:
            arr = arr[None, :]
        elif arr.ndim != 2 or arr.shape[0] != 1:
            raise InvalidInputError(
                f"query must have shape ({self.dim},) or (1, {self.dim}), got {arr.shape}; "
                "use search_batch() for several queries"
            )
        return self.search_batch(arr, k, filter=filter, embedder_id=embedder_id)[0]

    def search_batch(
        self,
        queries: object,
        k: int,
        *,
        filter: Filter | None = None,
        embedder_id: str | None = None,
    ) -> list[SearchResult]:
        """One :class:`SearchResult` per row of ``queries`` (shape ``(m, dim)``), same filter."""
        k = check_k(k)
        check_embedder(self.embedder_id, embedder_id)
        q = normalize_rows(queries, self.dim, what="queries")
        cand = None if filter is None else labels_for_filter(self._label_of, filter)
        return self._search_rows(q, k, cand)

    def labels_of(self, ids: Sequence[str]) -> _Labels:
        """The labels of ``ids`` (``-1`` for an id not in the index), valid while
        :attr:`label_epoch` is unchanged; pass them to :meth:`search_labels`.

        Example:
            >>> import numpy as np
            >>> idx = FaissIndex(2)
            >>> idx.add(["x", "y"], np.eye(2, dtype=np.float32))
            >>> idx.labels_of(["y", "zz"]).tolist()
            [1, -1]
        """
        get = self._label_of.get
        return np.fromiter((get(i, -1) for i in ids), dtype=np.int64, count=len(ids))

    def search_labels(self, query: object, k: int, labels: object) -> SearchResult:
        """:meth:`search` restricted to the distinct, live ``labels`` (from :meth:`labels_of`):
        the same result as a ``filter`` of their ids, without a string look-up per allowed id.

        Example:
            >>> import numpy as np
            >>> idx = FaissIndex(2)
            >>> idx.add(["x", "y"], np.eye(2, dtype=np.float32))
            >>> idx.search_labels(np.array([1.0, 1.0]), 5, idx.labels_of(["y"])).ids
            ('y',)
        """
        k = check_k(k)
        q = normalize_rows(np.asarray(query).reshape(1, -1), self.dim, what="queries")
        cand = np.asarray(labels, dtype=np.int64).reshape(-1)
        if cand.size and (cand.min() < 0 or cand.max() >= self._next_label):
            raise InvalidInputError(
                f"labels must lie in [0, {self._next_label}), got {cand.min()}..{cand.max()}"
            )
        return self._search_rows(q, k, cand)[0]

    def _search_rows(self, q: _Matrix, k: int, cand: _Labels | None) -> list[SearchResult]:
        """Search normalised queries among the ``cand`` labels (all live rows when ``None``)."""
        n_cand = len(self) if cand is None else int(cand.size)
        kk = min(k, n_cand)
        if kk == 0:
            return [SearchResult((), (), k, n_cand) for _ in range(len(q))]
        rows = cand
        if rows is None and self.n_tombstones:
            rows = np.flatnonzero(self._live_mask())
        fraction = self.exact_fraction if self.kind == "exact" else self.hnsw_exact_fraction
        if rows is not None and (n_cand <= self.exact_below or n_cand < fraction * len(self)):
            labels, scores = scan_topk(self._vectors(), q, kk, rows)
        else:
            mask = None
            if cand is not None:
                mask = np.zeros(int(self._index.ntotal), dtype=bool)
                mask[cand] = True
            elif rows is not None:
                mask = self._live_mask()
            labels, scores = faiss_topk(self._index, q, kk, mask, self.ef_search)
            short = np.flatnonzero((labels < 0).any(axis=1))
            if short.size:  # the HNSW walk found too few matches: score those rows exactly
                every = rows if rows is not None else np.arange(len(self), dtype=np.int64)
                labels[short], scores[short] = scan_topk(self._vectors(), q[short], kk, every)
        return [self._to_result(labels[i], scores[i], k, n_cand) for i in range(len(q))]

    # -- persistence (implemented in _store_io) ----------------------------------------------
    def save(self, path: str | Path) -> None:
        """Write the index to ``path`` atomically (JSON header, faiss bytes, sha256; no pickle)."""
        _store_io.save_index(self, path)

    @classmethod
    def load(cls, path: str | Path) -> FaissIndex:
        """Read an index written by :meth:`save`.

        Raises:
            VectorIndexError: missing, truncated or corrupt file, or an inconsistent header.
        """
        return _store_io.load_index(path, cls)

    @classmethod
    def from_store(
        cls,
        store: BaseStore,
        collection: str,
        *,
        path: str | Path | None = None,
        kind: IndexKind = "exact",
        save: bool = True,
        **kw: Any,
    ) -> FaissIndex:
        """Load the index at ``path`` if it is fresh for ``store``'s ``collection``, else rebuild
        (and save it to ``path`` when ``save``).

        See :func:`costeer_lab.index._store_io.index_from_store`; the returned index's
        :attr:`origin` says whether it was ``"loaded"``, ``"rebuilt"`` or ``"empty"``.
        """
        return _store_io.index_from_store(
            cls, store, collection, path=path, kind=kind, save=save, **kw
        )

    def export_rows(self) -> tuple[Any, list[str], list[int], int]:
        """What an index file stores besides the settings: the faiss index, the live ids and
        their labels (rows of the faiss index), and the next free label."""
        return self._index, list(self._label_of), list(self._label_of.values()), self._next_label

    def import_rows(self, raw: Any, ids: list[str], labels: list[int], next_label: int) -> None:
        """Replace the content by rows of :meth:`export_rows` (the caller checks them: see
        :func:`costeer_lab.index._store_io.load_index`)."""
        self._index = raw
        self._label_of = dict(zip(ids, labels, strict=True))
        self._id_of = dict(zip(labels, ids, strict=True))
        self._next_label = next_label

    # -- internals ---------------------------------------------------------------------------
    @property
    def _index(self) -> Any:
        """The faiss index (``IndexFlatIP`` or ``IndexHNSWFlat``)."""
        return self._faiss

    @_index.setter
    def _index(self, value: Any) -> None:
        self._faiss, self._view, self._live = value, None, None
        self.label_epoch += 1

    def _live_mask(self) -> npt.NDArray[np.bool_]:
        """A cached boolean mask of live rows (dropped whenever ids change)."""
        if self._live is None:
            mask = np.zeros(int(self._faiss.ntotal), dtype=bool)
            mask[np.fromiter(self._id_of, dtype=np.int64, count=len(self._id_of))] = True
            self._live = mask
        return self._live

    def _vectors(self) -> _Matrix:
        """The stored rows (a cached no-copy view; dropped whenever the index changes)."""
        if self._view is None:
            self._view = storage_view(self._faiss)
        return self._view

    def _new_faiss_index(self) -> Any:
        return new_faiss_index(
            self.kind, self.dim, self.hnsw_m, self.ef_construction, self.ef_search
        )

    def _append(self, ids: list[str], matrix: _Matrix) -> None:
        if int(self._index.ntotal) != self._next_label:
            raise AssertionError("labels must equal storage rows")
        self._view = self._live = None
        self._index.add(matrix)
        for lab, s in enumerate(ids, start=self._next_label):
            self._label_of[s] = lab
            self._id_of[lab] = s
        self._next_label += len(ids)

    def _drop(self, ids: list[str]) -> None:
        self._live = None
        if ids:
            self.label_epoch += 1
        for s in ids:
            del self._id_of[self._label_of.pop(s)]

    def _maybe_compact(self) -> None:
        """Rebuild the index from live rows when tombstones pile up."""
        dead = self.n_tombstones
        if dead == 0 or dead <= self.max_tombstone_fraction * int(self._index.ntotal):
            return
        live = np.flatnonzero(self._live_mask())
        matrix = self._vectors()[live].copy()
        ids = [self._id_of[lab] for lab in live.tolist()]
        self._index = self._new_faiss_index()
        self._label_of, self._id_of, self._next_label = {}, {}, 0
        if ids:
            self._append(ids, matrix)

    def _to_result(self, labels: Any, scores: Any, k: int, n_cand: int) -> SearchResult:
        keep = labels >= 0
        return SearchResult(
            ids=tuple(map(self._id_of.__getitem__, labels[keep].tolist())),
            scores=tuple(scores[keep].tolist()),  # Python floats
            k=k,
            n_candidates=n_cand,
        )
