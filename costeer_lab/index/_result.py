"""The result of one vector search."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SearchResult"]


@dataclass(frozen=True)
class SearchResult:
    """Ids and cosine similarities of the best matches of one query, best first.

    Attributes:
        ids: string ids of the matches, best first (at most ``k``).
        scores: cosine similarity (inner product of unit vectors) of each match.
        k: the number of results asked for.
        n_candidates: how many items matched the filter (the index size when unfiltered).

    Example:
        >>> r = SearchResult(ids=("a",), scores=(0.9,), k=2, n_candidates=1)
        >>> r.fewer_than_k
        True
    """

    ids: tuple[str, ...]
    scores: tuple[float, ...]
    k: int
    n_candidates: int

    @property
    def fewer_than_k(self) -> bool:
        """True when fewer than ``k`` items matched the filter (so fewer than ``k`` came back)."""
        return self.n_candidates < self.k

    def __len__(self) -> int:
        return len(self.ids)
