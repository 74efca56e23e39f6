"""Error fingerprints: the same mistake in different code maps to one signature.

A fingerprint is a short, readable line ``"<ExceptionType>: <message>"`` (or just the type, or a
masked message when no exception type can be found). Two steps make the message the same for
one mistake wherever it happens, and different for different mistakes:

1. **Families** (:mod:`~costeer_lab._fingerprint._families`): the known wordings Python, numpy
   and pandas use for one kind of mistake get one canonical message — ``len() takes exactly
   one argument (2 given)`` and ``f() missing 1 required positional argument: 'x'`` are both
   ``wrong number of arguments in a call``; hints such as ``Did you mean: 'abs'?`` are dropped.
2. **Masking** (:mod:`~costeer_lab._fingerprint._mask`) of any other message replaces what
   varies between tasks and runs:

=====================================  ===========
what                                   becomes
=====================================  ===========
quoted literals ``'close'``, ``"x"``   ``<str>``
``<...>`` reprs (``<function f at…>``) ``<obj>``
paths ``/tmp/ws/main.py``, ``C:\\x``   ``<path>``
hex addresses / hashes ``0x7f3a…``     ``<addr>``
numbers (line numbers, sizes, …)       ``<num>``
tuples of numbers ``(100, 2)``         ``<shape>``
identifiers (``snake_case``,           ``<id>``
``dotted.names``, ``camelCase``,
``call(``, exception names; not
``ACRONYMS``)
=====================================  ===========

Plain English words are kept. The exception type is always kept as printed. Normalisation is
idempotent: ``error_fingerprint(error_fingerprint(t)) == error_fingerprint(t)``. An evaluator
may add the class of a value mismatch (``error_fingerprint(text, mismatch="scale")``).

:func:`is_skippable_failure` says which failures a memory should not store (syntax typos,
infrastructure errors such as API time-outs and interrupted runs).

Example:
    >>> error_fingerprint("IndexError: string index out of range")
    'IndexError: index out of range'
"""

from __future__ import annotations

from costeer_lab._fingerprint._families import canonical_message
from costeer_lab._fingerprint._mask import MAX_MESSAGE_CHARS, normalize
from costeer_lab._fingerprint._scan import (
    MAX_FINGERPRINTS,
    cap_fingerprints,
    error_fingerprint,
    extract_errors,
    mismatch_name,
)
from costeer_lab._fingerprint._skip import is_skippable_failure, skip_reason

__all__ = [
    "MAX_FINGERPRINTS",
    "MAX_MESSAGE_CHARS",
    "canonical_message",
    "cap_fingerprints",
    "error_fingerprint",
    "extract_errors",
    "is_skippable_failure",
    "mismatch_name",
    "normalize",
    "skip_reason",
]
