"""Input checks shared by the vector index: ids, vectors, queries, ``k`` and filters.

Everything here turns loose user input into the exact arrays the index works with, or raises an
error naming the bad value and what was expected.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from costeer_lab.errors import EmbedderMismatchError, InvalidInputError

__all__ = [
    "DimensionMismatchError",
    "Filter",
    "check_embedder",
    "check_ids",
    "check_k",
    "normalize_rows",
]

#: A search filter: the string ids allowed, or a predicate over string ids.
Filter: TypeAlias = Collection[str] | Callable[[str], bool]

#: Norms below this are treated as zero vectors (cosine similarity is undefined for them).
#: Rows normalized at a time (bounds the float64 working copy of a large matrix).
_BLOCK = 8192
_MIN_NORM = 1e-12


class DimensionMismatchError(InvalidInputError, EmbedderMismatchError):
    """A vector's dimension differs from the index's.

    It is both an :class:`~costeer_lab.errors.InvalidInputError` (a bad argument) and an
    :class:`~costeer_lab.errors.EmbedderMismatchError` (vectors of another space), so callers
    may catch either.
    """


def check_ids(ids: object, *, what: str = "ids") -> list[str]:
    """Return ``ids`` as a list of distinct strings.

    Raises:
        InvalidInputError: a bare string, an empty sequence, a non-string item or a duplicate.

    Example:
        >>> check_ids(["a", "b"])
        ['a', 'b']
    """
    if isinstance(ids, str | bytes):
        raise InvalidInputError(
            f"{what} must be a sequence of strings, got a single {type(ids).__name__} {ids!r:.60}"
        )
    if not isinstance(ids, Sequence):
        raise InvalidInputError(f"{what} must be a sequence of strings, got {type(ids).__name__}")
    if len(ids) == 0:
        raise InvalidInputError(f"{what} is empty; pass at least one id")
    seen: set[str] = set()
    for i, item in enumerate(ids):
        if not isinstance(item, str):
            raise InvalidInputError(
                f"{what} must be strings; item {i} is {type(item).__name__}: {item!r:.60}"
            )
        if item in seen:
            raise InvalidInputError(f"{what} contains {item!r} more than once")
        seen.add(item)
    return list(ids)


def check_k(k: object) -> int:
    """Return ``k`` if it is a positive int, else raise :class:`InvalidInputError`."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise InvalidInputError(f"k must be a positive int, got {type(k).__name__} {k!r}")
    if k <= 0:
        raise InvalidInputError(f"k must be a positive int, got {k}")
    return int(k)


def normalize_rows(
    vectors: object, dim: int, *, what: str = "vectors", n_rows: int | None = None
) -> npt.NDArray[np.float32]:
    """Return a fresh C-contiguous float32 ``(n, dim)`` copy of ``vectors`` with unit-norm rows.

    Args:
        vectors: array-like of shape ``(n, dim)``.
        dim: the dimension expected.
        what: name used in error messages.
        n_rows: the number of rows expected, when known.

    Raises:
        DimensionMismatchError: the last axis is not ``dim`` (names both dimensions).
        InvalidInputError: not 2-D, no rows, a wrong row count, non-finite values or a zero row.

    Example:
        >>> normalize_rows([[3.0, 4.0]], 2)
        array([[0.6, 0.8]], dtype=float32)
    """
    try:  # an array of numbers is read a block at a time below, never copied whole as float64
        numeric = isinstance(vectors, np.ndarray) and vectors.dtype.kind in "fiub"
        arr: npt.NDArray[Any] = (
            vectors if isinstance(vectors, np.ndarray) and numeric
            else np.array(vectors, dtype=np.float64)
        )  # fmt: skip
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{what} must be a numeric array, got {type(vectors).__name__}"
        ) from exc
    if arr.ndim != 2:
        raise InvalidInputError(f"{what} must be 2-D (n, {dim}), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise InvalidInputError(f"{what} is empty; pass at least one vector")
    if arr.shape[1] != dim:
        raise DimensionMismatchError(
            f"{what} have dimension {arr.shape[1]} but the index has dimension {dim}"
        )
    if n_rows is not None and arr.shape[0] != n_rows:
        raise InvalidInputError(f"got {n_rows} ids but {arr.shape[0]} {what}; counts must match")
    n = arr.shape[0]
    for lo in range(0, n, _BLOCK):  # every row checked first: a NaN is named before a zero row
        part = np.asarray(arr[lo : lo + _BLOCK], dtype=np.float64)
        if not np.isfinite(part).all():
            bad = lo + int(np.flatnonzero(~np.isfinite(part).all(axis=1))[0])
            raise InvalidInputError(f"{what} row {bad} contains NaN or infinity")
    out = np.empty((n, dim), dtype=np.float32)
    for lo in range(0, n, _BLOCK):  # row by row, the same values as one pass over all rows
        part = np.asarray(arr[lo : lo + _BLOCK], dtype=np.float64)
        norms = np.linalg.norm(part, axis=1)
        zero = np.flatnonzero(norms < _MIN_NORM)
        if zero.size:
            raise InvalidInputError(
                f"{what} row {lo + int(zero[0])} is a zero vector; cosine similarity needs a "
                "non-zero one"
            )
        out[lo : lo + _BLOCK] = part / norms[:, None]
    return out


def check_embedder(index_embedder: str | None, given: str | None) -> None:
    """Raise :class:`EmbedderMismatchError` when both ids are set and differ."""
    if index_embedder is not None and given is not None and index_embedder != given:
        raise EmbedderMismatchError(
            f"vectors from embedder {given!r} cannot be mixed with an index of embedder "
            f"{index_embedder!r}"
        )
