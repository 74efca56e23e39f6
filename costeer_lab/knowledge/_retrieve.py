"""Similarity search among successful task descriptions, without scanning the KB in Python."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from costeer_lab.graph import TASK_DESCRIPTION

if TYPE_CHECKING:
    from costeer_lab.index import SearchResult
    from costeer_lab.knowledge._kb_v2 import KnowledgeBaseV2

__all__ = ["NEAR_K", "nearest", "search_solved", "search_successful"]

#: Size of the per-task unfiltered neighbour list shared by the similar and component queries.
NEAR_K = 64

#: Allowed sets up to this size are passed to the index as a pre-filter directly.
SMALL_FILTER = 2048
#: Unfiltered over-fetch factor before falling back to a filtered search.
OVERFETCH = 4


def search_successful(
    kb: KnowledgeBaseV2,
    vector: npt.NDArray[np.float32],
    k: int,
    allowed: Collection[str] | Callable[[str], bool],
    fallback: Collection[str] | None = None,
    near: SearchResult | None = None,
) -> list[tuple[str, float]]:
    """The ``k`` task descriptions most similar to ``vector`` among ``allowed`` ones, best first.

    An unfiltered search of ``OVERFETCH * k`` neighbours is tried first: when at least ``k`` of
    them are allowed they are exactly the filtered top-``k`` (ranking restricted to a subset keeps
    its order). Otherwise — or when ``allowed`` is a small set — the index is searched with the
    filter applied before ranking (``fallback``, a superset given as ids, is used as the
    pre-filter when ``allowed`` is a predicate), so ``k`` results come back whenever ``k`` are
    allowed. ``near``, an unfiltered result of the same query computed once per task, replaces
    the over-fetch search when given (:func:`nearest`). The index must be in sync with the
    store (:meth:`KnowledgeBaseV2.sync_indexes`).

    :func:`search_solved` is the same search over solved task descriptions given as ordinals.
    """
    index = kb.graph.collections[TASK_DESCRIPTION].index
    if k <= 0 or len(index) == 0:
        return []
    if not callable(allowed) and len(allowed) <= SMALL_FILTER:
        if not allowed:
            return []
        res = index.search(vector, k, filter=allowed)
        return list(zip(res.ids, res.scores, strict=True))
    ok: Callable[[str], bool] = allowed if callable(allowed) else allowed.__contains__
    usable = near is not None and len(near.ids) >= min(k * OVERFETCH, len(index))
    res = near if near is not None and usable else index.search(vector, k * OVERFETCH)
    hits = [(i, s) for i, s in zip(res.ids, res.scores, strict=True) if ok(i)]
    if len(hits) >= k or len(res.ids) == len(index):
        return hits[:k]
    pre = allowed if not callable(allowed) else fallback
    res = index.search(vector, k * OVERFETCH if callable(allowed) else k, filter=pre)
    return [(i, s) for i, s in zip(res.ids, res.scores, strict=True) if ok(i)][:k]


def search_solved(
    kb: KnowledgeBaseV2,
    vector: npt.NDArray[np.float32],
    k: int,
    ok: Callable[[str], bool],
    ordinals: npt.NDArray[np.int64] | None = None,
    near: SearchResult | None = None,
) -> list[tuple[str, float]]:
    """:func:`search_successful` among solved task descriptions (``kb.solved``), pre-filtered
    by vector-index labels instead of string ids.

    With ``ordinals`` (distinct ones of ``kb.solved``; ``ok`` must accept exactly their task
    descriptions) it equals ``search_successful(kb, vector, k, allowed, near=near)`` for the set
    ``allowed`` of their ids; without, ``ok`` is a predicate over solved task descriptions and
    it equals ``search_successful(kb, vector, k, ok, kb.success.keys(), near)``. Only the
    unavoidable work depends on the number of solved tasks: a label gather and the search.
    """
    index = kb.graph.collections[TASK_DESCRIPTION].index
    if k <= 0 or len(index) == 0:
        return []

    def among(n: int) -> list[tuple[str, float]]:
        labels = kb.solved.labels(index)
        labels = labels if ordinals is None else labels[ordinals]
        res = index.search_labels(vector, n, labels[labels >= 0])
        return [(i, s) for i, s in zip(res.ids, res.scores, strict=True) if ok(i)][:k]

    if ordinals is not None and len(ordinals) <= SMALL_FILTER:
        return among(k) if len(ordinals) else []
    usable = near is not None and len(near.ids) >= min(k * OVERFETCH, len(index))
    res = near if near is not None and usable else index.search(vector, k * OVERFETCH)
    hits = [(i, s) for i, s in zip(res.ids, res.scores, strict=True) if ok(i)]
    if len(hits) >= k or len(res.ids) == len(index):
        return hits[:k]
    return among(k if ordinals is not None else k * OVERFETCH)


def nearest(kb: KnowledgeBaseV2, vector: npt.NDArray[np.float32]) -> SearchResult | None:
    """The unfiltered ``NEAR_K`` nearest task descriptions (one index scan per task)."""
    index = kb.graph.collections[TASK_DESCRIPTION].index
    return index.search(vector, NEAR_K) if len(index) else None
