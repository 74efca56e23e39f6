"""Planners of the agent loop: the :class:`Planner` protocol and the :class:`RuleBasedPlanner`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any, Protocol

from costeer_lab.context._completion import Validator
from costeer_lab.context._coverage import find_test_references, is_test_file
from costeer_lab.context._queries import walk_classes, walk_functions
from costeer_lab.context._runs import last_code_change
from costeer_lab.context._simulate import apply_step
from costeer_lab.context._task import TaskContext

__all__ = ["PlannedStep", "Planner", "RuleBasedPlanner", "document_task", "score_steps"]


@dataclass(frozen=True)
class PlannedStep:
    """A tool call a planner proposes, and why.

    Attributes:
        tool, inputs, reasoning: the call and the planner's reason for it.
        score: how much the step is worth now (see :meth:`RuleBasedPlanner.candidate_steps`).
        expected_evidence: the evidence types the step produces when it succeeds.
        closes: the open completion requirements it would meet.
        depth: 0 when it can be taken now, 1 (or more) when it waits on steps of the level
            before it (the breadth-first level).
    """

    tool: str
    inputs: Mapping[str, Any] = field(default_factory=dict)
    reasoning: str = ""
    score: float = 0.0
    expected_evidence: tuple[str, ...] = ()
    closes: tuple[str, ...] = ()
    depth: int = 0


class Planner(Protocol):
    """Chooses the next step of a task from its context; ``None`` means nothing more to do."""

    def plan(self, ctx: TaskContext) -> PlannedStep | None: ...


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_task(ctx: TaskContext) -> str:
    """Markdown documentation of the task's code files: signatures, line ranges, complexity,
    the first docstring line, the first docstring example and, when the task wrote test files,
    the tests that reference each function (:func:`find_test_references`).

    Example:
        >>> from costeer_lab.context import TaskContext
        >>> document_task(TaskContext("t", "coding_task", "Write gcd")).splitlines()[0]
        '# Write gcd'
    """
    lines = [f"# {ctx.task.strip().splitlines()[0][:80]}", "", "Files written for this task:", ""]
    tests = {f.path: f.content for f in ctx.files if is_test_file(f.path)}
    refs = find_test_references(tests)
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
            if fn.examples:
                lines += ["  example:", "", "  ```python"]
                lines += [f"  {x}" for x in fn.examples[0].splitlines()] + ["  ```", ""]
            if tests and not is_test_file(f.path):
                used = refs.get(fn.name, ())
                lines.append(f"  tested by: {', '.join(used)}" if used else "  tested by: none")
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
      write ``README.md`` generated from the code's signatures, docstrings, docstring examples
      and the tests that reference each function; validate once.
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
        """The best of :meth:`candidate_steps`, or ``None`` when there is none."""
        ranked = self.candidate_steps(ctx)
        return ranked[0] if ranked else None

    #: The single-step name of :meth:`plan`.
    next_step = plan

    def candidate_steps(self, ctx: TaskContext, *, max_depth: int = 2) -> list[PlannedStep]:
        """Every step the rules allow, scored and ranked, explored breadth-first.

        Level 0 holds the steps that can be taken now. Level ``k + 1`` holds the steps that
        become possible once every step of level ``k`` succeeded (simulated with
        :func:`~costeer_lab.context._simulate.apply_step`, nothing is stored). A step's
        ``closes`` are the completion requirements (the task's open questions) the
        :class:`Validator` would count as met after it, ``expected_evidence`` the evidence
        types it produces, and ``score = len(closes) + 0.1 × (evidence types new to the
        task)``. Ranking: by level (breadth-first: all of a level before the next), then by
        score; ties keep the rule order.

        Example:
            >>> p = RuleBasedPlanner(files={"a.py": "x = 1"})
            >>> for s in p.candidate_steps(TaskContext("t", "coding_task", "Write a.py")):
            ...     print(s.depth, s.tool, s.score, s.closes)
            0 write_file 2.2 ('code file', 'code implementation')
            1 run_python 1.1 ('execution',)
            1 write_file 1.1 ('documentation',)
            1 validate 0.1 ()
        """
        validator = Validator()
        seen: set[str] = set()
        out: list[PlannedStep] = []
        state = ctx
        for depth in range(max_depth):
            level = [st for st in self._options(state) if _key(st) not in seen]
            if not level:
                break
            seen.update(_key(st) for st in level)
            out += score_steps(state, level, validator, depth=depth)
            for st in level:
                state = apply_step(state, st.tool, st.inputs)
        return out

    def _options(self, ctx: TaskContext) -> list[PlannedStep]:
        """The steps the rules allow in ``ctx`` (unscored, in rule order)."""
        if ctx.task_type == "coding_task":
            return self._coding(ctx)
        out = []
        done = {a.type for a in ctx.actions if a.success}
        unread = []
        if ctx.task_type == "research_task":
            read = {a.inputs.get("path") for a in ctx.actions if a.type == "read_file"}
            unread = [src for src in self.sources if src not in read]
            out += [
                PlannedStep("read_file", {"path": src}, f"read source {src}") for src in unread
            ]
        if self.answer is not None and "answer" not in done and not unread:
            why = "summarise the sources" if ctx.task_type == "research_task" else "answer"
            why += "" if ctx.task_type == "research_task" else " the question"
            out.append(PlannedStep("answer", {"text": self.answer, "sources": self.sources}, why))
        return out

    def _coding(self, ctx: TaskContext) -> list[PlannedStep]:
        pending = [
            PlannedStep("write_file", {"path": path, "content": content}, f"write {path}")
            for path, content in self.files.items()
            if (ref := ctx.file(path)) is None or ref.checksum != _sha(content)
        ]
        if pending or not self.files:
            return pending
        out = []
        since = ctx.actions[last_code_change(ctx) + 1 :]
        ran = any(a.type == "run_python" and a.inputs.get("path") == self.main for a in since)
        if self.main is not None and not ran:
            out.append(
                PlannedStep("run_python", {"path": self.main}, f"run {self.main} to check it")
            )
        tests = ctx.metadata.get("evaluation")
        if isinstance(tests, str) and tests and not any(a.type == "evaluate" for a in since):
            out.append(
                PlannedStep(
                    "evaluate", {"path": tests}, f"run the task's evaluation {tests} on the code"
                )
            )
        report = Validator().validate(ctx)
        if "documentation" in report.missing and ctx.file("README.md") is None:
            out.append(
                PlannedStep(
                    "write_file",
                    {"path": "README.md", "content": document_task(ctx)},
                    "the code lacks documentation: document it from its signatures and docstrings",
                )
            )
        if not any(a.type == "validate" for a in since):
            out.append(PlannedStep("validate", {}, "check the completion rule"))
        return out


def score_steps(
    ctx: TaskContext,
    steps: Sequence[PlannedStep],
    validator: Validator | None = None,
    *,
    depth: int = 0,
) -> list[PlannedStep]:
    """``steps``, each taken alone from ``ctx`` (simulated with
    :func:`~costeer_lab.context._simulate.apply_step`, nothing stored), scored and ranked.

    A step's ``closes`` are the open completion requirements the ``validator`` counts as met
    after it, ``expected_evidence`` the evidence types it produces, and ``score = len(closes)
    + 0.1 × (evidence types new to the task)``; ranked by score, ties kept in the given order.

    Example:
        >>> ctx = TaskContext("t", "simple_question", "6 * 7?")
        >>> ranked = score_steps(ctx, [PlannedStep("read_file", {"path": "x"}),
        ...                            PlannedStep("answer", {"text": "42"})])
        >>> [(s.tool, s.score, s.closes) for s in ranked]
        [('answer', 2.1, ('answer', 'evidence')), ('read_file', 0.0, ())]
    """
    validator = validator or Validator()
    missing = set(validator.validate(ctx).missing)
    have = {e.type for e in ctx.evidence}
    scored = []
    for order, st in enumerate(steps):
        after = apply_step(ctx, st.tool, st.inputs)
        closes = tuple(
            m for m in validator.validate(after).requirements if m.met and m.name in missing
        )
        new_ev = tuple(dict.fromkeys(e.type for e in after.evidence[len(ctx.evidence) :]))
        gain = len(closes) + 0.1 * len([t for t in new_ev if t not in have])
        step = replace(st, score=round(gain, 4), expected_evidence=new_ev,
                       closes=tuple(m.name for m in closes), depth=depth)  # fmt: skip
        scored.append((-step.score, order, step))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [step for _, _, step in scored]


def _key(step: PlannedStep) -> str:
    return json.dumps([step.tool, dict(step.inputs)], sort_keys=True, default=str)
