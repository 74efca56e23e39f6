"""Node and edge kinds of the CoSTEER knowledge graph, and content-derived node ids."""

from __future__ import annotations

import hashlib

from costeer_lab.errors import InvalidInputError

__all__ = [
    "COMPONENT",
    "EDGE_HAS_COMPONENT",
    "EDGE_HIT_ERROR",
    "EDGE_IMPLEMENTS",
    "EDGE_TRACE_OF",
    "ERROR",
    "NODE_KINDS",
    "TASK_DESCRIPTION",
    "TASK_SUCCESS_IMPLEMENT",
    "TASK_TRACE",
    "node_id",
]

#: A named operator, function or data field (``op:mean``, ``field:close``).
COMPONENT = "component"
#: A task's description (name, description, formulation, variables).
TASK_DESCRIPTION = "task_description"
#: One implementation attempt of a task (code + feedback).
TASK_TRACE = "task_trace"
#: A successful implementation of a task.
TASK_SUCCESS_IMPLEMENT = "task_success_implement"
#: An error fingerprint (see :func:`costeer_lab.knowledge.error_fingerprint`).
ERROR = "error"
#: Every node kind, in the order the method introduces them.
NODE_KINDS: tuple[str, ...] = (
    COMPONENT,
    TASK_DESCRIPTION,
    TASK_TRACE,
    TASK_SUCCESS_IMPLEMENT,
    ERROR,
)

#: task_description -> component
EDGE_HAS_COMPONENT = "has_component"
#: task_trace -> task_description
EDGE_TRACE_OF = "trace_of"
#: task_trace -> error
EDGE_HIT_ERROR = "hit_error"
#: task_success_implement -> task_description
EDGE_IMPLEMENTS = "implements"


def node_id(kind: str, content: str) -> str:
    """The stable id of a node: its kind and the sha256 of its content.

    Identical content of one kind is one node.

    Example:
        >>> node_id("component", "op:mean")[:20]
        'component:40b6d66d5e'
    """
    if not isinstance(kind, str) or not kind:
        raise InvalidInputError(f"node kind must be a non-empty str, got {kind!r}")
    if not isinstance(content, str):
        raise InvalidInputError(f"node content must be a str, got {type(content).__name__}")
    return f"{kind}:{hashlib.sha256(content.encode('utf-8')).hexdigest()}"
