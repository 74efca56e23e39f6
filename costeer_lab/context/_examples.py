"""Usage examples in docstrings: doctest blocks, or else the text of an ``Example:`` section.

A doctest block is a run of lines starting at a ``>>>`` line and ending at a blank line (the
expected output lines are part of it). A docstring without doctest lines gives the indented text
under an ``Example:``, ``Examples:`` or ``Usage:`` heading instead. Blocks are dedented.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["docstring_examples"]

_HEADING = re.compile(r"^\s*(examples?|usage)\s*:\s*$", re.IGNORECASE)


def _doctests(lines: list[str]) -> list[str]:
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in lines:
        if line.strip().startswith(">>>") and current is None:
            current = []
            blocks.append(current)
        if current is not None:
            if not line.strip():
                current = None
                continue
            current.append(line)
    return [textwrap.dedent("\n".join(b)).strip() for b in blocks]


def _section(lines: list[str]) -> list[str]:
    out = []
    for i, line in enumerate(lines):
        if not _HEADING.match(line):
            continue
        indent = len(line) - len(line.lstrip())
        body = []
        for nxt in lines[i + 1 :]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            body.append(nxt)
        text = textwrap.dedent("\n".join(body)).strip()
        if text:
            out.append(text)
    return out


def docstring_examples(docstring: str | None) -> tuple[str, ...]:
    """The usage examples of a docstring (see the module docstring).

    Example:
        >>> docstring_examples('''Adds.
        ...
        ... Example:
        ...     >>> add(1, 2)
        ...     3
        ... ''')
        ('>>> add(1, 2)\\n3',)
        >>> docstring_examples("Adds.\\n\\nExample:\\n    total = add(1, 2)\\n")
        ('total = add(1, 2)',)
    """
    if not docstring:
        return ()
    lines = docstring.expandtabs().splitlines()
    return tuple(_doctests(lines) or _section(lines))
