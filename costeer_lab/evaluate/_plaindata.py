"""Plain data across a process boundary: a tagged-JSON codec that only knows builtin types.

Values the candidate's process returns reach the trusted evaluator only through this codec, so
whatever the candidate builds, the trusted side compares exact builtin objects: :func:`decode`
produces ``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``, ``complex``, ``list``,
``tuple``, ``dict``, ``set`` and ``frozenset`` (nested freely) and nothing else. :func:`encode`
refuses any other object — candidate-defined classes, functions, objects with a custom
``__eq__`` and *subclasses* of the builtins — naming its type.

Encoding: ``None``, ``bool``, ``str`` and ``list`` are themselves in JSON; every other type is
a one-key object: ``{"int": hex}`` (any size, no digit limit), ``{"float": repr}`` (``nan``,
``inf``, ``-0.0`` exact), ``{"complex": [repr, repr]}``, ``{"bytes": base64}``,
``{"tuple": [...]}``, ``{"set": [...]}``, ``{"frozenset": [...]}`` and ``{"dict": [[k, v],
...]}`` (any plain-data keys). Set elements are sorted by their encoding, so equal values
encode identically (:func:`canonical` is a usable dictionary key).

This module has no dependency beyond the standard library: the evaluator copies its source
into the sandbox, where the call runner encodes the candidate's answers with it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

__all__ = ["PlainDataError", "canonical", "decode", "encode"]

#: Deepest nesting :func:`encode` and :func:`decode` accept.
MAX_DEPTH = 200


class PlainDataError(ValueError):
    """A value is not plain data (``value_type`` names its type), or an encoding is invalid.

    Example:
        >>> try:
        ...     encode(object())
        ... except PlainDataError as exc:
        ...     exc.value_type is object
        True
    """

    def __init__(self, message: str, value_type: type | None = None) -> None:
        super().__init__(message)
        self.value_type = value_type


def _type_name(tp: type) -> str:
    module = getattr(tp, "__module__", "")
    name = getattr(tp, "__qualname__", getattr(tp, "__name__", "?"))
    return name if module in ("builtins", "", None) else f"{module}.{name}"


def encode(value: object, *, default: Callable[[object], object] | None = None) -> Any:
    """JSON-able tagged form of a plain-data value.

    Args:
        value: the value; only exact builtin types are accepted (see the module docstring).
        default: called with an object of any other type; it returns a replacement that is
            encoded instead (as ``json.dumps``'s ``default``). The replacement must be plain.

    Raises:
        PlainDataError: a part of ``value`` is not plain data (the message names its type) or
            is nested deeper than :data:`MAX_DEPTH`.

    Example:
        >>> encode((1, [2.5, "a"], {None: b"x"}))
        {'tuple': [{'int': '1'}, [{'float': '2.5'}, 'a'], {'dict': [[None, {'bytes': 'eA=='}]]}]}
    """
    return _encode(value, default, 0)


def _encode(value: Any, default: Callable[[object], object] | None, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise PlainDataError(f"value nested deeper than {MAX_DEPTH} levels")
    tp = type(value)
    if value is None or tp is bool or tp is str:
        return value
    if tp is int:
        return {"int": format(value, "x")}
    if tp is float:
        return {"float": repr(value)}
    if tp is complex:
        return {"complex": [repr(value.real), repr(value.imag)]}
    if tp is bytes:
        return {"bytes": base64.b64encode(value).decode("ascii")}
    if tp is list or tp is tuple:
        items = [_encode(v, default, depth + 1) for v in value]
        return items if tp is list else {"tuple": items}
    if tp is set or tp is frozenset:
        parts = [_encode(v, default, depth + 1) for v in value]
        parts.sort(key=lambda p: json.dumps(p, sort_keys=True))
        return {tp.__name__: parts}
    if tp is dict:
        return {
            "dict": [
                [_encode(k, default, depth + 1), _encode(v, default, depth + 1)]
                for k, v in value.items()
            ]
        }
    if default is not None:
        replacement = default(value)
        if replacement is not value:
            return _encode(replacement, None, depth)
    raise PlainDataError(
        f"a value of type {_type_name(tp)!r} is not plain data (allowed: None, bool, int, "
        "float, str, bytes, complex, list, tuple, dict, set, frozenset)",
        tp,
    )


def decode(obj: Any) -> Any:
    """The value of an :func:`encode`-d form; only exact builtin types come out.

    Raises:
        PlainDataError: ``obj`` is not a valid encoding (unknown tag, bad payload, unhashable
            key or set element, nesting deeper than :data:`MAX_DEPTH`).

    Example:
        >>> decode({"tuple": [{"float": "nan"}, True, {"set": [{"int": "-ff"}]}]})
        (nan, True, {-255})
    """
    return _decode(obj, 0)


def _decode(obj: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise PlainDataError(f"encoding nested deeper than {MAX_DEPTH} levels")
    tp = type(obj)
    if obj is None or tp is bool or tp is str:
        return obj
    if tp is list:
        return [_decode(v, depth + 1) for v in obj]
    if tp is not dict or len(obj) != 1:
        raise PlainDataError(f"invalid encoding: {_type_name(tp)} {_short(obj)}")
    ((tag, payload),) = obj.items()
    try:
        return _decode_tagged(tag, payload, depth)
    except PlainDataError:
        raise
    except (ValueError, TypeError, OverflowError, binascii.Error) as exc:
        raise PlainDataError(f"invalid {tag!r} encoding {_short(payload)}: {exc}") from None


def _decode_tagged(tag: str, payload: Any, depth: int) -> Any:
    if tag == "int" and type(payload) is str:
        return int(payload, 16)
    if tag == "float" and type(payload) is str:
        return float(payload)
    if tag == "complex" and type(payload) is list and len(payload) == 2:
        re_, im = payload
        if type(re_) is str and type(im) is str:
            return complex(float(re_), float(im))
    if tag == "bytes" and type(payload) is str:
        return base64.b64decode(payload.encode("ascii"), validate=True)
    if tag in ("tuple", "set", "frozenset") and type(payload) is list:
        items = [_decode(v, depth + 1) for v in payload]
        return tuple(items) if tag == "tuple" else set(items) if tag == "set" else frozenset(items)
    if tag == "dict" and type(payload) is list:
        out: dict[Any, Any] = {}
        for pair in payload:
            if type(pair) is not list or len(pair) != 2:
                raise PlainDataError(f"invalid dict item {_short(pair)}")
            out[_decode(pair[0], depth + 1)] = _decode(pair[1], depth + 1)
        return out
    raise PlainDataError(f"invalid encoding: unknown tag or payload {tag!r}: {_short(payload)}")


def _short(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 80 else text[:77] + "..."


def canonical(value: object) -> str:
    """A string that is equal for equal plain-data values of equal types (a memo key).

    Example:
        >>> canonical((1, {2, 3})) == canonical((1, {3, 2})) != canonical([1, {2, 3}])
        True
    """
    return json.dumps(encode(value), sort_keys=True, separators=(",", ":"))
