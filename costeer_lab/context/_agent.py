"""The evidence-driven agent loop: detect → create the context → plan → run a tool → record →
check completion and loops → repeat; returns the rich result."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from costeer_lab.context._completion import ValidationReport
from costeer_lab.context._manager import RichMemoryManager
from costeer_lab.context._planner import Planner
from costeer_lab.context._records import FileReference, TaskType
from costeer_lab.context._task import TaskContext
from costeer_lab.context._tools import ToolBox

__all__ = ["AgentResult", "TaskAgent", "timeline"]

#: ``stop_reason`` when the planner has no further step and the task is not complete.
PLANNER_DONE = "planner_done: the planner has no further step"


@dataclass(frozen=True)
class AgentResult:
    """What one agent run did.

    Attributes:
        task_id: the task's id in the store.
        completed: the completion rule was met.
        stop_reason: why the run stopped without completing (a loop rule, or the planner
            having no step), ``None`` when it completed.
        report: the validator's final verdict (rationale, requirements met and missing).
        context: the task's full context at the end (actions, evidence, files).
        plan_id: the id recorded with every action of this run.
    """

    task_id: str
    completed: bool
    stop_reason: str | None
    report: ValidationReport
    context: TaskContext
    plan_id: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "completed": self.completed,
            "stop_reason": self.stop_reason,
            "report": self.report.to_dict(),
            "context": self.context.to_dict(),
            "plan_id": self.plan_id,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AgentResult:
        return cls(
            task_id=d["task_id"],
            completed=bool(d["completed"]),
            stop_reason=d.get("stop_reason"),
            report=ValidationReport.from_dict(d["report"]),
            context=TaskContext.from_dict(d["context"]),
            plan_id=d.get("plan_id", ""),
        )

    @property
    def files(self) -> tuple[FileReference, ...]:
        """The files the task made, with their documentation."""
        return self.context.files

    @property
    def n_actions(self) -> int:
        """Number of actions taken."""
        return len(self.context.actions)


class TaskAgent:
    """Runs tasks with a planner and a tool box, recording everything in a task context.

    Args:
        manager: the rich memory (and its store) the run is recorded in.
        planner: chooses each step (:class:`RuleBasedPlanner`, :class:`LLMPlanner`, …).
        tools: the tool box, or a work directory for a new one.

    Example:
        >>> import tempfile
        >>> from costeer_lab.context import RuleBasedPlanner
        >>> agent = TaskAgent(RichMemoryManager(":memory:"), RuleBasedPlanner(answer="Paris"),
        ...                   tempfile.mkdtemp())
        >>> result = agent.run("What is the capital of France?")
        >>> result.completed, result.n_actions, result.context.task_type
        (True, 1, 'simple_question')
    """

    def __init__(
        self,
        manager: RichMemoryManager,
        planner: Planner,
        tools: ToolBox | str | os.PathLike[str],
    ) -> None:
        self.manager = manager
        self.planner = planner
        self.tools = tools if isinstance(tools, ToolBox) else ToolBox(tools)
        if self.tools.validator is None:
            self.tools.validator = manager.validator

    def run(
        self,
        task: str,
        *,
        task_type: TaskType | None = None,
        task_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> AgentResult:
        """Run ``task`` until it completes, a loop rule stops it or the planner has no step.

        Planner errors (an LLM endpoint down, an unusable reply) are raised; everything
        recorded up to then stays in the store.
        """
        ctx = self.manager.create_task(
            task, task_type=task_type, task_id=task_id, metadata=metadata
        )
        plan_id = f"plan-{uuid.uuid4().hex[:12]}"
        stop: str | None = None
        while not ctx.complete and ctx.stop_reason is None:
            step = self.planner.plan(ctx)
            if step is None:
                stop = PLANNER_DONE
                break
            output = self.tools.run(step.tool, step.inputs, ctx)
            ctx = self.manager.add_action(
                ctx.task_id,
                step.tool,
                step.inputs,
                output,
                plan_id=plan_id,
                reasoning=step.reasoning,
            )
        report = self.manager.validator.validate(ctx)
        return AgentResult(
            task_id=ctx.task_id,
            completed=ctx.complete,
            stop_reason=None if ctx.complete else (ctx.stop_reason or stop),
            report=report,
            context=ctx,
            plan_id=plan_id,
        )


def timeline(ctx: TaskContext) -> list[dict[str, Any]]:
    """One row per action and per evidence item, in time order: for tables and plots.

    Rows have ``kind`` (``action`` / ``evidence``), ``id``, ``type``, ``t`` (seconds since the
    task was created), ``success`` or ``confidence``, ``detail`` and, for evidence, ``action``.

    Example:
        >>> timeline(TaskContext("t", "general_task", "x"))
        []
    """
    rows: list[dict[str, Any]] = []
    by_id = {e.id: e for e in ctx.evidence}
    for a in ctx.actions:
        detail = ", ".join(f"{k}={str(v)[:40]!r}" for k, v in a.inputs.items() if k != "content")
        rows.append(
            {"kind": "action", "id": a.id, "type": a.type, "t": a.timestamp - ctx.created_at,
             "success": a.success, "confidence": None, "detail": detail, "action": a.id}
        )  # fmt: skip
        for eid in a.evidence:
            e = by_id[eid]
            rows.append(
                {"kind": "evidence", "id": e.id, "type": e.type, "t": e.timestamp - ctx.created_at,
                 "success": None, "confidence": e.confidence,
                 "detail": e.content.splitlines()[0][:80] if e.content else "", "action": a.id}
            )  # fmt: skip
    return rows
