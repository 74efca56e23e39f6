"""Helpers of the knowledge tests: tasks, feedback, workspaces."""

from __future__ import annotations

from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace


def factor(name: str, formulation: str, description: str = "", category: str = "") -> Task:
    """A factor task whose components come from its formulation."""
    return Task(f"f/{name}", name, description or f"factor {name}", formulation, category=category)


def ok(execution: str = "ok") -> SingleFeedback:
    return SingleFeedback(execution=execution, final_decision=True)


def crash(error_line: str, path: str = "/tmp/ws/main.py") -> SingleFeedback:
    """A failed attempt whose traceback ends in ``error_line`` (fingerprinted as evaluators do;
    ``details["ran"]`` false, as ``FactorEvaluator`` reports a run that raised)."""
    from costeer_lab.knowledge import error_fingerprint

    tb = f'Traceback (most recent call last):\n  File "{path}", line 3, in <module>\n{error_line}'
    return SingleFeedback(
        execution=tb,
        final_decision=False,
        error_fingerprints=(error_fingerprint(tb),),
        details={"ran": False},
    )


def wrong(score: float | None = None, mismatch: str = "values") -> SingleFeedback:
    """Ran, but the values were wrong: shaped as ``FactorEvaluator`` reports a value mismatch,
    with its ``FactorMismatchError`` fingerprint (evaluators fingerprint wrong results too)."""
    from costeer_lab.knowledge import error_fingerprint

    details: dict[str, object] = {"ran": True, "format_ok": True}
    if score is not None:
        details["score"] = score
    return SingleFeedback(
        execution="Executed successfully.",
        return_checking=f"decision: FAIL ({mismatch})",
        final_decision=False,
        error_fingerprints=(error_fingerprint(f"FactorMismatchError: {mismatch}"),),
        details=details,
    )


def code(text: str) -> Workspace:
    return Workspace({"main.py": text})


def seed(task: Task, text: str) -> Knowledge:
    return Knowledge(task, code(text), ok("ground truth"))
