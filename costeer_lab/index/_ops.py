"""Low-level faiss operations of :class:`~costeer_lab.index.FaissIndex`.

Labels are positions: row ``i`` of an index's flat storage holds the vector with label ``i``.
These functions work on label arrays; only :func:`labels_for_filter` sees string ids.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, KeysView, Mapping, Set
from typing import Any, Literal

import faiss
import numpy as np
import numpy.typing as npt

from costeer_lab.errors import InvalidInputError
from costeer_lab.index._validate import Filter

__all__ = ["faiss_topk", "labels_for_filter", "new_faiss_index", "scan_topk", "storage_view"]

Labels = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]
_faiss_any: Any = faiss  # faiss ships partial stubs; HNSW-specific names are reached untyped
#: Queries scored together by :func:`scan_topk` (bounds its temporary memory).
_SCAN_CHUNK = 64
#: :func:`scan_topk` gathers the allowed rows up to this share of all rows, else scans them all.
_GATHER_SHARE = 0.3


def new_faiss_index(
    kind: Literal["exact", "hnsw"], dim: int, hnsw_m: int, ef_construction: int, ef_search: int
) -> Any:
    """An empty ``IndexFlatIP`` or inner-product ``IndexHNSWFlat``."""
    if kind == "exact":
        return faiss.IndexFlatIP(dim)
    index: Any = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_construction
    index.hnsw.efSearch = ef_search
    return index


def storage_view(index: Any) -> Matrix:
    """A read-only view (no copy) of the stored vectors; invalid after the index changes."""
    flat: Any = faiss.downcast_index(index.storage) if hasattr(index, "storage") else index
    n, dim = int(flat.ntotal), int(flat.d)
    if n == 0:
        return np.zeros((0, dim), dtype=np.float32)
    view: Matrix = faiss.rev_swig_ptr(flat.get_xb(), n * dim).reshape(n, dim)
    return view


def faiss_topk(
    index: Any, queries: Matrix, k: int, allowed: npt.NDArray[np.bool_] | None, ef_search: int
) -> tuple[Labels, Matrix]:
    """faiss search restricted to rows where ``allowed`` is True (all rows when ``None``).

    Rows with fewer than ``k`` results are padded with label ``-1``.
    """
    bits = None
    if isinstance(index, faiss.IndexHNSWFlat):
        params: Any = _faiss_any.SearchParametersHNSW(efSearch=max(ef_search, k))
    else:
        params = faiss.SearchParameters()
    if allowed is not None:
        bits = np.packbits(allowed, bitorder="little")
        params.sel = faiss.IDSelectorBitmap(len(bits), faiss.swig_ptr(bits))
    scores, labels = index.search(queries, k, params=params)
    del bits  # the selector points into ``bits``: it had to live until the search returned
    return labels, scores


def scan_topk(vectors: Matrix, queries: Matrix, k: int, allowed: Labels) -> tuple[Labels, Matrix]:
    """Exact top-``k`` among the ``allowed`` rows of ``vectors`` by a numpy scan.

    A small ``allowed`` set is gathered and scanned; a large one is cheaper to score by scanning
    every row and keeping the allowed columns. Ties are broken by label. Gathered rows are
    taken in label order, so the scores do not depend on the order of ``allowed`` (a set's
    iteration order changes with the hash seed; a matrix product's rounding with the row order).
    Requires ``1 <= k <= len(allowed)``.
    """
    full = len(allowed) > _GATHER_SHARE * len(vectors)
    if not full:
        allowed = np.sort(allowed)
    sub = vectors if full else vectors[allowed]
    labels = np.empty((len(queries), k), dtype=np.int64)
    scores = np.empty((len(queries), k), dtype=np.float32)
    for start in range(0, len(queries), _SCAN_CHUNK):
        sims = queries[start : start + _SCAN_CHUNK] @ sub.T
        if full:
            sims = sims[:, allowed]
        for r, row in enumerate(sims, start=start):
            top = np.argpartition(-row, k - 1)[:k] if k < row.size else np.arange(row.size)
            top = top[np.lexsort((allowed[top], -row[top]))]
            labels[r], scores[r] = allowed[top], row[top]
    return labels, scores


def labels_for_filter(label_of: Mapping[str, int], filter: Filter) -> Labels:
    """Distinct labels of the ids allowed by ``filter`` (ids not in ``label_of`` are ignored).

    Raises:
        InvalidInputError: ``filter`` is a bare string, not a collection or predicate, or holds
            a non-string item.

    Example:
        >>> labels_for_filter({"a": 0, "b": 1, "c": 2}, ["c", "a", "zz"]).tolist()
        [0, 2]
        >>> labels_for_filter({"a": 0, "b": 1}, lambda s: s != "a").tolist()
        [1]
    """
    if callable(filter):
        pred: Callable[[str], bool] = filter
        return np.fromiter((lab for s, lab in label_of.items() if pred(s)), dtype=np.int64)
    if isinstance(filter, str | bytes) or not isinstance(filter, Collection):
        raise InvalidInputError(
            "filter must be a collection of string ids or a predicate, got "
            f"{type(filter).__name__} {filter!r:.60}"
        )
    items = list(filter)
    try:
        found = list(map(label_of.get, items))
    except TypeError as exc:  # an unhashable item
        raise InvalidInputError(f"filter ids must be strings: {exc}") from exc
    if None in found:  # type checks only on misses: hits are strings already
        bad = next((x for x in items if not isinstance(x, str)), None)
        if bad is not None:
            raise InvalidInputError(f"filter ids must be strings, got {bad!r:.60}")
        found = [lab for lab in found if lab is not None]
    labels = np.array(found, dtype=np.int64)
    return labels if isinstance(filter, Set | KeysView) else np.unique(labels)
