"""The keyword side of retrieval: a BM25 index (bm25s) over chunk texts, a derived view of the
store that is rebuilt whenever the chunks change.

Example:
    >>> idx = KeywordIndex(["rolling mean of close", "volume spike", "mean reversion"])
    >>> idx.top_k("mean close", 2)
    (array([0, 2]), array([..., ...], dtype=float32))
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["STOPWORDS", "KeywordIndex", "keyword_tokens"]

_TOKEN = re.compile(r"[a-z0-9]+(?:[_'][a-z0-9]+)*")
#: Common English words left out of keyword matching.
_STOPWORD_TEXT = (
    "a an and are as at be but by can do does for from has have how i if in into is it its "
    "not of on or so such that the their then there these this to was were what when where "
    "which while who why will with you your"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split(" "))


def keyword_tokens(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` without stopwords; ``snake_case`` names are kept
    whole and also split into their parts.

    Example:
        >>> keyword_tokens("How do I set max_retries?")
        ['set', 'max_retries', 'max', 'retries']
    """
    out: list[str] = []
    for tok in _TOKEN.findall(text.lower()):
        if tok in STOPWORDS:
            continue
        out.append(tok)
        if "_" in tok:
            out.extend(p for p in tok.split("_") if p and p not in STOPWORDS)
    return out


class KeywordIndex:
    """BM25 (Lucene variant, k1 = 1.5, b = 0.75) over a fixed list of texts.

    Rows are addressed by position in the list it was built from. Scores are computed for all
    rows at once from bm25s's sparse term-score matrix, so a boolean ``mask`` restricts the
    ranking to the matching rows before the top-k is taken.
    """

    def __init__(self, texts: Sequence[str], *, k1: float = 1.5, b: float = 0.75) -> None:
        import bm25s

        self.n = len(texts)
        self._vocab: dict[str, int] = {}
        self._retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
        if self.n:
            corpus = [keyword_tokens(t) or [""] for t in texts]
            self._retriever.index(corpus, show_progress=False)
            scores = self._retriever.scores
            self._data = np.asarray(scores["data"], dtype=np.float32)
            self._indices = np.asarray(scores["indices"], dtype=np.int64)
            self._indptr = np.asarray(scores["indptr"], dtype=np.int64)
            self._vocab = dict(self._retriever.vocab_dict)

    def scores(self, query: str) -> npt.NDArray[np.float32]:
        """BM25 score of every row for ``query`` (0 where no query term occurs)."""
        out = np.zeros(self.n, dtype=np.float32)
        if not self.n:
            return out
        for tok in dict.fromkeys(keyword_tokens(query)):
            tid = self._vocab.get(tok)
            if tid is None or not tok:
                continue
            start, end = self._indptr[tid], self._indptr[tid + 1]
            out[self._indices[start:end]] += self._data[start:end]  # rows unique per term
        return out

    def scale(self, query: str) -> float:
        """The highest BM25 score a chunk can reach for ``query``: every query term present
        with saturating frequency, the sum of the terms' IDF (bm25s's Lucene variant has no
        ``k1 + 1`` factor, so each term's score tends to its IDF). A term absent from the
        corpus counts with the highest IDF, so a query half made of unknown words reaches at
        most about half of it.

        Example:
            >>> idx = KeywordIndex(["alpha beta", "beta gamma"])
            >>> round(idx.scale("beta"), 3), round(idx.scale("zzz"), 3)
            (0.182, 1.792)
        """
        total = 0.0
        for tok in dict.fromkeys(keyword_tokens(query)):
            tid = self._vocab.get(tok) if self.n else None
            df = 0 if tid is None else int(self._indptr[tid + 1] - self._indptr[tid])
            total += math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))
        return total

    def relevance(self, query: str) -> npt.NDArray[np.float32]:
        """BM25 of every row divided by :meth:`scale`, in ``[0, 1]``: 0 when no query term
        occurs, ``1 / (1 + k1)`` = 0.4 for a chunk of average length holding every term once,
        towards 1 as the terms repeat.

        Example:
            >>> idx = KeywordIndex(["rolling mean", "volume spike", "mean reversion"])
            >>> [round(x, 2) for x in idx.relevance("volume cake").tolist()]
            [0.0, 0.13, 0.0]
        """
        scale = self.scale(query)
        scores = self.scores(query)
        if scale <= 0:
            return np.zeros_like(scores)
        out: npt.NDArray[np.float32] = np.clip(scores / np.float32(scale), 0.0, 1.0)
        return out

    def top_k(
        self, query: str, k: int, mask: npt.NDArray[np.bool_] | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Rows (best first) and scores of the ``k`` best rows among ``mask`` (all when
        ``None``); only rows with a positive score are returned."""
        scores = self.scores(query)
        if mask is not None:
            scores = np.where(mask, scores, np.float32(0.0))
        positive = np.flatnonzero(scores > 0)
        if positive.size > k:
            part = np.argpartition(-scores[positive], k - 1)[:k]
            positive = positive[part]
        order = positive[np.lexsort((positive, -scores[positive]))]
        return order.astype(np.int64), scores[order]
