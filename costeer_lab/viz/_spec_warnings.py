"""Warnings a report shows at its top for what a run's spec allowed on purpose.

Example:
    >>> spec_warnings({"name": "x"})
    ''
    >>> "allow_target_leak" in spec_warnings({"name": "x", "allow_target_leak": True})
    True
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from costeer_lab.experiment._leak import LEAK_WARNING

__all__ = ["spec_warnings"]

_BOX = (
    "border:2px solid #b00020;background:#fdecea;color:#5f0010;padding:0.6em 0.9em;"
    "font-weight:bold"
)


def spec_warnings(spec: Mapping[str, Any] | None) -> str:
    """HTML paragraphs (``class="warning"``) for the spec's deliberate risks: a seed knowledge
    allowed to hold the targets (``allow_target_leak: true``). Empty when there are none."""
    if not spec or spec.get("allow_target_leak") is not True:
        return ""
    text = html.escape(LEAK_WARNING)
    return f'<p class="warning" role="alert" style="{_BOX}">Warning: {text}.</p>\n'
