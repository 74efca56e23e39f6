"""Masking of one message line: what varies between tasks and runs becomes a placeholder.

See the table in :mod:`costeer_lab._fingerprint`. Normalisation is idempotent.
"""

from __future__ import annotations

import re

__all__ = ["MAX_MESSAGE_CHARS", "PLACEHOLDERS", "cut", "is_exception_name", "normalize"]

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
#: The placeholders masking writes (a masked text keeps them as they are).
PLACEHOLDERS = ("str", "num", "path", "addr", "id", "obj", "shape")
_KEEP_WORDS = frozenset({"None", "True", "False", "NaN"})

_TOKEN = re.compile(
    rf"(?P<ph><(?:{'|'.join(PLACEHOLDERS)})>)"
    r"|(?P<repr><[^<>\n]*>)"
    r"|(?P<quoted>'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`)"
    r"|(?P<path>(?:[A-Za-z]:|~|\.{1,2})?[\\/][.~/\\-]*\w[\w.~/\\-]*)"
    r"|(?P<hex>0[xX][0-9a-fA-F]+|(?<![\w.])[0-9a-fA-F]{8,}(?!\w|\.\d))"
    r"|(?P<num>-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?)"
    r"|(?P<ident>[^\W\d]\w*(?:\.[^\W\d]\w*)*)(?P<call>\((?!s\)))?"
)
#: A tuple of numbers once masked, ``(<num>, <num>)`` or ``(<num>,)``: an array shape.
_SHAPE = re.compile(r"\((?:\s*<num>\s*,)+\s*(?:<num>\s*)?\)")
_PLAIN_NUMBER = re.compile(r"\d+(?:[eE]\d+)?")
_WS = re.compile(r"\s+")


def is_exception_name(name: str) -> bool:
    """Whether a (possibly dotted) name ends like an exception class.

    Example:
        >>> is_exception_name("pandas.errors.MergeError"), is_exception_name("close")
        (True, False)
    """
    return name.endswith(_EXC_SUFFIXES)


def _mask_ident(word: str) -> str:
    if word in _KEEP_WORDS:
        return word
    if (
        "." in word
        or "_" in word
        or any(c.isdigit() for c in word)
        or (any(c.isupper() for c in word[1:]) and not word.isupper())
        or is_exception_name(word)
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


def cut(text: str, limit: int) -> str:
    """Cut a normalized text to at most ``limit`` characters without splitting a word.

    Example:
        >>> cut("aa bb cc dd ee", 12)
        'aa bb ...'
    """
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


def normalize(message: str) -> str:
    """Mask the variable parts of a one-line message (idempotent).

    Example:
        >>> normalize("window 20 > length 5 for 'close' at (100, 2)")
        'window <num> > length <num> for <str> at <shape>'
    """
    flat = _WS.sub(" ", message).strip()
    masked = _SHAPE.sub("<shape>", _TOKEN.sub(_replace, flat))
    return cut(masked.strip(), MAX_MESSAGE_CHARS)
