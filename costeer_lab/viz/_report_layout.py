"""The report's page layout: section anchors and the table of contents.

Example:
    >>> section_id("Per-task outcomes")
    'per-task-outcomes'
    >>> section("Summary", "<p>x</p>")
    '<section id="summary"><h2>Summary</h2><p>x</p></section>\\n'
    >>> contents(["Summary"])
    '<nav class="toc"><b>Contents</b><ol><li><a href="#summary">Summary</a></li></ol></nav>\\n'
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

__all__ = ["contents", "section", "section_id"]


def section_id(heading: str) -> str:
    """The anchor of a section: its heading in lower case, words joined by ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") or "section"


def section(heading: str, body: str) -> str:
    """One ``<section>`` with its anchor and ``<h2>`` heading (``body`` is HTML)."""
    return f'<section id="{section_id(heading)}"><h2>{html.escape(heading)}</h2>{body}</section>\n'


def contents(headings: Iterable[str]) -> str:
    """The table of contents: one link per section heading, in order."""
    items = "".join(f'<li><a href="#{section_id(h)}">{html.escape(h)}</a></li>' for h in headings)
    return f'<nav class="toc"><b>Contents</b><ol>{items}</ol></nav>\n'
