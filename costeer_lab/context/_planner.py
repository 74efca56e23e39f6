"""Planners of the agent loop: the :class:`Planner` protocol and the :class:`RuleBasedPlanner`."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Protocol

from costeer_lab.context._completion import Validator
from costeer_lab.context._queries import walk_classes, walk_functions
from costeer_lab.context._runs import last_code_change
from costeer_lab.context._task import TaskContext

__all__ = ["PlannedStep", "Planner", "RuleBasedPlanner"]


@dataclass(frozen=True)
class PlannedStep:
    """The next tool call a planner chose, and why."""

    tool: str
    inputs: Mapping[str, Any] = field(default_factory=dict)
    reasoning: str = ""


class Planner(Protocol):
    """Chooses the next step of a task from its context; ``None`` means nothing more to do."""

    def plan(self, ctx: TaskContext) -> PlannedStep | None: ...


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _readme(ctx: TaskContext) -> str:
    """Documentation of the task's code files, generated from their signatures and docs."""
    lines = [f"# {ctx.task.strip().splitlines()[0][:80]}", "", "Files written for this task:", ""]
    for f in ctx.files:
        if f.file_type != "code":
            continue
        lines.append(f"## `{f.path}`" + (f" — {f.metadata.purpose}" if f.metadata.purpose else ""))
        lines.append("")
        for cls in walk_classes(f.metadata):
            doc = (cls.docstring or "").splitlines()[:1]
            lines.append(f"- class `{cls.qualname}` (lines {cls.lineno}-{cls.end_lineno})")
            lines += [f"  {d}" for d in doc]
        for fn in walk_functions(f.metadata):
            lines.append(
                f"- `{fn.signature}` (`{fn.qualname}`, lines {fn.lineno}-{fn.end_lineno}, "
                f"cyclomatic complexity {fn.complexity})"
            )
            lines += [f"  {d}" for d in (fn.docstring or "").splitlines()[:1]]
        if f.metadata.dependencies:
            lines.append(f"- depends on: {', '.join(f.metadata.dependencies)}")
        lines.append("")
    return "\n".join(lines)


class RuleBasedPlanner:
    """A planner of fixed rules per task type, for offline runs and as a baseline.

    * ``coding_task``: write each of ``files`` not yet written with that content; run the main
      Python file in the sandbox once after its last change (completion needs a run that exits
      0); when the task's metadata names an ``evaluation`` (a test file), ``evaluate`` it once
      after the last change; when the code lacks documentation,
      write ``README.md`` generated from the code's signatures and docstrings; validate once.
      It writes no code of its own: without ``files`` it has no step.
    * ``research_task``: read each of ``sources`` (files in the work directory), then
      ``answer`` with ``answer`` citing them.
    * ``simple_question`` and ``general_task``: ``answer`` with ``answer``.

    Args:
        files: path → content the planner writes (the solution it was handed).
        answer: the answer or summary text.
        sources: files to read first (research tasks).
        main: the Python file to run (default: the first ``.py`` of ``files``).

    Example:
        >>> from costeer_lab.context import TaskContext
        >>> p = RuleBasedPlanner(answer="42")
        >>> step = p.plan(TaskContext("t", "simple_question", "6 * 7?"))
        >>> step.tool, step.inputs
        ('answer', {'text': '42', 'sources': []})
    """

    def __init__(
        self,
        *,
        files: Mapping[str, str] | None = None,
        answer: str | None = None,
        sources: Sequence[str] = (),
        main: str | None = None,
    ) -> None:
        self.files = dict(files or {})
        self.answer = answer
        self.sources = list(sources)
        py = [p for p in self.files if PurePosixPath(p).suffix == ".py"]
        self.main = main or (py[0] if py else None)

    def plan(self, ctx: TaskContext) -> PlannedStep | None:
        """The next step for ``ctx`` by the rules above, or ``None``."""
        if ctx.task_type == "coding_task":
            return self._coding(ctx)
        done = {a.type for a in ctx.actions if a.success}
        if ctx.task_type == "research_task":
            read = {a.inputs.get("path") for a in ctx.actions if a.type == "read_file"}
            for src in self.sources:
                if src not in read:
                    return PlannedStep("read_file", {"path": src}, f"read source {src}")
        if self.answer is not None and "answer" not in done:
            why = "summarise the sources" if ctx.task_type == "research_task" else "answer"
            why += "" if ctx.task_type == "research_task" else " the question"
            return PlannedStep("answer", {"text": self.answer, "sources": self.sources}, why)
        return None

    def _coding(self, ctx: TaskContext) -> PlannedStep | None:
        for path, content in self.files.items():
            ref = ctx.file(path)
            if ref is None or ref.checksum != _sha(content):
                return PlannedStep(
                    "write_file", {"path": path, "content": content}, f"write {path}"
                )
        if not self.files:
            return None
        last_write = last_code_change(ctx)
        since = ctx.actions[last_write + 1 :]
        ran = any(a.type == "run_python" and a.inputs.get("path") == self.main for a in since)
        if self.main is not None and not ran:
            return PlannedStep("run_python", {"path": self.main}, f"run {self.main} to check it")
        tests = ctx.metadata.get("evaluation")
        if isinstance(tests, str) and tests and not any(a.type == "evaluate" for a in since):
            return PlannedStep(
                "evaluate", {"path": tests}, f"run the task's evaluation {tests} on the code"
            )
        report = Validator().validate(ctx)
        if "documentation" in report.missing and ctx.file("README.md") is None:
            return PlannedStep(
                "write_file",
                {"path": "README.md", "content": _readme(ctx)},
                "the code lacks documentation: document it from its signatures and docstrings",
            )
        if not any(a.type == "validate" for a in ctx.actions[last_write + 1 :]):
            return PlannedStep("validate", {}, "check the completion rule")
        return None
