"""Completion rules per task type and the :class:`Validator` that applies them.

Evidence counts when its confidence is at least ``ContextSettings.min_confidence``.

| task type | requirements |
|---|---|
| ``coding_task`` | a code file that parses; ``code_implementation`` evidence; ``documentation``
  evidence or a code file whose docstrings exceed ``doc_min_chars`` characters; a run of the
  code after its last change that exited 0 (``execution``, see :mod:`._runs`); when the task
  has an evaluation, a passing verdict after the last change (``evaluation``) |
| ``simple_question`` | an answer (a successful ``answer``/``synthesize``/``summarize`` action
  with a result, or a written file); ``synthesis`` or ``file_creation`` evidence |
| ``research_task`` | a summary (``synthesis`` evidence, or a documentation file longer than
  ``doc_min_chars``); at least one source (named by a synthesis, or a file read) |
| ``general_task`` | a result (a successful action with a result or files); any evidence |
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from costeer_lab.context._records import Evidence
from costeer_lab.context._runs import RUN_ACTIONS, has_evaluation, last_code_change, ran_ok
from costeer_lab.context._task import TaskContext
from costeer_lab.settings import ContextSettings, get_settings

__all__ = ["COMPLETION_RULES", "Requirement", "ValidationReport", "Validator"]

_ANSWERS = ("answer", "synthesize", "summarize")


@dataclass(frozen=True)
class Requirement:
    """One requirement of a completion rule and whether the context meets it."""

    name: str
    met: bool
    detail: str
    evidence: tuple[str, ...] = ()
    confidence: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "met": self.met,
            "detail": self.detail,
            "evidence": list(self.evidence),
            "confidence": self.confidence,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Requirement:
        return cls(
            name=d["name"],
            met=bool(d["met"]),
            detail=d.get("detail", ""),
            evidence=tuple(d.get("evidence", ())),
            confidence=float(d.get("confidence", 0.0)),
        )


@dataclass(frozen=True)
class ValidationReport:
    """The verdict of the :class:`Validator` on one task context.

    Attributes:
        completed: every requirement of the task type's rule is met.
        confidence: mean confidence of the evidence behind the met requirements, times the
            share of requirements met (1.0 only when complete on certain evidence).
        rationale: one readable sentence per requirement.
        evidence: ids of the evidence the verdict rests on.
        met: names of the requirements met; ``missing`` those not met.
    """

    completed: bool
    confidence: float
    rationale: str
    evidence: tuple[str, ...] = ()
    met: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    requirements: tuple[Requirement, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "completed": self.completed,
            "confidence": self.confidence,
            "rationale": self.rationale,
            "evidence": list(self.evidence),
            "met": list(self.met),
            "missing": list(self.missing),
            "requirements": [r.to_dict() for r in self.requirements],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ValidationReport:
        return cls(
            completed=bool(d["completed"]),
            confidence=float(d["confidence"]),
            rationale=d.get("rationale", ""),
            evidence=tuple(d.get("evidence", ())),
            met=tuple(d.get("met", ())),
            missing=tuple(d.get("missing", ())),
            requirements=tuple(Requirement.from_dict(r) for r in d.get("requirements", ())),
        )


def _best(evidence: Sequence[Evidence], types: Sequence[str], floor: float) -> Evidence | None:
    good = [e for e in evidence if e.type in types and e.confidence >= floor]
    return max(good, key=lambda e: e.confidence, default=None)


def _from_evidence(name: str, ev: Evidence | None, missing: str) -> Requirement:
    if ev is None:
        return Requirement(name, False, missing)
    detail = f"{ev.type} evidence {ev.id} from {ev.source} ({ev.confidence:.2f})"
    return Requirement(name, True, detail, (ev.id,), ev.confidence)


def _coding(ctx: TaskContext, s: ContextSettings) -> list[Requirement]:
    code = [
        f for f in ctx.files if f.file_type == "code" and f.metadata.syntax_error is None
        and f.content.strip()
    ]  # fmt: skip
    broken = [f.path for f in ctx.files if f.metadata.syntax_error]
    reqs = [
        Requirement("code file", True, f"code file(s) {', '.join(f.path for f in code)}", (), 1.0)
        if code
        else Requirement(
            "code file",
            False,
            "no code file that parses"
            + (f" ({', '.join(broken)} has a syntax error)" if broken else ""),
        ),
        _from_evidence(
            "code implementation",
            _best(ctx.evidence, ("code_implementation",), s.min_confidence),
            "no code_implementation evidence",
        ),
    ]
    doc = _best(ctx.evidence, ("documentation",), s.min_confidence)
    documented = [f for f in code if len(f.metadata.documentation.strip()) > s.doc_min_chars]
    if doc is not None:
        reqs.append(_from_evidence("documentation", doc, ""))
    elif documented:
        f = documented[0]
        chars = len(f.metadata.documentation.strip())
        reqs.append(
            Requirement("documentation", True, f"{f.path} documented ({chars} chars)", (), 0.8)
        )
    else:
        reqs.append(
            Requirement(
                "documentation",
                False,
                f"no documentation evidence and no code file documented in more than "
                f"{s.doc_min_chars} characters",
            )
        )
    reqs.append(_execution(ctx))
    if has_evaluation(ctx):
        reqs.append(_evaluation(ctx))
    return reqs


def _execution(ctx: TaskContext) -> Requirement:
    since = last_code_change(ctx)
    runs = [a for a in ctx.actions[since + 1 :] if a.type in RUN_ACTIONS]
    if not runs:
        stale = any(a.type in RUN_ACTIONS for a in ctx.actions)
        why = "the code was changed after its last run" if stale else "the code was never run"
        return Requirement("execution", False, f"no run of the written code: {why}")
    last = runs[-1]
    if ran_ok(last):
        return Requirement("execution", True, f"last run ({last.id}) exited 0", last.evidence, 1.0)
    code = last.outputs.metadata.get("returncode")
    why = "recorded no exit code" if code is None else f"exited {code}"
    if not last.success:
        why = "failed" + ("" if code is None else f" (exit code {code})")
    return Requirement("execution", False, f"last run ({last.id}) {why}")


def _evaluation(ctx: TaskContext) -> Requirement:
    done = [a for a in ctx.actions[last_code_change(ctx) + 1 :] if a.type == "evaluate"]
    if not done:
        named = ctx.metadata.get("evaluation")
        what = f" ({named})" if named else ""
        return Requirement(
            "evaluation", False, f"the evaluation{what} was not run on the current code"
        )
    last = done[-1]
    verdict = "passed" if last.success else "failed"
    return Requirement(
        "evaluation", last.success, f"last evaluation ({last.id}) {verdict}",
        last.evidence, 1.0 if last.success else 0.0,
    )  # fmt: skip


def _question(ctx: TaskContext, s: ContextSettings) -> list[Requirement]:
    answers = [a for a in ctx.actions if a.type in _ANSWERS and a.success and a.outputs.result]
    if answers:
        answer = Requirement("answer", True, f"answer given by {answers[-1].id}", (), 1.0)
    elif ctx.files:
        answer = Requirement("answer", True, f"answer written to {ctx.files[-1].path}", (), 1.0)
    else:
        answer = Requirement("answer", False, "no answer given and no file written")
    ev = _best(ctx.evidence, ("synthesis", "file_creation"), s.min_confidence)
    return [answer, _from_evidence("evidence", ev, "no synthesis or file evidence")]


def _research(ctx: TaskContext, s: ContextSettings) -> list[Requirement]:
    summary_ev = _best(ctx.evidence, ("synthesis",), s.min_confidence)
    docs = [
        f for f in ctx.files
        if f.file_type == "documentation" and len(f.content.strip()) > s.doc_min_chars
    ]  # fmt: skip
    if summary_ev is not None:
        summary = _from_evidence("summary", summary_ev, "")
    elif docs:
        summary = Requirement("summary", True, f"summary written to {docs[0].path}", (), 0.9)
    else:
        summary = Requirement("summary", False, "no synthesis evidence and no summary file")
    sources: dict[str, None] = {}
    for e in ctx.evidence:
        for src in e.metadata.get("sources", ()) if e.type == "synthesis" else ():
            sources.setdefault(str(src), None)
    for a in ctx.actions:
        if a.type == "read_file" and a.success and "path" in a.inputs:
            sources.setdefault(str(a.inputs["path"]), None)
    found = (
        Requirement("sources", True, f"sources: {', '.join(sources)}", (), 1.0)
        if sources
        else Requirement("sources", False, "no sources named or read")
    )
    return [summary, found]


def _general(ctx: TaskContext, s: ContextSettings) -> list[Requirement]:
    done = [a for a in ctx.actions if a.success and (a.outputs.result or a.outputs.files)]
    result = (
        Requirement("result", True, f"result of {done[-1].id} ({done[-1].type})", (), 1.0)
        if done
        else Requirement("result", False, "no successful action with a result")
    )
    ev = _best(ctx.evidence, [str(e.type) for e in ctx.evidence], s.min_confidence)
    return [result, _from_evidence("evidence", ev, "no evidence")]


Rule = Callable[[TaskContext, ContextSettings], list[Requirement]]

#: The completion rule of each task type.
COMPLETION_RULES: Mapping[str, Rule] = {
    "coding_task": _coding,
    "simple_question": _question,
    "research_task": _research,
    "general_task": _general,
}


class Validator:
    """Decides from evidence whether a task is complete (see the module docstring's table).

    Example:
        >>> from costeer_lab.context import TaskContext
        >>> report = Validator().validate(TaskContext("t", "coding_task", "Write a parser"))
        >>> report.completed, report.missing
        (False, ('code file', 'code implementation', 'documentation', 'execution'))
    """

    def __init__(self, settings: ContextSettings | None = None) -> None:
        self.settings = settings or get_settings().context

    def validate(self, ctx: TaskContext) -> ValidationReport:
        """The verdict on ``ctx`` (nothing is stored; see ``RichMemoryManager.validate``)."""
        reqs = COMPLETION_RULES[ctx.task_type](ctx, self.settings)
        met = [r for r in reqs if r.met]
        missing = [r for r in reqs if not r.met]
        mean = sum(r.confidence for r in met) / len(met) if met else 0.0
        confidence = round(mean * len(met) / len(reqs), 4)
        lines = [f"{'met' if r.met else 'missing'} {r.name}: {r.detail}" for r in reqs]
        verdict = "complete" if not missing else "not complete"
        return ValidationReport(
            completed=not missing,
            confidence=confidence,
            rationale=f"{ctx.task_type} {verdict}; " + "; ".join(lines),
            evidence=tuple(dict.fromkeys(i for r in met for i in r.evidence)),
            met=tuple(r.name for r in met),
            missing=tuple(r.name for r in missing),
            requirements=tuple(reqs),
        )
