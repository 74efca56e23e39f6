"""Rank fusion and diversification: reciprocal rank fusion (RRF) and maximal marginal
relevance (MMR). Pure functions over ids, ranks and vectors.

Example:
    >>> fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "a"]], k=60)
    >>> [i for i, _ in fused]
    ['a', 'b', 'c']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from costeer_lab.errors import InvalidInputError

__all__ = ["mmr_select", "reciprocal_rank_fusion"]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    *,
    k: int = 60,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse ranked id lists: ``score(d) = sum_i w_i / (k + rank_i(d))`` (ranks from 1), divided
    by the best possible score ``sum_i w_i / (k + 1)`` so it lies in ``[0, 1]``. Ties keep the
    order of first appearance (the first ranking's order first).

    Args:
        rankings: id lists, best first (ids absent from a list get nothing from it).
        k: the RRF constant (60 in the original paper); larger flattens the rank weights.
        weights: one non-negative weight per ranking (default all 1).

    Raises:
        InvalidInputError: ``k < 0``, a wrong number of weights, or negative weights.

    Example:
        >>> reciprocal_rank_fusion([["x"], ["x"]])
        [('x', 1.0)]
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InvalidInputError(f"RRF k must be an int >= 0, got {k!r}")
    w = [1.0] * len(rankings) if weights is None else [float(x) for x in weights]
    if len(w) != len(rankings) or any(x < 0 for x in w) or (w and sum(w) == 0):
        raise InvalidInputError(
            f"RRF needs one non-negative weight per ranking (not all zero): "
            f"{len(rankings)} rankings, weights {weights!r}"
        )
    best = sum(x / (k + 1) for x in w)
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, w, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = sorted(scores.items(), key=lambda kv: -kv[1])  # stable: first appearance wins ties
    return [(item, min(1.0, s / best) if best else 0.0) for item, s in order]


def mmr_select(
    relevance: npt.ArrayLike,
    vectors: npt.NDArray[np.float32],
    n: int,
    *,
    lambda_mult: float = 0.5,
) -> list[int]:
    """Pick ``n`` candidates by maximal marginal relevance: each step takes the candidate
    maximising ``lambda * relevance - (1 - lambda) * max cosine to those already picked``.

    Args:
        relevance: relevance of each candidate (any scale; ``[0, 1]`` keeps both terms
            comparable).
        vectors: unit-norm vectors of the candidates, one row each.
        n: how many to pick.
        lambda_mult: 1 is pure relevance, 0 pure diversity.

    Returns:
        Positions of the picked candidates, in picking order.

    Raises:
        InvalidInputError: ``lambda_mult`` outside ``[0, 1]`` or a shape mismatch.

    Example:
        >>> v = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
        >>> mmr_select([0.9, 0.85, 0.5], v, 2, lambda_mult=0.5)
        [0, 2]
    """
    rel = np.asarray(relevance, dtype=np.float64)
    vec = np.asarray(vectors, dtype=np.float64)
    if not 0.0 <= lambda_mult <= 1.0:
        raise InvalidInputError(f"mmr lambda must be within [0, 1], got {lambda_mult!r}")
    if rel.ndim != 1 or vec.ndim != 2 or vec.shape[0] != rel.shape[0]:
        raise InvalidInputError(
            f"mmr needs one vector per candidate: {rel.shape} relevances, vectors {vec.shape}"
        )
    picked: list[int] = []
    if n <= 0 or rel.size == 0:
        return picked
    max_sim = np.full(rel.size, -np.inf)
    available = np.ones(rel.size, dtype=bool)
    for _ in range(min(n, rel.size)):
        penalty = np.where(np.isfinite(max_sim), max_sim, 0.0)
        score = lambda_mult * rel - (1.0 - lambda_mult) * penalty
        score[~available] = -np.inf
        choice = int(np.argmax(score))
        picked.append(choice)
        available[choice] = False
        max_sim = np.maximum(max_sim, vec @ vec[choice])
    return picked
