"""Message families: the many wordings Python, numpy and pandas use for one kind of mistake.

Masking alone (see :mod:`~costeer_lab._fingerprint._mask`) keeps the wording, so one mistake in
different code still gives different signatures: ``f() takes 2 positional arguments but 3 were
given`` and ``len() takes exactly one argument (2 given)`` are both a call with the wrong number
of arguments; ``list index out of range`` and ``index 5 is out of bounds for axis 0 with size
5`` both index past the end. :func:`canonical_message` maps the known wordings of each family to
one short message. It looks only at the exception type and its message — never at the code or
the task — and returns ``None`` for a message of no known family (masking then decides).

Families (wordings → canonical message):

- ``takes 2 … but 3 were given``, ``missing 1 required …``, ``expected at most 3 arguments, got
  4``, ``(2 given)`` → ``wrong number of arguments in a call``
- ``unexpected keyword argument``, ``multiple values for argument`` → ``unexpected keyword
  argument in a call``
- ``unsupported operand type(s)``, ``can only concatenate``, ``not supported between
  instances``, ``can't multiply sequence``, numpy's ``ufunc 'add' did not contain a loop with
  signature matching types``, pandas' ``Invalid comparison between dtype=float64 and str`` →
  ``unsupported operand types for an operator``
- any ``TypeError`` or ``AttributeError`` naming ``NoneType`` → ``operation on None``
- ``list indices must be integers`` → ``indices must be integers``
- ``… index out of range``, ``out of bounds`` → ``index out of range``
- any ``ZeroDivisionError`` → ``division by zero``
- ``not enough`` / ``too many values to unpack`` → ``wrong number of values to unpack``
- ``invalid literal for int()``, ``could not convert string to float`` → ``could not convert a
  string to a number``
- ``max() arg is an empty sequence`` → ``empty sequence given to max or min``
- ``The truth value of a Series is ambiguous`` → ``truth value of an array is ambiguous``
- ``… has no attribute 'x'`` (objects, modules, types) → ``object has no attribute <str>``
- ``name 'np' is not defined`` where the name is a module → ``name <str> is not defined (missing
  import)``; any other name → ``name <str> is not defined``
- ``local variable … referenced before assignment``, ``cannot access local variable`` →
  ``local variable used before assignment``
- ``No module named 'x'; 'a' is not a package`` → ``No module named <str>``
- ``cannot import name 'x' from 'y' (path)`` → ``cannot import name <str> from <str>``
- ``maximum recursion depth exceeded …`` → ``maximum recursion depth exceeded``
- any syntax typo (``expected ':'``, ``was never closed``, ``unterminated string``) →
  ``invalid syntax`` (``invalid indentation`` for ``IndentationError`` / ``TabError``);
  structural ones (``'return' outside function``) are masked as usual
- a ``KeyError`` of one literal key (``'close'``, ``3``, ``(1, 'a')``) → ``<str>``

numpy's private exception classes (``numpy._core._exceptions._UFuncNoLoopError``) are named by
the public class they derive from (``TypeError``): see :func:`public_type`.

Hints Python adds (``Did you mean: 'append'?``, ``Did you forget to import 'numpy'?``) are
dropped first: they name the code's own identifiers.
"""

from __future__ import annotations

import re
import sys

__all__ = ["CANONICAL_MESSAGES", "canonical_message", "public_type", "strip_hints"]

#: Private exception classes of numpy, printed with their module path, and the public class
#: they derive from (the type a user catches and reads about).
_PRIVATE_TYPES = {
    "_UFuncNoLoopError": "TypeError",
    "_UFuncBinaryResolutionError": "TypeError",
    "_UFuncInputCastingError": "TypeError",
    "_UFuncOutputCastingError": "TypeError",
    "_ArrayMemoryError": "MemoryError",
}

_HINT = re.compile(
    r"\.?\s*(?:Did you mean\b|Did you forget to import\b|Maybe you meant\b|Perhaps you forgot\b"
    r"|Or did you\b).*$"
)
_SYNTAX_TYPES = frozenset({"SyntaxError", "IndentationError", "TabError"})
#: Syntax errors about the structure of the program (kept, masked), not typos.
_SYNTAX_STRUCTURE = re.compile(
    r"outside (?:async )?(?:function|loop)|follows keyword argument|duplicate argument"
    r"|nonlocal|global|future feature|not allowed in|is parameter and"
)
#: Module names and aliases whose ``NameError`` means a missing import. Standard modules that
#: are also common variable names (``string``, ``numbers``, ``array``, …) are left out.
_COMMON_ALIASES = frozenset(
    {"np", "pd", "plt", "sns", "sp", "tf", "torch", "scipy", "sklearn", "numpy", "pandas"}
    | {"matplotlib", "mpl", "nx", "networkx", "cv2", "requests", "yaml", "stats", "pa", "pq"}
)
_VARIABLE_LIKE = frozenset(
    {"string", "numbers", "array", "operator", "code", "types", "token", "select", "site"}
    | {"test", "this", "symbol", "keyword", "parser", "resource", "types", "tty", "pty"}
)
_MODULE_NAMES = _COMMON_ALIASES | (frozenset(sys.stdlib_module_names) - _VARIABLE_LIKE)

_NAME_NOT_DEFINED = re.compile(r"name '([^']*)' is not defined")
_KEY_LITERAL = re.compile(r"""'[^']*'|"[^"]*"|-?\d+(?:\.\d+)?|\(.*\)|None|True|False""")

#: (exception types or None for any, pattern searched in the message, canonical message)
_FAMILIES: tuple[tuple[frozenset[str] | None, re.Pattern[str], str], ...] = tuple(
    (None if types is None else frozenset(types), re.compile(pattern), canonical)
    for types, pattern, canonical in (
        (("TypeError", "AttributeError"), r"NoneType", "operation on None"),
        (
            ("TypeError",),
            r"unexpected keyword argument|multiple values for (?:keyword )?argument"
            r"|takes no keyword arguments|is an invalid keyword argument",
            "unexpected keyword argument in a call",
        ),
        (
            ("TypeError",),
            r"\b(?:takes|expected|missing)\b[^:]*\barguments?\b",
            "wrong number of arguments in a call",
        ),
        (
            ("TypeError",),
            r"unsupported operand type|can only concatenate|can't concat"
            r"|not supported between instances|can't multiply sequence|bad operand type"
            r"|must be str, not|must be real number, not"
            r"|operation .* not supported for dtype|Invalid comparison between"
            r"|not all arguments converted during string formatting"
            r"|ufunc .*(?:not supported for the input types"
            r"|did not contain a loop with signature)",
            "unsupported operand types for an operator",
        ),
        (("TypeError",), r"indices must be integers", "indices must be integers"),
        (
            ("IndexError",),
            r"index out of range|out of bounds|out-of-bounds",
            "index out of range",
        ),
        (("ZeroDivisionError",), r"", "division by zero"),
        (
            ("ValueError",),
            r"(?:not enough|too many) values to unpack",
            "wrong number of values to unpack",
        ),
        (
            ("ValueError",),
            r"invalid literal for (?:int|float)\(\)"
            r"|could not convert (?:string )?.*to (?:float|int)",
            "could not convert a string to a number",
        ),
        (
            ("ValueError",),
            r"\b(?:max|min)\(\) (?:arg is an empty sequence|iterable argument is empty)",
            "empty sequence given to max or min",
        ),
        (
            ("ValueError",),
            r"truth value of an? .*is ambiguous",
            "truth value of an array is ambiguous",
        ),
        (("AttributeError",), r"has no attribute", "object has no attribute <str>"),
        (
            ("UnboundLocalError", "NameError"),
            r"referenced before assignment|cannot access (?:local|free) variable",
            "local variable used before assignment",
        ),
        (("ModuleNotFoundError", "ImportError"), r"^No module named ", "No module named <str>"),
        (
            ("ImportError",),
            r"^cannot import name ",
            "cannot import name <str> from <str>",
        ),
        (
            ("RecursionError",),
            r"maximum recursion depth exceeded",
            "maximum recursion depth exceeded",
        ),
    )
)

#: Every message :func:`canonical_message` can return (they map to themselves).
CANONICAL_MESSAGES = frozenset(
    {c for _, _, c in _FAMILIES}
    | {"invalid syntax", "invalid indentation", "<str>", "name <str> is not defined"}
    | {"name <str> is not defined (missing import)"}
)


def strip_hints(message: str) -> str:
    """Drop the hints Python appends to some messages.

    Example:
        >>> strip_hints("name 'abz' is not defined. Did you mean: 'abs'?")
        "name 'abz' is not defined"
    """
    return _HINT.sub("", message)


def public_type(exc_type: str) -> str:
    """The public class of numpy's private exception classes; other types unchanged.

    Example:
        >>> public_type("numpy._core._exceptions._UFuncNoLoopError"), public_type("KeyError")
        ('TypeError', 'KeyError')
    """
    return _PRIVATE_TYPES.get(exc_type.rsplit(".", 1)[-1], exc_type)


def _base_type(exc_type: str) -> str:
    return exc_type.rsplit(".", 1)[-1]


def canonical_message(exc_type: str, message: str) -> str | None:
    """The canonical message of a known family, or ``None`` (see the module docstring).

    Args:
        exc_type: the exception type as printed (``KeyError``, ``pandas.errors.MergeError``).
        message: its message, hints already stripped (:func:`strip_hints`).

    Example:
        >>> canonical_message("TypeError", "len() takes exactly one argument (2 given)")
        'wrong number of arguments in a call'
        >>> canonical_message("NameError", "name 'np' is not defined")
        'name <str> is not defined (missing import)'
        >>> canonical_message("ValueError", "window too long") is None
        True
    """
    base = _base_type(exc_type)
    text = message.strip()
    if text in CANONICAL_MESSAGES:
        return text
    if base in _SYNTAX_TYPES:
        if base != "SyntaxError":
            return "invalid indentation"
        return None if _SYNTAX_STRUCTURE.search(text) else "invalid syntax"
    if base == "KeyError":
        return "<str>" if _KEY_LITERAL.fullmatch(text) else None
    if base == "NameError":
        m = _NAME_NOT_DEFINED.search(text)
        if m is not None:
            missing_import = m.group(1) in _MODULE_NAMES
            return "name <str> is not defined" + (" (missing import)" if missing_import else "")
    for types, pattern, canonical in _FAMILIES:
        if (types is None or base in types) and pattern.search(text):
            return canonical
    return None
