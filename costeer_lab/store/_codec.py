"""Encoding helpers shared by store backends: strict JSON, float32 vector blobs, ``where`` checks.

Example:
    >>> dumps_json({"a": 1}, what="attrs")
    '{"a":1}'
    >>> import numpy as np
    >>> decode_vector(encode_vector(np.ones(2, dtype=np.float32)), 2).tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from costeer_lab._json import encoder
from costeer_lab.errors import InvalidInputError

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "as_matrix",
    "check_str",
    "check_where",
    "decode_matrix",
    "decode_vector",
    "dumps_json",
    "encode_vector",
    "id_list",
    "loads_json",
    "new_etag",
]

_LE_F32 = np.dtype("<f4")
#: One encoder for every call (``json.dumps`` with options builds a new one each time).
_ENCODE = encoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def dumps_json(value: Any, *, what: str) -> str:
    """Serialise ``value`` as compact JSON, refusing anything JSON cannot represent.

    Raises:
        InvalidInputError: ``value`` holds a non-JSON object (set, bytes, NaN, custom class, …),
            holds itself, or is nested too deeply to encode.
    """
    try:
        return _ENCODE(value)
    except RecursionError:
        raise InvalidInputError(
            f"{what} must be JSON-serializable; got a {type(value).__name__} that holds itself "
            "or is nested too deeply"
        ) from None
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{what} must be JSON-serializable (dict/list/str/int/float/bool/None, finite "
            f"numbers); got {_short(value)}: {exc}"
        ) from None


def loads_json(text: str) -> Any:
    """Parse JSON written by :func:`dumps_json` (returns fresh objects)."""
    return json.loads(text)


def new_etag() -> str:
    """A random tag for a new state of a vector collection (16 hex digits).

    Every write to a collection stores a fresh one beside its version counter, so two different
    write histories never share a ``(version, etag)`` pair (a store file recreated at the same
    path, a rolled-back branch) and a persisted index can be matched against the store exactly.

    Example:
        >>> a, b = new_etag(), new_etag()
        >>> len(a), a != b
        (16, True)
    """
    return secrets.token_hex(8)


def check_str(value: object, what: str) -> str:
    """Return ``value`` if it is a ``str``, else raise :class:`InvalidInputError`."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a str, got {type(value).__name__} {value!r}")
    return value


def check_id(value: object, what: str) -> str:
    r""":func:`check_str` for a name rows are keyed or looked up by (a node id, an edge
    endpoint, a record key, a vector id): it must also be plain text, without a NUL character
    (PostgreSQL text cannot hold one, and SQLite's JSON functions, which carry the ids of a
    batch, end a string there) or a lone surrogate (not encodable as UTF-8).

    Example:
        >>> check_id("task_trace:ab12", "node id")
        'task_trace:ab12'
        >>> check_id("a\x00b", "node id")
        Traceback (most recent call last):
        ...
        costeer_lab.errors.InvalidInputError: node id must not contain a NUL character, ...
    """
    text = check_str(value, what)
    if "\x00" in text:
        raise InvalidInputError(f"{what} must not contain a NUL character, got {text!r}")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError(
                f"{what} must be valid Unicode text (it holds a lone surrogate), got {text!r}"
            ) from None
    return text


def id_list(ids: Sequence[str], what: str) -> list[str]:
    """Validate a sequence of string ids (a bare ``str`` is refused, not split into chars).

    Example:
        >>> id_list(("a", "b"), "node ids")
        ['a', 'b']
    """
    if isinstance(ids, str | bytes):
        raise InvalidInputError(f"{what} must be a sequence of str, got a single {ids!r}")
    return [check_id(i, what[:-1] if what.endswith("s") else what) for i in ids]


def encode_vector(vector: npt.ArrayLike) -> bytes:
    """Raw little-endian float32 bytes of a 1-D vector."""
    return np.ascontiguousarray(vector, dtype=_LE_F32).tobytes()


def decode_vector(blob: bytes, dim: int) -> npt.NDArray[np.float32]:
    """A fresh, writable float32 vector from :func:`encode_vector` bytes."""
    vec = np.frombuffer(blob, dtype=_LE_F32, count=dim).astype(np.float32, copy=True)
    return vec


def decode_matrix(blobs: Sequence[bytes], dim: int) -> npt.NDArray[np.float32]:
    """Stack equal-length vector blobs into a fresh ``(n, dim)`` float32 matrix."""
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    flat = np.frombuffer(b"".join(blobs), dtype=_LE_F32)
    return flat.reshape(len(blobs), dim).astype(np.float32, copy=True)


def as_matrix(vectors: object, n: int, what: str) -> npt.NDArray[np.float32]:
    """Validate ``vectors`` as a finite ``(n, d)`` float matrix with ``d >= 1`` (view or copy).

    Raises:
        InvalidInputError: wrong shape, row count, dtype or non-finite values.
    """
    try:
        arr = np.asarray(vectors)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} must be a 2-D float array: {exc}") from None
    if arr.ndim != 2:
        raise InvalidInputError(f"{what} must be 2-D (n, dim), got shape {arr.shape}")
    if arr.shape[0] != n:
        raise InvalidInputError(f"{what} has {arr.shape[0]} rows but {n} ids were given")
    if arr.shape[1] < 1:
        raise InvalidInputError(f"{what} must have at least one column, got shape {arr.shape}")
    if arr.dtype.kind not in "fiu":
        raise InvalidInputError(f"{what} must hold numbers, got dtype {arr.dtype}")
    out = arr.astype(np.float32, copy=False)
    if not np.isfinite(out).all():
        raise InvalidInputError(f"{what} contains NaN or infinite values")
    return out


def check_where(where: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    """Validate a ``where`` filter: top-level field names -> JSON scalars.

    Raises:
        InvalidInputError: a field name is not a plain string or a value is not a JSON scalar.
    """
    if not where:
        return []
    items: list[tuple[str, Any]] = []
    for field, value in where.items():
        if not isinstance(field, str) or not field or '"' in field or "\\" in field:
            raise InvalidInputError(
                f"where field names must be non-empty strings without quotes or backslashes, "
                f"got {field!r}"
            )
        if value is not None and not isinstance(value, str | int | float | bool):
            raise InvalidInputError(
                f"where[{field!r}] must be a JSON scalar (str, int, float, bool, None), "
                f"got {type(value).__name__} {value!r}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidInputError(f"where[{field!r}] must be finite, got {value!r}")
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise InvalidInputError(f"where[{field!r}] must fit in 64 bits, got {value!r}")
        items.append((field, value))
    return items


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
