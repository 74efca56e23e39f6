"""Finding the error lines of a traceback or evaluator text, and their fingerprints."""

from __future__ import annotations

import re
from collections.abc import Iterable

from costeer_lab._fingerprint._families import canonical_message, public_type, strip_hints
from costeer_lab._fingerprint._mask import is_exception_name, normalize

__all__ = [
    "MAX_FINGERPRINTS",
    "cap_fingerprints",
    "error_fingerprint",
    "extract_errors",
    "mismatch_name",
]

#: Most error fingerprints one attempt records (each becomes a failure-memory node): a run
#: printing thousands of distinct error lines is one attempt, not thousands of lessons.
MAX_FINGERPRINTS = 20

#: Longest input line looked at (characters); longer lines are cut first.
_MAX_LINE_CHARS = 4000
_TRACEBACK_HEADER = "Traceback (most recent call last)"
_NAME = re.compile(r"[^\W\d][\w.]*")
_NOT_NAME_CHARS = re.compile(r"[^a-z0-9_]+")
_MISMATCH_PART = re.compile(r"\s*\[mismatch: ([a-z][a-z0-9_]{0,39})\]$")


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
        if not is_exception_name(m.group(0)):
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
    text = line if parts is None else parts[1]
    suffix = _MISMATCH_PART.search(text)
    if suffix is not None:  # a fingerprint given again: keep its mismatch class
        text = text[: suffix.start()]
    if parts is None:
        fp = normalize(text)
    else:
        exc_type, message = public_type(parts[0]), strip_hints(text)
        masked = canonical_message(exc_type, message)
        if masked is None:
            masked = normalize(message)
        fp = f"{exc_type}: {masked}" if masked else exc_type
    return f"{fp} [mismatch: {suffix.group(1)}]" if suffix is not None else fp


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


def _primary(text: str) -> tuple[str, str]:
    """``(fingerprint, line)`` of the error finally raised (see :func:`error_fingerprint`)."""
    suffix = _MISMATCH_PART.search(text.rstrip())
    if suffix is not None and text[: suffix.start()].strip():  # a fingerprint given again
        fp, line = _primary(text[: suffix.start()])
        return f"{fp} [mismatch: {suffix.group(1)}]", line
    raised, inline = _scan(text)
    if raised:
        return raised[-1][1], raised[-1][2]
    if inline:
        return inline[-1][1], inline[-1][2]
    last = _last_line(text)
    return _format(_leading_name(last), last), last.strip()


def error_fingerprint(text: str, *, mismatch: str | None = None) -> str:
    """Normalized signature of the error a traceback or evaluator message reports.

    The error chosen is the one finally raised: the exception line of the last traceback, else
    the last line naming an exception (``... KeyError: 'close'``), else the last non-blank line.
    Its message is masked and, for known families of wordings, replaced by one canonical
    message (see :mod:`costeer_lab._fingerprint`). Returns ``""`` for blank text; never raises
    on any string.

    Args:
        text: a full traceback, captured stderr, or a one-line evaluator message.
        mismatch: optional class of a value mismatch found by an evaluator (``"scale"``,
            ``"sign"``, ``"lag"``, …), appended as ``" [mismatch: scale]"`` (cleaned by
            :func:`mismatch_name`) so that different mismatches get different signatures.

    Returns:
        ``"ExceptionType: masked message"`` (see the module docstring for the masking).

    Example:
        >>> error_fingerprint('File "/tmp/a.py", line 3\\nKeyError: \\'close\\'')
        'KeyError: <str>'
        >>> error_fingerprint("Execution failed: ValueError: window 20 > length 5")
        'ValueError: window <num> > length <num>'
        >>> error_fingerprint("TypeError: len() takes exactly one argument (2 given)")
        'TypeError: wrong number of arguments in a call'
        >>> error_fingerprint("FactorCheckError: values differ", mismatch="scale")
        'FactorCheckError: values differ [mismatch: scale]'
    """
    if not isinstance(text, str) or not text.strip():
        return ""
    fp = _primary(text)[0]
    name = mismatch_name(mismatch)
    if not name or _MISMATCH_PART.search(fp):
        return fp
    return f"{fp} [mismatch: {name}]"


def mismatch_name(mismatch: object) -> str:
    """The mismatch class as it appears in a fingerprint: lower case, runs of other characters
    than letters, digits and ``_`` made one ``_``, at most 40 characters, leading letter
    (``""`` for ``None`` or nothing usable).

    Example:
        >>> mismatch_name("Lag -1"), mismatch_name(None)
        ('lag_1', '')
    """
    if not isinstance(mismatch, str):
        return ""
    name = _NOT_NAME_CHARS.sub("_", mismatch.lower()).strip("_").lstrip("0123456789_")
    return name[:40].rstrip("_")


def extract_errors(text: str, limit: int | None = MAX_FINGERPRINTS) -> list[tuple[str, str]]:
    """The distinct errors a text reports, as ``(fingerprint, original line)`` pairs: at most
    ``limit`` of them (``None``: all), the first ones.

    The error finally raised (the one :func:`error_fingerprint` chooses) comes first; then the
    other exception lines of tracebacks and lines naming an exception (warnings too), in the
    order they appear, one pair per distinct fingerprint (the first line seen). So
    ``extract_errors(text)[0][0] == error_fingerprint(text)`` for any non-blank text; blank
    text gives ``[]``.

    Example:
        >>> extract_errors("UserWarning: slow\\nTypeError: f() takes 2 arguments")
        [('TypeError: wrong number of arguments in a call', 'TypeError: f() takes 2 arguments'), \
('UserWarning: slow', 'UserWarning: slow')]
    """
    if not isinstance(text, str) or not text.strip():
        return []
    raised, inline = _scan(text)
    out = [_primary(text)]
    seen = {out[0][0]}
    for _, fp, line in sorted(raised + inline):
        if limit is not None and len(out) >= limit:
            break
        if fp not in seen:
            seen.add(fp)
            out.append((fp, line))
    return out if limit is None else out[: max(limit, 0)]


def cap_fingerprints(
    fingerprints: Iterable[str], limit: int = MAX_FINGERPRINTS
) -> tuple[str, ...]:
    """The first ``limit`` distinct non-blank fingerprints, in order (the first errors are the
    most informative: later ones are often consequences of them).

    Example:
        >>> cap_fingerprints(["A: x", "B: y", "A: x", "", "C: z"], limit=2)
        ('A: x', 'B: y')
    """
    out: dict[str, None] = {}
    for fp in fingerprints:
        if len(out) >= limit:
            break
        if fp:
            out[fp] = None
    return tuple(out)
