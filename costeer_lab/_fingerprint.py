"""Error fingerprints: the same mistake in different tasks maps to one signature.

A fingerprint is a short, readable line ``"<ExceptionType>: <masked message>"`` (or just the type,
or a masked message when no exception type can be found). Masking replaces what varies between
tasks and runs while the mistake stays the same:

=====================================  ===========
what                                   becomes
=====================================  ===========
quoted literals ``'close'``, ``"x"``   ``<str>``
``<...>`` reprs (``<function f at…>``) ``<obj>``
paths ``/tmp/ws/main.py``, ``C:\\x``   ``<path>``
hex addresses / hashes ``0x7f3a…``     ``<addr>``
numbers (line numbers, shapes, …)      ``<num>``
identifiers (``snake_case``,           ``<id>``
``dotted.names``, ``camelCase``,
``call(``, exception names; not
``ACRONYMS``)
=====================================  ===========

Plain English words are kept. Normalisation is idempotent:
``error_fingerprint(error_fingerprint(t)) == error_fingerprint(t)``.
"""

from __future__ import annotations

import re

__all__ = ["error_fingerprint", "extract_errors"]

#: Name endings that mark an exception class (``KeyError``, ``StopIteration``, …).
_EXC_SUFFIXES = (
    "Error",
    "Exception",
    "Warning",
    "Exit",
    "Interrupt",
    "Iteration",
    "Expired",
    "Timeout",
)
#: Longest kept message (characters) before it is cut at a word boundary and marked ``...``.
MAX_MESSAGE_CHARS = 300
#: Longest input line looked at (characters); longer lines are cut first.
_MAX_LINE_CHARS = 4000
_TRACEBACK_HEADER = "Traceback (most recent call last)"
_KEEP_WORDS = frozenset({"None", "True", "False", "NaN"})

_TOKEN = re.compile(
    r"(?P<ph><(?:str|num|path|addr|id|obj)>)"
    r"|(?P<repr><[^<>\n]*>)"
    r"|(?P<quoted>'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`)"
    r"|(?P<path>(?:[A-Za-z]:|~|\.{1,2})?[\\/][.~/\\-]*\w[\w.~/\\-]*)"
    r"|(?P<hex>0[xX][0-9a-fA-F]+|(?<![\w.])[0-9a-fA-F]{8,}(?!\w|\.\d))"
    r"|(?P<num>-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?)"
    r"|(?P<ident>[^\W\d]\w*(?:\.[^\W\d]\w*)*)(?P<call>\((?!s\)))?"
)
_PLAIN_NUMBER = re.compile(r"\d+(?:[eE]\d+)?")
_NAME = re.compile(r"[^\W\d][\w.]*")
_WS = re.compile(r"\s+")


def _is_exception_name(name: str) -> bool:
    return name.endswith(_EXC_SUFFIXES)


def _mask_ident(word: str) -> str:
    if word in _KEEP_WORDS:
        return word
    if (
        "." in word
        or "_" in word
        or any(c.isdigit() for c in word)
        or (any(c.isupper() for c in word[1:]) and not word.isupper())
        or _is_exception_name(word)
    ):
        return "<id>"
    return word


def _replace(m: re.Match[str]) -> str:
    kind = m.lastgroup
    if kind == "ph":
        return m.group(0)
    if kind == "repr":
        return "<obj>"
    if kind == "quoted":
        return "<str>"
    if kind == "path":
        return "<path>"
    if kind == "hex":
        text = m.group(0)
        if _PLAIN_NUMBER.fullmatch(text):
            return "<num>"
        if any(c.isdigit() for c in text):  # "0x…" always has one
            return "<addr>"
        return _mask_ident(text)
    if kind == "num":
        return "<num>"
    # ident, possibly followed by "("
    word = m.group("ident")
    if m.group("call"):
        return "<id>("
    return _mask_ident(word)


def _cut(text: str, limit: int) -> str:
    """Cut a normalized text to at most ``limit`` characters without splitting a word."""
    if len(text) <= limit:
        return text
    marker = " ..."
    end = limit - len(marker)
    head = text[:end]
    space = head.rfind(" ")
    if space > 0:
        head = head[:space]
    else:  # one long chunk: back off to the start of a word cut in two
        i = len(head)
        while i > 0 and head[i - 1].isalnum() and text[i].isalnum():
            i -= 1
        head = head[:i] if i > 0 else head
    return head.rstrip() + marker


def _normalize(message: str) -> str:
    """Mask the variable parts of a one-line message (idempotent)."""
    flat = _WS.sub(" ", message).strip()
    return _cut(_TOKEN.sub(_replace, flat).strip(), MAX_MESSAGE_CHARS)


def _split_at(line: str, start: int, end: int) -> tuple[str, str] | None:
    """``(type, message)`` when the name ``line[start:end]`` is followed by ``:`` or the end."""
    rest = line[end:]
    if not rest.strip():
        return line[start:end], ""
    if rest[0] == ":":
        return line[start:end], rest[1:].strip()
    return None


def _named_exception(line: str) -> tuple[str, str] | None:
    """Leftmost ``SomethingError: message`` (or bare ``SomethingError``) in a line."""
    for m in _NAME.finditer(line):
        if not _is_exception_name(m.group(0)):
            continue
        if m.start() > 0 and (line[m.start() - 1].isalnum() or line[m.start() - 1] in "_."):
            continue
        found = _split_at(line, m.start(), m.end())
        if found is not None:
            return found
    return None


def _leading_name(line: str) -> tuple[str, str] | None:
    """``Name: message`` at the start of a line (any name, as Python prints raised exceptions)."""
    stripped = line.lstrip()
    m = _NAME.match(stripped)
    return _split_at(stripped, 0, m.end()) if m else None


def _format(parts: tuple[str, str] | None, line: str) -> str:
    if parts is None:
        return _normalize(line)
    exc_type, message = parts
    masked = _normalize(message)
    return f"{exc_type}: {masked}" if masked else exc_type


def _scan(text: str) -> tuple[list[tuple[int, str, str]], list[tuple[int, str, str]]]:
    """Error lines as ``(line index, fingerprint, line)``: (raised by tracebacks, named inline)."""
    raised: list[tuple[int, str, str]] = []
    inline: list[tuple[int, str, str]] = []
    lines = [ln[:_MAX_LINE_CHARS] for ln in text.splitlines()]
    base: int | None = None  # indentation of the open traceback header
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if stripped.startswith(_TRACEBACK_HEADER):
            base = indent
            continue
        if base is not None:
            if indent > base:
                continue  # a frame or source line of the traceback
            base = None
            parts = _leading_name(line) or _named_exception(line)
            raised.append((i, _format(parts, line), stripped))
            continue
        named = _named_exception(line)
        if named is not None:
            inline.append((i, _format(named, line), stripped))
    return raised, inline


def _last_line(text: str) -> str:
    for line in reversed(text.splitlines()):
        if line.strip():
            return line[:_MAX_LINE_CHARS]
    return ""


def error_fingerprint(text: str) -> str:
    """Normalized signature of the error a traceback or evaluator message reports.

    The error chosen is the one finally raised: the exception line of the last traceback, else
    the last line naming an exception (``... KeyError: 'close'``), else the last non-blank line.
    Returns ``""`` for blank text; never raises on any string.

    Args:
        text: a full traceback, captured stderr, or a one-line evaluator message.

    Returns:
        ``"ExceptionType: masked message"`` (see the module docstring for the masking).

    Example:
        >>> error_fingerprint('File "/tmp/a.py", line 3\\nKeyError: \\'close\\'')
        'KeyError: <str>'
        >>> error_fingerprint("Execution failed: ValueError: window 20 > length 5")
        'ValueError: window <num> > length <num>'
    """
    if not isinstance(text, str) or not text.strip():
        return ""
    raised, inline = _scan(text)
    if raised:
        return raised[-1][1]
    if inline:
        return inline[-1][1]
    last = _last_line(text)
    return _format(_leading_name(last), last)


def extract_errors(text: str) -> list[tuple[str, str]]:
    """Every distinct error a text reports, as ``(fingerprint, original line)`` pairs.

    Exception lines of tracebacks and lines naming an exception are kept in the order they
    appear, one pair per distinct fingerprint (the first line seen). Without any, a non-blank
    text gives one pair for its last line, so ``error_fingerprint(text)`` is always among the
    fingerprints returned. Blank text gives ``[]``.

    Example:
        >>> extract_errors("UserWarning: slow\\nTypeError: f() takes 2 arguments")
        [('UserWarning: slow', 'UserWarning: slow'), ('TypeError: <id>() takes <num> arguments', \
'TypeError: f() takes 2 arguments')]
    """
    if not isinstance(text, str) or not text.strip():
        return []
    raised, inline = _scan(text)
    found = sorted(raised + inline)
    if not found:
        last = _last_line(text)
        return [(_format(_leading_name(last), last), last.strip())]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for _, fp, line in found:
        if fp not in seen:
            seen.add(fp)
            out.append((fp, line))
    return out
