"""Small HTML builders for the ``_repr_html_`` summaries of the main objects (no imports of
the package: every layer may use them).

Example:
    >>> page = card("Suite demo", [("tasks", 3)], table=(["id"], [["t1"]]))
    >>> "<b>Suite demo</b>" in page and "<td style='text-align:left'>3</td>" in page
    True
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

__all__ = ["card", "table"]


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, max_rows: int = 12) -> str:
    """An HTML table of ``rows`` (cells escaped); rows past ``max_rows`` are counted, not shown.

    Example:
        >>> table(["a"], [[1], [2]], max_rows=1)
        '<table><tr><th>a</th></tr><tr><td>1</td></tr></table><p><i>… 1 more</i></p>'
    """
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
        for r in rows[:max_rows]
    )
    more = f"<p><i>… {len(rows) - max_rows} more</i></p>" if len(rows) > max_rows else ""
    return f"<table><tr>{head}</tr>{body}</table>{more}"


def card(
    title: str,
    fields: Sequence[tuple[str, Any]],
    *,
    table: tuple[Sequence[str], Sequence[Sequence[Any]]] | None = None,
) -> str:
    """A titled box of ``name: value`` lines, optionally followed by a table."""
    lines = "".join(
        f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
        f"<td style='text-align:left'>{html.escape(str(v))}</td></tr>"
        for k, v in fields
    )
    extra = _table(*table) if table else ""
    return (
        '<div class="costeer-card" style="border:1px solid #ddd;padding:6px;max-width:60em">'
        f"<b>{html.escape(title)}</b><table>{lines}</table>{extra}</div>"
    )


_table = table
