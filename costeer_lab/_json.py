"""A JSON encoder built once and called many times, with the output of ``json.dumps``.

``json.JSONEncoder.encode`` builds the C encoder of the standard library anew on every call,
with a fresh dictionary to detect circular references: for the small dictionaries a knowledge
base writes per attempt (a few hundred bytes) that is a third of the time. :func:`encoder`
builds the C encoder once. It keeps no state between calls (no circular-reference check: a
circular or very deep value ends in :class:`RecursionError`), so one encoder serves every
thread.

Example:
    >>> encode = encoder(sort_keys=True)
    >>> encode({"b": 1, "a": [1.5, None, "é"]})
    '{"a": [1.5, null, "\\\\u00e9"], "b": 1}'
    >>> encode({"b": 1, "a": [1.5, None, "é"]}) == json.dumps({"b": 1, "a": [1.5, None, "é"]},
    ...                                                       sort_keys=True)
    True
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as _std
from typing import Any

__all__ = ["encoder"]


def _unsupported(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encoder(
    *,
    sort_keys: bool = False,
    ensure_ascii: bool = True,
    separators: tuple[str, str] = (", ", ": "),
    allow_nan: bool = True,
) -> Callable[[Any], str]:
    """A function returning ``json.dumps(value, <these options>)`` for any value whose
    nesting does not loop (a value that holds itself raises :class:`RecursionError`, not
    ``ValueError``).

    Raises (when called): ``TypeError`` for a value JSON cannot hold, ``ValueError`` for a
    non-finite float when ``allow_nan`` is false, as ``json.dumps`` does.
    """
    item_separator, key_separator = separators
    make = getattr(_std, "c_make_encoder", None)
    if make is None:  # no C accelerator (another Python): the standard encoder, per call
        std = json.JSONEncoder(
            sort_keys=sort_keys,
            ensure_ascii=ensure_ascii,
            separators=separators,
            allow_nan=allow_nan,
            check_circular=False,
        )
        return std.encode
    strings = _std.encode_basestring_ascii if ensure_ascii else _std.encode_basestring
    chunks = make(
        None, _unsupported, strings, None, key_separator, item_separator, sort_keys, False,
        allow_nan,
    )  # fmt: skip

    def encode(value: Any) -> str:
        return "".join(chunks(value, 0))

    return encode
