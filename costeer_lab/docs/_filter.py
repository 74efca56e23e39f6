"""Metadata filters (``where``) in the style of vector databases, checked then evaluated over
columns of chunk metadata into a boolean mask (so filtering happens before ranking).

Grammar: ``{field: value}`` (equality), ``{field: {"$op": value}}`` with ``$eq``, ``$ne``,
``$gt``, ``$gte``, ``$lt``, ``$lte``, ``$in``, ``$nin``, ``$contains`` (a string field holding
the substring, case-sensitive), and ``{"$and": [...]}`` / ``{"$or": [...]}`` of filters; several
keys in one mapping are joined by AND. ``{"$contains": "text"}`` as a key of a filter matches
chunks whose content holds ``text`` (case-sensitive, as in Chroma's ``where_document``).
Comparisons are between numbers or between strings; the ``version`` field compares as a
version (``"10" > "9"``). A chunk without the field, or whose value has another type, does
not match (except ``$ne`` / ``$nin``, which match it).

Example:
    >>> rows = [{"version": "9", "n": 1}, {"version": "10", "n": 5}, {"n": "x"}]
    >>> evaluate_where({"version": {"$gt": "9"}}, Columns(rows)).tolist()
    [False, True, False]
    >>> evaluate_where({"$or": [{"n": {"$lt": 2}}, {"n": "x"}]}, Columns(rows)).tolist()
    [True, False, True]
    >>> cols = Columns(rows, contents=["retry twice", "timeout", "retry forever"])
    >>> evaluate_where({"$contains": "retry", "version": {"$contains": "1"}}, cols).tolist()
    [False, False, False]
    >>> evaluate_where({"$contains": "retry"}, cols).tolist()
    [True, False, True]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from costeer_lab.errors import InvalidInputError

__all__ = ["COMPARISONS", "Columns", "check_where", "evaluate_where", "version_key"]

Mask = npt.NDArray[np.bool_]
#: Operators on one field.
COMPARISONS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$contains")
_LOGICAL = ("$and", "$or")
_MISSING = object()
_SCALARS = (str, int, float, bool)


def version_key(value: str) -> tuple[tuple[int, Any], ...]:
    """A sort key that orders version strings naturally: ``"2" < "2.1" < "10"``.

    Example:
        >>> sorted(["10", "9", "2.1", "v2"], key=version_key)
        ['v2', '2.1', '9', '10']
    """
    parts = re.findall(r"\d+|[^\d.\-_]+", value.lower().lstrip("v"))
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


class Columns:
    """Chunk metadata read column-wise; each column is built once and cached.

    Args:
        rows: one metadata mapping per chunk (not copied; do not mutate while in use).
        contents: the chunk texts, in the same order (for a top-level ``$contains``).
    """

    def __init__(
        self, rows: Sequence[Mapping[str, Any]], contents: Sequence[str] | None = None
    ) -> None:
        if contents is not None and len(contents) != len(rows):
            raise InvalidInputError(
                f"Columns needs one content per row: {len(rows)} rows, {len(contents)} contents"
            )
        self.rows = rows
        self.contents = contents
        self._cache: dict[str, list[Any]] = {}
        self._groups: dict[str, dict[tuple[str | None, Any], npt.NDArray[np.int64]]] = {}
        self._numbers: dict[str, npt.NDArray[np.float64]] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, field: str) -> list[Any]:
        """The values of ``field`` (a sentinel where a chunk lacks it)."""
        col = self._cache.get(field)
        if col is None:
            col = [row.get(field, _MISSING) for row in self.rows]
            self._cache[field] = col
        return col

    def rows_equal(self, field: str, value: Any) -> npt.NDArray[np.int64]:
        """Rows whose ``field`` equals ``value``, type-aware (``1 == True`` is false here,
        ``1 == 1.0`` is true); an index of the column by value is built on first use."""
        groups = self._groups.get(field)
        if groups is None:
            found: dict[tuple[str | None, Any], list[int]] = {}
            for i, v in enumerate(self.column(field)):
                if v is _MISSING:
                    continue
                try:
                    found.setdefault((_kind(v), v), []).append(i)
                except TypeError:  # an unhashable value never equals a scalar
                    continue
            groups = {k: np.asarray(v, dtype=np.int64) for k, v in found.items()}
            self._groups[field] = groups
        return groups.get((_kind(value), value), np.zeros(0, dtype=np.int64))

    def numbers(self, field: str) -> npt.NDArray[np.float64]:
        """``field`` as floats, NaN where it is missing or not a number (built once)."""
        nums = self._numbers.get(field)
        if nums is None:
            col = self.column(field)
            nums = np.fromiter(
                (float(v) if _kind(v) == "number" else np.nan for v in col),
                dtype=np.float64,
                count=len(col),
            )
            self._numbers[field] = nums
        return nums


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "str"
    return None


def _check_scalar(field: str, op: str, value: Any) -> None:
    if value is not None and not isinstance(value, _SCALARS):
        raise InvalidInputError(
            f"where: {field!r} {op} needs a str, number, bool or null, "
            f"got {type(value).__name__} {value!r:.60}"
        )


def check_where(where: Any) -> None:
    """Validate a filter; the error names the bad operator or value.

    Raises:
        InvalidInputError: not a mapping, an unknown ``$`` operator, an empty ``$and``/``$or``,
            a non-list ``$in``, an ordering operator given a non-number non-string.
    """
    if not isinstance(where, Mapping) or not where:
        raise InvalidInputError(
            f"where must be a non-empty mapping such as {{'version': '3'}}, got {where!r:.80}"
        )
    for key, value in where.items():
        if not isinstance(key, str):
            raise InvalidInputError(f"where keys must be strings, got {key!r}")
        if key in _LOGICAL:
            if not isinstance(value, list | tuple) or not value:
                raise InvalidInputError(f"where: {key} needs a non-empty list of filters")
            for sub in value:
                check_where(sub)
        elif key == "$contains":
            _check_contains("the content", value)
        elif key.startswith("$"):
            raise InvalidInputError(
                f"where: unknown operator {key!r} at the top of a filter; logical operators are "
                f"{', '.join(_LOGICAL)}, $contains (on the content), and field operators "
                f"{', '.join(COMPARISONS)}"
            )
        elif isinstance(value, Mapping):
            if not value:
                raise InvalidInputError(f"where: {key!r} has an empty operator mapping")
            for op, arg in value.items():
                _check_op(key, op, arg)
        else:
            _check_scalar(key, "$eq", value)


def _check_contains(what: str, arg: Any) -> None:
    if not isinstance(arg, str) or not arg:
        raise InvalidInputError(
            f"where: $contains on {what} needs a non-empty string, got {arg!r:.60}"
        )


def _check_op(field: str, op: Any, arg: Any) -> None:
    if op not in COMPARISONS:
        raise InvalidInputError(
            f"where: unknown operator {op!r} on field {field!r}; "
            f"known operators: {', '.join(COMPARISONS)}"
        )
    if op in ("$in", "$nin"):
        if not isinstance(arg, list | tuple | set | frozenset):
            raise InvalidInputError(
                f"where: {field!r} {op} needs a list of values, got {type(arg).__name__}"
            )
        for item in arg:
            _check_scalar(field, op, item)
    elif op == "$contains":
        _check_contains(repr(field), arg)
    elif op in ("$gt", "$gte", "$lt", "$lte"):
        if _kind(arg) not in ("number", "str"):
            raise InvalidInputError(
                f"where: {field!r} {op} compares numbers or strings, got {arg!r:.60}"
            )
    else:
        _check_scalar(field, op, arg)


def _ordered(field: str, op: str, arg: Any) -> Callable[[Any], bool]:
    kind = _kind(arg)
    compare: Callable[[Any, Any], bool] = {
        "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b,
        "$lt": lambda a, b: a < b,
        "$lte": lambda a, b: a <= b,
    }[op]
    if kind == "str" and field == "version":
        key = version_key(arg)
        return lambda v: isinstance(v, str) and compare(version_key(v), key)
    return lambda v: _kind(v) == kind and compare(v, arg)


_NUMERIC = {
    "$gt": np.greater,
    "$gte": np.greater_equal,
    "$lt": np.less,
    "$lte": np.less_equal,
}


def _field_mask(field: str, op: str, arg: Any, cols: Columns) -> Mask:
    if op == "$contains":
        col = cols.column(field)
        return np.fromiter((isinstance(v, str) and arg in v for v in col), bool, len(col))
    if op in ("$eq", "$ne", "$in", "$nin"):
        mask = np.zeros(len(cols), dtype=bool)
        for value in [arg] if op in ("$eq", "$ne") else list(arg):
            mask[cols.rows_equal(field, value)] = True
        return ~mask if op in ("$ne", "$nin") else mask
    if _kind(arg) == "number":
        with np.errstate(invalid="ignore"):  # NaN (not a number) compares false
            out: Mask = _NUMERIC[op](cols.numbers(field), float(arg))
        return out
    test = _ordered(field, op, arg)
    col = cols.column(field)
    return np.fromiter((test(v) for v in col), dtype=bool, count=len(col))


def evaluate_where(where: Mapping[str, Any], cols: Columns) -> Mask:
    """The chunks matching ``where`` (validated first) as a boolean mask over ``cols``."""
    check_where(where)
    return _evaluate(where, cols)


def _evaluate(where: Mapping[str, Any], cols: Columns) -> Mask:
    mask = np.ones(len(cols), dtype=bool)
    for key, value in where.items():
        if key == "$contains":
            if cols.contents is None:
                raise InvalidInputError("where: $contains on the content needs the chunk texts")
            mask &= np.fromiter((value in c for c in cols.contents), bool, len(cols))
        elif key == "$and":
            for sub in value:
                mask &= _evaluate(sub, cols)
        elif key == "$or":
            any_mask = np.zeros(len(cols), dtype=bool)
            for sub in value:
                any_mask |= _evaluate(sub, cols)
            mask &= any_mask
        elif isinstance(value, Mapping):
            for op, arg in value.items():
                mask &= _field_mask(key, op, arg, cols)
        else:
            mask &= _field_mask(key, "$eq", value, cols)
    return mask
