"""Which FAISS index a collection gets: ``exact``, ``hnsw``, or ``auto`` by its size.

``auto`` is one rule for every user of an index (the knowledge bases, the document KB, the
memory): an exact scan below ``hnsw_above`` vectors, HNSW from there on. The choice depends on
the number of vectors alone, so the same store state always gets the same kind (and, with one
faiss thread, the same HNSW graph: see :class:`~costeer_lab.settings.IndexSettings`).
"""

from __future__ import annotations

from typing import Literal

from costeer_lab.errors import InvalidInputError
from costeer_lab.index._faiss import IndexKind
from costeer_lab.settings import HNSW_ABOVE

__all__ = ["HNSW_ABOVE", "IndexChoice", "effective_kind"]

#: What a caller asks for: a fixed kind or ``auto``.
IndexChoice = Literal["exact", "hnsw", "auto"]


def effective_kind(choice: str, n: int, hnsw_above: int = HNSW_ABOVE) -> IndexKind:
    """The index kind of a collection of ``n`` vectors when ``choice`` is asked for.

    Args:
        choice: ``"exact"``, ``"hnsw"`` (returned as they are) or ``"auto"``.
        n: number of vectors in the collection.
        hnsw_above: ``auto`` uses HNSW when ``n >= hnsw_above``, exact below.

    Raises:
        InvalidInputError: an unknown ``choice`` or a ``hnsw_above`` below 1.

    Example:
        >>> effective_kind("auto", 99, hnsw_above=100), effective_kind("auto", 100, hnsw_above=100)
        ('exact', 'hnsw')
        >>> effective_kind("exact", 10**9)
        'exact'
    """
    if isinstance(hnsw_above, bool) or not isinstance(hnsw_above, int) or hnsw_above < 1:
        raise InvalidInputError(f"hnsw_above must be an int >= 1, got {hnsw_above!r}")
    if choice == "auto":
        return "hnsw" if n >= hnsw_above else "exact"
    if choice == "exact":
        return "exact"
    if choice == "hnsw":
        return "hnsw"
    raise InvalidInputError(f"index kind must be 'exact', 'hnsw' or 'auto', got {choice!r}")
