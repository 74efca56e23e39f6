"""Warnings a report shows at its top for what a run's spec allowed on purpose.

Example:
    >>> spec_warnings({"name": "x"})
    ''
    >>> "allow_target_leak" in spec_warnings({"name": "x", "allow_target_leak": True})
    True
    >>> print(shared_store_notes({"knowledge": {"store": "postgresql://me:***@db/lab",
    ...                                         "scope": "arm"}}))
    <p class="note">Knowledge of the v1/v2 arms: in the shared store postgresql://me:***@db/lab, each arm and seed in its own namespace (scope: arm).</p>
    <BLANKLINE>
"""  # noqa: E501

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from costeer_lab.experiment._leak import LEAK_WARNING

__all__ = ["shared_store_notes", "spec_warnings"]

_WHAT = {"knowledge": "Knowledge of the v1/v2 arms", "memory": "Pattern memory of the memory arms"}

_BOX = (
    "border:2px solid #b00020;background:#fdecea;color:#5f0010;padding:0.6em 0.9em;"
    "font-weight:bold"
)


def spec_warnings(spec: Mapping[str, Any] | None) -> str:
    """HTML paragraphs (``class="warning"``) for the spec's deliberate risks: a seed knowledge
    allowed to hold the targets (``allow_target_leak: true``). Empty when there are none."""
    out = shared_store_notes(spec)
    if not spec or spec.get("allow_target_leak") is not True:
        return out
    text = html.escape(LEAK_WARNING)
    return f'<p class="warning" role="alert" style="{_BOX}">Warning: {text}.</p>\n' + out


def shared_store_notes(spec: Mapping[str, Any] | None) -> str:
    """HTML paragraphs naming the shared stores of the spec (``knowledge`` / ``memory``: the
    store as ``spec.json`` holds it, password scrubbed, and the scope); ``scope: experiment``
    is a warning, since its arms are not independent. Empty without shared stores."""
    out = ""
    for field, what in _WHAT.items():
        shared = (spec or {}).get(field)
        if not isinstance(shared, Mapping):
            continue
        store = html.escape(str(shared.get("store", "")))
        if shared.get("scope") == "arm":
            out += (
                f'<p class="note">{what}: in the shared store {store}, each arm and seed in its '
                "own namespace (scope: arm).</p>\n"
            )
        else:
            out += (
                f'<p class="warning" role="alert" style="{_BOX}">Warning: {what}: one knowledge '
                f"base shared by every arm and seed (scope: experiment) in {store}. Arms read "
                "what earlier arms (and other runs on that store) wrote, so they are not "
                "independent: later arms start with more knowledge, and a contrast between arms "
                "measures the treatment together with that head start.</p>\n"
            )
    return out
