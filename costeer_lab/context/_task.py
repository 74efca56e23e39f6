"""The :class:`TaskContext` record: everything known about one task at one moment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from costeer_lab.context._priority import check_complexity, check_priority, estimate_complexity
from costeer_lab.context._records import (
    TASK_TYPES,
    Action,
    Evidence,
    FileReference,
    TaskType,
    check_choice,
)

__all__ = ["TaskContext"]


@dataclass(frozen=True)
class TaskContext:
    """A task's memory: its actions, evidence and files, and whether it is complete.

    A context is a snapshot: :class:`~costeer_lab.context.RichMemoryManager` returns a new one
    after each change. ``stop_reason`` is set when a loop-prevention rule stopped the task.
    ``priority`` (higher first, default 0) and ``complexity`` (1–5; estimated from the text by
    :func:`estimate_complexity` when not given) order the open tasks
    (:meth:`RichMemoryManager.open_tasks`).

    Example:
        >>> ctx = TaskContext("t1", "simple_question", "What is 6 * 7?", created_at=0.0)
        >>> TaskContext.from_dict(ctx.to_dict()) == ctx
        True
        >>> ctx.priority, ctx.complexity
        (0, 1)
    """

    task_id: str
    task_type: TaskType
    task: str
    actions: tuple[Action, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    files: tuple[FileReference, ...] = ()
    complete: bool = False
    completion_evidence: tuple[str, ...] = ()
    created_at: float = 0.0
    updated_at: float = 0.0
    stop_reason: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    priority: int = 0
    complexity: int | None = None

    def __post_init__(self) -> None:
        check_choice("task_type", self.task_type, TASK_TYPES)
        check_priority(self.priority)
        if self.complexity is None:
            object.__setattr__(self, "complexity", estimate_complexity(self.task, self.task_type))
        else:
            check_complexity(self.complexity)

    def file(self, path: str) -> FileReference | None:
        """The file registered under ``path``, or ``None``."""
        return next((f for f in self.files if f.path == path), None)

    def evidence_by_id(self, evidence_id: str) -> Evidence | None:
        """The evidence with this id, or ``None``."""
        return next((e for e in self.evidence if e.id == evidence_id), None)

    def with_(self, **changes: Any) -> TaskContext:
        """A copy with ``changes`` applied (``dataclasses.replace``)."""
        return replace(self, **changes)

    def header(self) -> dict[str, Any]:
        """The fields stored in the task's own record (actions, evidence and files are stored
        as records of their own)."""
        return {
            "task_id": self.task_id,
            "task_type": self.task_type,
            "task": self.task,
            "complete": self.complete,
            "completion_evidence": list(self.completion_evidence),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "stop_reason": self.stop_reason,
            "metadata": dict(self.metadata),
            "priority": self.priority,
            "complexity": self.complexity,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.header(),
            "actions": [a.to_dict() for a in self.actions],
            "evidence": [e.to_dict() for e in self.evidence],
            "files": [f.to_dict() for f in self.files],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TaskContext:
        return cls(
            task_id=d["task_id"],
            task_type=d["task_type"],
            task=d["task"],
            actions=tuple(Action.from_dict(a) for a in d.get("actions", ())),
            evidence=tuple(Evidence.from_dict(e) for e in d.get("evidence", ())),
            files=tuple(FileReference.from_dict(f) for f in d.get("files", ())),
            complete=bool(d.get("complete", False)),
            completion_evidence=tuple(d.get("completion_evidence", ())),
            created_at=float(d.get("created_at", 0.0)),
            updated_at=float(d.get("updated_at", 0.0)),
            stop_reason=d.get("stop_reason"),
            metadata=dict(d.get("metadata", {})),
            # records stored before these fields existed: priority 0, estimated complexity
            priority=d.get("priority", 0),
            complexity=d.get("complexity"),
        )
