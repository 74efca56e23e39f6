"""Extract the Python program from a chat model reply (fenced blocks, bare code, truncation)."""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from dataclasses import dataclass
from typing import Literal

__all__ = ["CodeExtraction", "extract_code"]

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$")
_PYTHON_TAGS = frozenset({"python", "py", "python3", "py3", "python2", "ipython", "pycon"})
_UNTAGGED = frozenset({""})
#: A block at least this share of the longest parseable block may win by coming last.
_LAST_WINS_SHARE = 0.6

Method = Literal["fenced_python", "fenced", "fenced_unparsed", "raw", "none"]


@dataclass(frozen=True)
class CodeExtraction:
    """What :func:`extract_code` found.

    Attributes:
        code: the program text, or ``None`` when the reply holds no code.
        method: ``fenced_python`` (a ```python block), ``fenced`` (a block without language),
            ``fenced_unparsed`` (a code block that does not parse; kept so that the evaluator
            reports the syntax error), ``raw`` (the whole reply parses), ``none``.
        parses: whether ``code`` parses with :func:`ast.parse`.
        reason: why nothing (or nothing parseable) was found; ``""`` on a clean extraction.
        n_blocks: fenced blocks seen in the reply.
    """

    code: str | None
    method: Method
    parses: bool
    reason: str = ""
    n_blocks: int = 0

    @property
    def ok(self) -> bool:
        """True when some code was found (it may still fail to parse)."""
        return self.code is not None


@dataclass(frozen=True)
class _Block:
    info: str
    text: str
    closed: bool
    order: int


def _parses(code: str) -> tuple[bool, str]:
    if not code.strip():
        return False, "empty"
    try:
        with warnings.catch_warnings():  # e.g. SyntaxWarning for invalid escapes in model code
            warnings.simplefilter("ignore")
            ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        return False, f"{type(exc).__name__}: {exc}"
    return True, ""


def _is_program(code: str) -> bool:
    """True when the parsed code has a statement other than a bare name or constant (so prose
    like ``Sorry`` is not mistaken for a program)."""
    tree = ast.parse(code)
    return any(
        not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Name | ast.Constant))
        for node in tree.body
    )


def _blocks(text: str) -> list[_Block]:
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    out: list[_Block] = []
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if m is None:
            i += 1
            continue
        fence = m.group("fence")
        info = m.group("info").strip().split(" ")[0].lower() if m.group("info").strip() else ""
        body: list[str] = []
        j = i + 1
        closed = False
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                closed = True
                break
            body.append(lines[j])
            j += 1
        code = textwrap.dedent("\n".join(body)).strip("\n")
        out.append(
            _Block(info=info, text=code + "\n" if code else "", closed=closed, order=len(out))
        )
        i = j + 1
    return out


def _pick(candidates: list[_Block]) -> _Block | None:
    """The last block that is at least 60 % as long as the longest (final full versions come
    last; a trailing usage snippet is much shorter than the program)."""
    if not candidates:
        return None
    longest = max(len(b.text) for b in candidates)
    eligible = [b for b in candidates if len(b.text) >= _LAST_WINS_SHARE * longest]
    return max(eligible, key=lambda b: (b.closed, b.order))


def extract_code(text: str | None) -> CodeExtraction:
    """Find the program in a chat reply. Never raises.

    Rules: fenced blocks tagged as Python (or untagged) that parse come first — ```python over
    untagged, complete over truncated, and among those the last one that is not much shorter than
    the longest; with no parseable block, the longest Python/untagged block is returned unparsed
    (so the evaluator reports the syntax error); with no fence, the whole reply if it parses.

    Example:
        >>> extract_code("Here you go:\\n```python\\nprint(1)\\n```").code
        'print(1)\\n'
        >>> extract_code("I cannot help with that.").method
        'none'
    """
    if not isinstance(text, str) or not text.strip():
        return CodeExtraction(None, "none", False, "the reply is empty")
    try:
        blocks = _blocks(text)
    except RecursionError:  # pragma: no cover - defensive, regexes here are linear
        blocks = []
    code_blocks = [b for b in blocks if b.info in _PYTHON_TAGS | _UNTAGGED and b.text.strip()]
    parseable = [b for b in code_blocks if _parses(b.text)[0]]
    for tags, method in ((_PYTHON_TAGS, "fenced_python"), (_UNTAGGED, "fenced")):
        chosen = _pick([b for b in parseable if b.info in tags])
        if chosen is not None:
            m: Method = "fenced_python" if method == "fenced_python" else "fenced"
            return CodeExtraction(chosen.text, m, True, "", len(blocks))
    if code_blocks:
        chosen = max(code_blocks, key=lambda b: (len(b.text), b.order))
        why = _parses(chosen.text)[1]
        reason = f"no fenced block parses; kept the longest ({why})"
        return CodeExtraction(chosen.text, "fenced_unparsed", False, reason, len(blocks))
    if not blocks:
        ok, why = _parses(text)
        if ok and not _is_program(text):
            ok, why = False, "it parses only as bare words"
        if ok:
            return CodeExtraction(text.strip("\n") + "\n", "raw", True, "", 0)
        return CodeExtraction(
            None, "none", False, f"no fenced code block and the reply is not Python ({why})", 0
        )
    langs = sorted({b.info or "<none>" for b in blocks})
    return CodeExtraction(
        None,
        "none",
        False,
        f"{len(blocks)} fenced block(s) but none is Python (languages: {', '.join(langs)})",
        len(blocks),
    )
