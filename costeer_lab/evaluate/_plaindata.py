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

Decoding runs in the trusted process on the candidate's claims, so it is bounded: at most
:data:`MAX_ITEMS` items (values and containers) per value, :data:`MAX_DEPTH` levels,
:data:`MAX_INT_HEX_DIGITS` hex digits per ``int``, and at most :data:`MAX_SAME_HASH` distinct
hashable values sharing one ``hash()`` (distinct ints differing by multiples of ``2**61 - 1``
all hash alike, as do crafted tuples; a set, dict or ``Counter`` of thousands of them costs
quadratic time — the check runs before any set or dict is built, and counts the values of
every decode sharing a :class:`DecodeBudget`, since hidden tests may combine answers). A
:class:`DecodeBudget` also carries a CPU deadline.

This module has no dependency beyond the standard library: the evaluator copies its source
into the sandbox, where the call runner encodes the candidate's answers with it.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable
from typing import Any

__all__ = ["DecodeBudget", "PlainDataError", "canonical", "decode", "encode"]

#: Deepest nesting :func:`encode` and :func:`decode` accept.
MAX_DEPTH = 200
#: Items (values and containers, at any depth) of one decoded value.
MAX_ITEMS = 100_000
#: Hex digits of a decoded ``int`` (100,000 bits: more than any test's answer needs; parsing
#: is linear, and the feedback abbreviates long ints).
MAX_INT_HEX_DIGITS = 25_000
#: Characters of a decoded ``float`` (or of one part of a ``complex``).
MAX_FLOAT_CHARS = 64
#: Distinct hashable values with one ``hash()`` that a decode (or a budget) accepts.
MAX_SAME_HASH = 8
_CLOCK_EVERY = 1024  # items decoded between two looks at the CPU clock


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


class DecodeBudget:
    """Limits shared by a series of :func:`decode` calls (the answers of one run).

    Args:
        max_items: items all the decodes together may produce.
        cpu_s: seconds of this thread's CPU time from now (``None``: no deadline).

    Example:
        >>> budget = DecodeBudget(max_items=3)
        >>> decode([{"int": "1"}], budget=budget), budget.items_left
        ([1], 1)
    """

    def __init__(self, *, max_items: int = MAX_ITEMS, cpu_s: float | None = None) -> None:
        self.items_left = max_items
        self.deadline = None if cpu_s is None else time.thread_time() + cpu_s
        self._by_hash: dict[int, list[Any]] = {}
        self._ticks = 0

    def spend(self) -> None:
        """Count one item; raises when the items or the CPU time are spent."""
        self.items_left -= 1
        if self.items_left < 0:
            raise PlainDataError("encoding holds too many items")
        self._ticks += 1
        clock = self.deadline is not None and self._ticks % _CLOCK_EVERY == 0
        if clock and time.thread_time() > (self.deadline or 0.0):
            raise PlainDataError("decoding took too much CPU time")

    def admit(self, value: Any) -> None:
        """Record a decoded value's hash; raises when more than :data:`MAX_SAME_HASH`
        distinct values share it (the census is a dict keyed by the hash, an ``int`` that
        hashes to itself, so it stays linear)."""
        try:
            h = hash(value)
        except TypeError:  # lists, dicts, sets, tuples holding them: never hashed
            return
        seen = self._by_hash.setdefault(h, [])
        if len(seen) < MAX_SAME_HASH + 1 and not any(v is value or v == value for v in seen):
            seen.append(value)
        if len(seen) > MAX_SAME_HASH:
            raise PlainDataError(f"more than {MAX_SAME_HASH} distinct values with one hash")


def decode(obj: Any, *, budget: DecodeBudget | None = None) -> Any:
    """The value of an :func:`encode`-d form; only exact builtin types come out.

    Args:
        obj: the encoding (parsed JSON).
        budget: limits shared with other decodes (default: a fresh one, no deadline); every
            decode also stops at :data:`MAX_ITEMS` items of its own.

    Raises:
        PlainDataError: ``obj`` is not a valid encoding (unknown tag, bad payload, unhashable
            key or set element, nesting deeper than :data:`MAX_DEPTH`) or passes a limit
            (see the module docstring).

    Example:
        >>> decode({"tuple": [{"float": "nan"}, True, {"set": [{"int": "-ff"}]}]})
        (nan, True, {-255})
    """
    return _Decoder(budget or DecodeBudget()).decode(obj, 0)


class _Decoder:
    """One decode: its own item count, and the shared budget."""

    def __init__(self, budget: DecodeBudget) -> None:
        self.budget = budget
        self.items_left = MAX_ITEMS

    def decode(self, obj: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise PlainDataError(f"encoding nested deeper than {MAX_DEPTH} levels")
        self.items_left -= 1
        if self.items_left < 0:
            raise PlainDataError(f"encoding holds more than {MAX_ITEMS} items")
        self.budget.spend()
        value = self._value(obj, depth)
        self.budget.admit(value)
        return value

    def _value(self, obj: Any, depth: int) -> Any:
        tp = type(obj)
        if obj is None or tp is bool or tp is str:
            return obj
        if tp is list:
            return [self.decode(v, depth + 1) for v in obj]
        if tp is not dict or len(obj) != 1:
            raise PlainDataError(f"invalid encoding: {_type_name(tp)} {_short(obj)}")
        ((tag, payload),) = obj.items()
        try:
            return self._tagged(tag, payload, depth)
        except PlainDataError:
            raise
        except (ValueError, TypeError, OverflowError, binascii.Error) as exc:
            raise PlainDataError(f"invalid {tag!r} encoding {_short(payload)}: {exc}") from None

    def _tagged(self, tag: str, payload: Any, depth: int) -> Any:
        if tag in ("int", "float", "complex", "bytes"):
            return _scalar(tag, payload)
        if tag in ("tuple", "set", "frozenset") and type(payload) is list:
            # set elements went through admit() before set() hashes them: bounded collisions
            items = [self.decode(v, depth + 1) for v in payload]
            return (
                tuple(items)
                if tag == "tuple"
                else set(items)
                if tag == "set"
                else frozenset(items)
            )
        if tag == "dict" and type(payload) is list:
            pairs = [self._pair(p, depth) for p in payload]
            return dict(pairs)
        raise PlainDataError(
            f"invalid encoding: unknown tag or payload {tag!r}: {_short(payload)}"
        )

    def _pair(self, pair: Any, depth: int) -> tuple[Any, Any]:
        if type(pair) is not list or len(pair) != 2:
            raise PlainDataError(f"invalid dict item {_short(pair)}")
        return self.decode(pair[0], depth + 1), self.decode(pair[1], depth + 1)


def _scalar(tag: str, payload: Any) -> Any:
    """An ``int``, ``float``, ``complex`` or ``bytes`` payload, within the size limits."""
    if tag == "int" and type(payload) is str:
        if len(payload.lstrip("-")) > MAX_INT_HEX_DIGITS:
            raise PlainDataError(f"int of more than {MAX_INT_HEX_DIGITS} hex digits")
        return int(payload, 16)
    if tag == "float" and type(payload) is str:
        return float(_bounded_float(payload))
    if tag == "complex" and type(payload) is list and len(payload) == 2:
        re_, im = payload
        if type(re_) is str and type(im) is str:
            return complex(float(_bounded_float(re_)), float(_bounded_float(im)))
    if tag == "bytes" and type(payload) is str:
        return base64.b64decode(payload.encode("ascii"), validate=True)
    raise PlainDataError(f"invalid encoding: unknown tag or payload {tag!r}: {_short(payload)}")


def _bounded_float(text: str) -> str:
    if len(text) > MAX_FLOAT_CHARS:
        raise PlainDataError(f"float text of more than {MAX_FLOAT_CHARS} characters")
    return text


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
