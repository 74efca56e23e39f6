"""Second-stage reranking of a search's top candidates with a stronger similarity.

The first stage (vector, keyword or hybrid ranking) is cheap and runs over every chunk; the
reranker re-scores only its best ``k`` candidates. :class:`EmbeddingReranker` embeds the query
and each candidate *preceded by its section path* (the titles of the enclosing sections, which
the chunk text lacks) with its own embedder — by default ``minilm``, offline — and rescales
their cosine above a floor: ``similarity = clip((cos - floor) / (1 - floor), 0, 1)``. The floor
(0.15) is about the cosine MiniLM gives a query and an unrelated text, so an unrelated
candidate's similarity is near 0 rather than 0.3.

The final score (default weight 0.7, floor 0.15, measured by ``benchmarks/docs.py`` on the
project's labelled set: recall@5 and MRR gain with both offline embedders, unrelated queries
still below ``min_score`` 0.18) is ``weight * reranker similarity + (1 - weight) *
first-stage score``: a weighted mean of two scores in ``[0, 1]``, so it stays in ``[0, 1]``,
and since both are calibrated similarities (not ranks) an unrelated query still scores low
and ``min_score`` applies to it unchanged (it is applied after reranking). Candidates beyond
``k`` are dropped: a reranked list never mixes the two scales.

No cross-encoder is used: none ships offline with the project's dependencies (checked: the
only ONNX model installed is the MiniLM bi-encoder).

Example:
    >>> from costeer_lab.embed import get_embedder
    >>> r = EmbeddingReranker(get_embedder("hashing", dim=256), weight=1.0, floor=0.0)
    >>> s = r.similarity("retry failed requests", ["Retries\\nfailed requests retry", "Bread"])
    >>> bool(s[0] > s[1]), bool(0.0 <= s.min() and s.max() <= 1.0)
    (True, True)
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from costeer_lab.embed import BaseEmbedder, get_embedder
from costeer_lab.errors import InvalidInputError

__all__ = ["EmbeddingReranker", "Reranker", "candidate_text", "rerank"]

Scores = npt.NDArray[np.float64]


class Candidate(Protocol):
    """A first-stage result: a dataclass with a ``score`` in ``[0, 1]``."""

    @property
    def score(self) -> float: ...


C = TypeVar("C", bound=Candidate)


class Reranker(Protocol):
    """What :func:`rerank` needs: a similarity in ``[0, 1]`` per text and a blend weight."""

    weight: float

    def similarity(self, query: str, texts: Sequence[str]) -> Scores:
        """One similarity in ``[0, 1]`` per text, higher is more relevant to ``query``."""
        ...


class EmbeddingReranker:
    """Cosine similarity under an embedder (default ``minilm``), with a bounded vector cache.

    Args:
        embedder: an embedder or its registry name.
        weight: weight of this similarity in the final score (``1 - weight``: the first stage).
        floor: the cosine mapped to similarity 0 (what unrelated texts typically reach).
        cache_size: candidate vectors kept in memory (a repeated candidate is not re-embedded).

    Raises:
        InvalidInputError: ``weight`` outside ``[0, 1]``, ``floor`` outside ``[0, 1)`` or a
            ``cache_size`` below 0.
        EmbedderError: the embedder cannot be loaded (e.g. the ``minilm`` extra is missing).
    """

    def __init__(
        self,
        embedder: str | BaseEmbedder = "minilm",
        *,
        weight: float = 0.7,
        floor: float = 0.15,
        cache_size: int = 4096,
    ) -> None:
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
            raise InvalidInputError(f"rerank weight must be a number in [0, 1], got {weight!r}")
        if isinstance(floor, bool) or not isinstance(floor, int | float) or not 0 <= floor < 1:
            raise InvalidInputError(f"rerank floor must be a number in [0, 1), got {floor!r}")
        if cache_size < 0:
            raise InvalidInputError(f"cache_size must be >= 0, got {cache_size!r}")
        self.embedder = get_embedder(embedder) if isinstance(embedder, str) else embedder
        self.weight = float(weight)
        self.floor = float(floor)
        self.cache_size = cache_size
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()

    def __repr__(self) -> str:
        return f"<EmbeddingReranker {self.embedder.id} weight={self.weight} floor={self.floor}>"

    def _vectors(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        fresh = dict(zip(missing, self.embedder.embed(missing), strict=True)) if missing else {}
        rows = []
        for t in texts:
            vec = fresh.get(t)
            if vec is None:
                vec = self._cache[t]
                self._cache.move_to_end(t)
            rows.append(vec)
        for t, vec in fresh.items():
            self._cache[t] = vec
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return np.stack(rows).astype(np.float32)

    def similarity(self, query: str, texts: Sequence[str]) -> Scores:
        """The cosine of ``query`` and each text above the floor, rescaled to ``[0, 1]``."""
        if not texts:
            return np.zeros(0, dtype=np.float64)
        q = self.embedder.embed([query])[0]
        cos = (self._vectors(texts) @ q).astype(np.float64)
        out: Scores = np.clip((cos - self.floor) / (1.0 - self.floor), 0.0, 1.0)
        return out


def candidate_text(metadata: Mapping[str, Any], content: str) -> str:
    """The text a reranker sees for a chunk: its section path, a newline, its content.

    Example:
        >>> candidate_text({"section_path": "Client > Retries"}, "Set max_retries.")
        'Client > Retries\\nSet max_retries.'
    """
    path = metadata.get("section_path") or ""
    return f"{path}\n{content}" if path else content


def rerank(
    query: str, ranked: Sequence[C], texts: Sequence[str], reranker: Reranker, k: int
) -> list[C]:
    """The first ``k`` of ``ranked`` (``texts``: what the reranker reads of each) re-scored
    ``w * similarity + (1 - w) * score``, best first (ties keep the first-stage order); the
    rest are dropped.

    Raises:
        InvalidInputError: ``k`` below 1 or fewer texts than candidates kept.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInputError(f"rerank_k must be a positive int, got {k!r}")
    top = list(ranked[:k])
    if len(texts) < len(top):
        raise InvalidInputError(f"rerank needs a text per candidate: {len(texts)} < {len(top)}")
    if not top:
        return []
    sim = reranker.similarity(query, list(texts[: len(top)]))
    w = reranker.weight
    scores = [
        min(1.0, max(0.0, w * float(s) + (1.0 - w) * r.score))
        for s, r in zip(sim, top, strict=True)
    ]
    order = sorted(range(len(top)), key=lambda i: -scores[i])
    return [dataclasses.replace(top[i], score=scores[i]) for i in order]  # type: ignore[type-var]
