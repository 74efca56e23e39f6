"""The run and evaluation requirements of a coding task: the written code must have been run
with exit code 0, and its evaluation (when the task has one) passed, after its last change.

A run is a ``run_python`` / ``execute`` / ``run`` action; it proves the code runs only when it
succeeded *and* recorded exit code 0 in its output's ``metadata["returncode"]`` (the tool box's
``run_python`` always does). A run or verdict older than the last write of a code file
proves nothing about the code as it is now.

A task has an evaluation when its metadata names one (``metadata["evaluation"]``, e.g. the path
of a test file) or when an ``evaluate`` action was recorded.
"""

from __future__ import annotations

from costeer_lab.context._evidence import file_type_of
from costeer_lab.context._records import Action
from costeer_lab.context._task import TaskContext

__all__ = ["RUN_ACTIONS", "has_evaluation", "last_code_change", "ran_ok"]

#: Action types that run the code.
RUN_ACTIONS = ("run_python", "execute", "run")


def last_code_change(ctx: TaskContext) -> int:
    """Index of the last action that wrote a code file (-1 when none did).

    Example:
        >>> last_code_change(TaskContext("t", "coding_task", "x"))
        -1
    """
    return max(
        (
            i
            for i, a in enumerate(ctx.actions)
            if any(file_type_of(p)[0] == "code" for p in a.outputs.files)
        ),
        default=-1,
    )


def ran_ok(action: Action) -> bool:
    """Whether ``action`` is evidence that the code ran and exited 0.

    Example:
        >>> from costeer_lab.context._records import Output
        >>> ok = Action("a", "run_python", {}, Output(True, metadata={"returncode": 0}), 0.0, True)
        >>> said = Action("b", "run_python", {}, Output(True, "fine"), 0.0, True)
        >>> ran_ok(ok), ran_ok(said)
        (True, False)
    """
    code = action.outputs.metadata.get("returncode")
    return action.success and isinstance(code, int) and not isinstance(code, bool) and code == 0


def has_evaluation(ctx: TaskContext) -> bool:
    """Whether the task has an evaluation (named in its metadata, or an ``evaluate`` action)."""
    return bool(ctx.metadata.get("evaluation")) or any(a.type == "evaluate" for a in ctx.actions)
