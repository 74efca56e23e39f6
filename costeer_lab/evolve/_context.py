"""Optional hook of :class:`~costeer_lab.evolve.EvoAgent` into the rich task context.

Each implement and evaluate step of a run becomes two actions in the task's context
(``<run id>/<task id>``): ``implement`` (the workspace's files, registered and documented) and
``evaluate`` (the feedback, as validation evidence). Both take the workspace's content hash as
their input, so the context's loop prevention stops a task that submits the same code
``max_repeats`` (3) times; the agent then no longer selects it. The actions are written in the
step's own store transaction, so a resumed run sees exactly the steps that completed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from costeer_lab.context import ContextSettings, Output, RichMemoryManager, TaskContext
from costeer_lab.records import SingleFeedback, Task
from costeer_lab.store import BaseStore

if TYPE_CHECKING:
    from costeer_lab.evolve._strategy import ImplementOutcome

__all__ = ["TaskContextHook"]


class TaskContextHook:
    """Records an evolution run in task contexts and stops tasks caught in a loop.

    Args:
        settings: loop limits (default: the ``context`` settings section).

    Example:
        >>> hook = TaskContextHook()
        >>> hook.context_id("run-1", "alpha158/MA5")
        'run-1/alpha158/MA5'
    """

    def __init__(self, settings: ContextSettings | None = None) -> None:
        self.settings = settings
        self._manager: RichMemoryManager | None = None

    def bind(self, store: BaseStore) -> RichMemoryManager:
        """Use ``store`` (the agent's) for the contexts; returns the memory manager."""
        if self._manager is None or self._manager.store is not store:
            self._manager = RichMemoryManager(store, settings=self.settings)
        return self._manager

    @property
    def manager(self) -> RichMemoryManager:
        """The memory manager (after :meth:`bind`)."""
        if self._manager is None:
            raise RuntimeError("TaskContextHook is not bound to a store; EvoAgent binds it")
        return self._manager

    @staticmethod
    def context_id(run_id: str, task_id: str) -> str:
        """The context id of a task of a run."""
        return f"{run_id}/{task_id}"

    def context(self, run_id: str, task_id: str) -> TaskContext | None:
        """The context of a task of a run, or ``None`` before its first step."""
        cid = self.context_id(run_id, task_id)
        return self.manager.get_task(cid) if self.manager.has_task(cid) else None

    def stop_reason(self, run_id: str, task_id: str) -> str | None:
        """Why the task was stopped by a loop-prevention rule, or ``None``."""
        ctx = self.context(run_id, task_id)
        return None if ctx is None else ctx.stop_reason

    def record_step(
        self,
        run_id: str,
        step: int,
        tasks: Sequence[Task],
        outcomes: Sequence[ImplementOutcome],
        feedbacks: Sequence[SingleFeedback],
    ) -> None:
        """Record one step's implement and evaluate actions for each task (and, for code the
        evaluator passed, its run with exit code 0: a coding task completes only once its code
        ran, see :mod:`costeer_lab.context._runs`)."""
        mm = self.manager
        for task, outcome, fb in zip(tasks, outcomes, feedbacks, strict=True):
            ws = outcome.workspace
            if ws is None:  # an infrastructure error: not an attempt
                continue
            cid = self.context_id(run_id, task.id)
            mm.create_task(
                task.get_task_information(),
                task_type="coding_task",
                task_id=cid,
                metadata={"run_id": run_id, "task_id": task.id},
                exist_ok=True,
            )
            inputs = {"code_sha256": ws.content_hash}
            mm.add_action(
                cid,
                "implement",
                inputs,
                Output(
                    success=outcome.error is None,
                    result=outcome.error or f"{len(ws.files)} file(s), main {ws.main_file}",
                    files=dict(ws.files),
                    code=ws.code,
                    metadata={
                        "step": step,
                        "used_knowledge_ids": list(outcome.used_knowledge_ids),
                    },
                ),
                plan_id=run_id,
                reasoning=f"step {step}: coder implementation",
                judge=False,
            )
            if fb.succeeded:  # the evaluator ran this code to a passing verdict in its sandbox
                mm.add_action(
                    cid,
                    "run",
                    inputs,
                    Output(
                        success=True,
                        result=fb.execution or "ran in the evaluator's sandbox",
                        metadata={"step": step, "returncode": 0},
                    ),
                    plan_id=run_id,
                    reasoning=f"step {step}: the evaluator's run of the code",
                    judge=False,
                )
            text = "\n".join(p for p in (fb.execution, fb.return_checking, fb.code) if p)
            mm.add_action(
                cid,
                "evaluate",
                inputs,
                Output(
                    success=fb.succeeded,
                    result=text or ("passed" if fb.succeeded else "failed"),
                    metadata={
                        "step": step,
                        "confidence": 1.0,
                        "error_fingerprints": list(fb.error_fingerprints),
                    },
                ),
                plan_id=run_id,
                reasoning=f"step {step}: evaluator verdict",
            )
