"""Ranking over a collection: the derived in-memory view (metadata columns, BM25 indexes) and
the vector, keyword and hybrid rankings with pre-filtering and MMR.

Scores in ``[0, 1]`` that mean the same from one query to the next (not ranks): vector mode
gives the cosine similarity clipped at 0; keyword mode the BM25 score divided by the highest
score any chunk could reach for the query (:meth:`KeywordIndex.relevance`); hybrid mode the
weighted mean of both, computed for every candidate of either ranking (``fusion="rrf"`` gives
the former rank fusion instead: the top hit always 1). An unrelated query therefore scores low
and ``min_score`` can drop it. With a reranker (:mod:`costeer_lab.docs._rerank`) the best
``rerank_k`` candidates are re-scored (a weighted mean of the reranker's similarity and the
first-stage score, still in ``[0, 1]``) before ``min_score`` and MMR apply. Chunks that pass
the filter but score nothing in keyword mode fill the list with score 0 (when ``min_score``
is 0), so ``n`` results come back whenever ``n`` chunks match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from costeer_lab.docs._filter import Columns, evaluate_where
from costeer_lab.docs._fusion import mmr_select, reciprocal_rank_fusion
from costeer_lab.docs._keyword import KeywordIndex
from costeer_lab.docs._rerank import Reranker, candidate_text, rerank
from costeer_lab.errors import InvalidInputError
from costeer_lab.index import VectorCollection

__all__ = ["MODES", "Mode", "Ranked", "SearchView", "rank"]

Mode = Literal["vector", "keyword", "hybrid"]
Fusion = Literal["score", "rrf"]
MODES: tuple[Mode, ...] = ("vector", "keyword", "hybrid")
Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Ranked:
    """One ranked chunk: its row in the view and its score in ``[0, 1]``."""

    row: int
    score: float


class SearchView:
    """Chunks of a collection held in memory for ranking (rebuilt when the store changes).

    Args:
        ids / contents / metadata: the chunks, in store order.
        version: the collection's change counter these were read at.
    """

    def __init__(
        self,
        ids: list[str],
        contents: list[str],
        metadata: list[dict[str, Any]],
        version: int,
    ) -> None:
        self.ids = ids
        self.contents = contents
        self.metadata = metadata
        self.version = version
        self.columns = Columns(metadata, contents)
        self.row_of = {cid: i for i, cid in enumerate(ids)}

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def keyword(self) -> KeywordIndex:
        """BM25 over the chunk texts, each preceded by its section path (the titles of the
        enclosing sections, which the chunk's own heading line lacks); built on first use."""
        return KeywordIndex(
            [
                f"{m.get('section_path') or ''}\n{c}"
                for m, c in zip(self.metadata, self.contents, strict=True)
            ]
        )

    @cached_property
    def titles(self) -> KeywordIndex:
        """BM25 over the chunks' section paths (topic search)."""
        return KeywordIndex([str(m.get("section_path") or "") for m in self.metadata])

    def mask(self, where: dict[str, Any] | None) -> Mask | None:
        """Rows passing ``where`` (``None``: no filter)."""
        return None if where is None else evaluate_where(where, self.columns)


def _vector_ranking(
    view: SearchView, vectors: VectorCollection, query: str, k: int, mask: Mask | None
) -> list[Ranked]:
    if mask is None:
        result = vectors.search_vector(_embed_query(vectors, query), k)
    else:
        allowed = {view.ids[i] for i in np.flatnonzero(mask).tolist()}
        result = vectors.search_vector(_embed_query(vectors, query), k, filter=allowed)
    return [
        Ranked(view.row_of[cid], min(1.0, max(0.0, score)))
        for cid, score in zip(result.ids, result.scores, strict=True)
        if cid in view.row_of
    ]


def _embed_query(vectors: VectorCollection, query: str) -> npt.NDArray[np.float32]:
    """The query vector, computed by the inner embedder (queries are not written to the
    store's embedding cache: one-off texts would make every query a write)."""
    vector: npt.NDArray[np.float32] = vectors.embedder.inner.embed([query])[0]
    return vector


def _keyword_ranking(
    index: KeywordIndex, query: str, k: int, mask: Mask | None, fill: bool
) -> list[Ranked]:
    rows, scores = index.top_k(query, k, mask)
    scale = index.scale(query)
    out = [
        Ranked(int(r), min(1.0, float(s) / scale) if scale > 0 else 0.0)
        for r, s in zip(rows, scores, strict=True)
    ]
    if fill and len(out) < k:
        taken = set(rows.tolist())
        pool = range(index.n) if mask is None else np.flatnonzero(mask).tolist()
        for r in pool:
            if len(out) >= k:
                break
            if r not in taken:
                out.append(Ranked(int(r), 0.0))
    return out


def _fuse(rankings: Sequence[list[Ranked]], rrf_k: int) -> list[Ranked]:
    fused = reciprocal_rank_fusion(
        [[str(r.row) for r in ranking] for ranking in rankings], k=rrf_k
    )
    return [Ranked(int(row), score) for row, score in fused]


def _score_fusion(
    view: SearchView,
    vectors: VectorCollection,
    query: str,
    rankings: Sequence[list[Ranked]],
    keyword: Sequence[KeywordIndex],
    vector_weight: float,
) -> list[Ranked]:
    """Every candidate of ``rankings`` scored ``w * cosine + (1 - w) * keyword relevance``
    (the best of the ``keyword`` indexes), best first; ties keep first appearance."""
    rows = list(dict.fromkeys(r.row for ranking in rankings for r in ranking))
    if not rows:
        return []
    kw = np.zeros(len(rows), dtype=np.float64)
    for index in keyword:
        kw = np.maximum(kw, index.relevance(query)[rows])
    vecs = vectors.embedder.embed([view.contents[r] for r in rows])  # stored: cache hits
    cos = np.clip(vecs @ _embed_query(vectors, query), 0.0, 1.0).astype(np.float64)
    fused = vector_weight * cos + (1.0 - vector_weight) * kw
    order = sorted(range(len(rows)), key=lambda i: -fused[i])
    return [Ranked(rows[i], float(fused[i])) for i in order]


def rank(
    view: SearchView,
    vectors: VectorCollection,
    query: str,
    n: int,
    *,
    mode: Mode,
    mask: Mask | None,
    rrf_k: int,
    candidates: int,
    mmr_lambda: float | None = None,
    topic: bool = False,
    fusion: Fusion = "score",
    vector_weight: float = 0.5,
    min_score: float = 0.0,
    reranker: Reranker | None = None,
    rerank_k: int = 20,
) -> list[Ranked]:
    """The ``n`` best chunks for ``query`` among the rows of ``mask``.

    Args:
        mode: ``vector``, ``keyword`` or ``hybrid`` (both, fused).
        candidates: size of each ranking fused (and of the MMR pool), at least ``n``.
        mmr_lambda: when set, pick the ``n`` results from the candidates by MMR.
        topic: also rank by section titles (fused in, whatever the mode; with score fusion
            the keyword relevance is the better of content and titles).
        fusion: ``score`` (weighted mean of calibrated similarities) or ``rrf`` (ranks).
        vector_weight: weight of the cosine in score fusion.
        min_score: drop candidates scoring below it (after reranking, before MMR).
        reranker: when set, re-score the best ``max(rerank_k, n)`` candidates with it (see
            :func:`~costeer_lab.docs._rerank.rerank`); the others are dropped.
        rerank_k: how many first-stage candidates the reranker sees.

    Raises:
        InvalidInputError: an unknown mode or fusion.
    """
    if mode not in MODES:
        raise InvalidInputError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if fusion not in ("score", "rrf"):
        raise InvalidInputError(f"fusion must be 'score' or 'rrf', got {fusion!r}")
    wide = mode == "hybrid" or mmr_lambda is not None or topic or reranker is not None
    pool = max(n, candidates) if wide else n
    if reranker is not None:
        pool = max(pool, rerank_k)
    rankings: list[list[Ranked]] = []
    if topic:
        rankings.append(_keyword_ranking(view.titles, query, pool, mask, fill=False))
    if mode in ("keyword", "hybrid"):
        rankings.append(_keyword_ranking(view.keyword, query, pool, mask, fill=mode == "keyword"))
    if mode in ("vector", "hybrid"):
        rankings.append(_vector_ranking(view, vectors, query, pool, mask))
    if len(rankings) == 1:
        ranked = rankings[0]
    elif fusion == "rrf":
        ranked = _fuse(rankings, rrf_k)
    else:
        indexes = [view.keyword, view.titles] if topic else [view.keyword]
        weight = 0.0 if mode == "keyword" else vector_weight
        ranked = _score_fusion(view, vectors, query, rankings, indexes, weight)
    if reranker is not None:
        top = ranked[: max(rerank_k, n)]
        texts = [candidate_text(view.metadata[r.row], view.contents[r.row]) for r in top]
        ranked = rerank(query, top, texts, reranker, max(rerank_k, n))
    if min_score > 0:
        ranked = [r for r in ranked if r.score >= min_score]
    if mmr_lambda is None or len(ranked) <= 1:
        return ranked[:n]
    texts = [view.contents[r.row] for r in ranked]
    vecs = vectors.embedder.embed(texts)  # stored chunk texts: cache hits
    picked = mmr_select([r.score for r in ranked], vecs, n, lambda_mult=mmr_lambda)
    return [ranked[i] for i in picked]
