"""Plain records the store reads and writes (layer 1; no I/O here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["EdgeRecord", "JSONValue", "NodeRecord"]

JSONValue = Any  # a value json.dumps accepts: dict/list/str/int/float/bool/None


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """A knowledge-graph node as stored.

    Attributes:
        id: stable string id (for example ``"task_description:3f2a…"``).
        kind: node kind (``component``, ``task_description``, ``task_trace``,
            ``task_success_implement``, ``error``, or a subsystem's own kind).
        content: the node's text; what embedders see.
        attrs: JSON-serializable attributes.
        created_at / updated_at: UNIX seconds, filled in by the store (0.0 on input means "now").
    """

    id: str
    kind: str
    content: str
    attrs: dict[str, JSONValue] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass(frozen=True, slots=True)
class EdgeRecord:
    """A directed, typed edge ``src -> dst``. ``(src, dst, kind)`` is unique."""

    src: str
    dst: str
    kind: str
    attrs: dict[str, JSONValue] = field(default_factory=dict)
    created_at: float = 0.0
