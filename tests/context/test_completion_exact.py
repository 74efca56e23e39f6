"""The Validator's requirements pinned exactly, on hand-built task contexts: each requirement's
detail, evidence and confidence, the confidence floor, the run and evaluation rules."""

from __future__ import annotations

from typing import Any

import pytest

from costeer_lab.context import (
    Action,
    ContextSettings,
    Evidence,
    FileMetadata,
    FileReference,
    Output,
    Requirement,
    TaskContext,
    ValidationReport,
    Validator,
)
from costeer_lab.context._runs import has_evaluation, last_code_change, ran_ok

SETTINGS = ContextSettings(min_confidence=0.5, doc_min_chars=20)
DOC = "Greatest common divisor of two integers."  # 40 characters, more than 20


def ev(eid: str, kind: str, confidence: float, **meta: Any) -> Evidence:
    return Evidence(eid, kind, f"{kind} seen", confidence, "tool", 0.0, meta)  # type: ignore[arg-type]


def code_file(path: str, doc: str = "", syntax_error: str | None = None) -> FileReference:
    meta = FileMetadata(documentation=doc, syntax_error=syntax_error)
    return FileReference(path, path, "code", "x = 1\n", 6, "a1", 0.0, 0.0, "0", meta)


def act(aid: str, kind: str, success: bool = True, **out: Any) -> Action:
    return Action(aid, kind, out.pop("inputs", {}), Output(success, **out), 0.0, success)


WROTE = act("a1", "write_file", files={"gcd.py": "x = 1\n"})


def ctx(task_type: str = "coding_task", **kw: Any) -> TaskContext:
    return TaskContext("t", task_type, "a task", **kw)  # type: ignore[arg-type]


def reqs(c: TaskContext) -> dict[str, tuple[bool, str, tuple[str, ...], float]]:
    return {
        r.name: (r.met, r.detail, r.evidence, r.confidence)
        for r in Validator(SETTINGS).validate(c).requirements
    }


def test_a_complete_coding_task_in_detail() -> None:
    c = ctx(
        files=(code_file("gcd.py"), code_file("util.py")),
        evidence=(ev("e1", "code_implementation", 0.9), ev("e2", "documentation", 0.7)),
        actions=(WROTE, act("a2", "run_python", metadata={"returncode": 0})),
    )
    assert reqs(c) == {
        "code file": (True, "code file(s) gcd.py, util.py", (), 1.0),
        "code implementation": (
            True,
            "code_implementation evidence e1 from tool (0.90)",
            ("e1",),
            0.9,
        ),
        "documentation": (True, "documentation evidence e2 from tool (0.70)", ("e2",), 0.7),
        "execution": (True, "last run (a2) exited 0", (), 1.0),
    }
    report = Validator(SETTINGS).validate(c)
    assert report.completed and report.confidence == 0.9  # mean of 1.0, 0.9, 0.7, 1.0
    assert report.evidence == ("e1", "e2")
    assert report.rationale.startswith("coding_task complete; met code file: code file(s) ")


def test_evidence_at_the_confidence_floor_counts_and_below_does_not() -> None:
    at = ctx(evidence=(ev("e1", "code_implementation", 0.5), ev("e2", "code_implementation", 0.4)))
    assert reqs(at)["code implementation"][:3] == (
        True,
        "code_implementation evidence e1 from tool (0.50)",
        ("e1",),
    )
    below = ctx(evidence=(ev("e2", "code_implementation", 0.49),))
    assert reqs(below)["code implementation"] == (
        False,
        "no code_implementation evidence",
        (),
        0.0,
    )


def test_a_documented_code_file_stands_in_for_documentation_evidence() -> None:
    c = ctx(files=(code_file("a.py", "short"), code_file("gcd.py", f"  {DOC}  ")))
    assert reqs(c)["documentation"] == (True, "gcd.py documented (40 chars)", (), 0.8)
    # exactly doc_min_chars characters is not enough
    c = ctx(files=(code_file("gcd.py", "x" * 20),))
    assert reqs(c)["documentation"] == (
        False,
        "no documentation evidence and no code file documented in more than 20 characters",
        (),
        0.0,
    )


def test_code_file_requirement_names_the_broken_files() -> None:
    c = ctx(files=(code_file("a.py", syntax_error="line 1"), code_file("b.py", syntax_error="x")))
    assert reqs(c)["code file"] == (
        False,
        "no code file that parses (a.py, b.py has a syntax error)",
        (),
        0.0,
    )
    assert reqs(ctx())["code file"] == (False, "no code file that parses", (), 0.0)


@pytest.mark.parametrize(
    ("actions", "detail"),
    [
        ((), "no run of the written code: the code was never run"),
        (
            (act("a0", "run", metadata={"returncode": 0}), WROTE),
            "no run of the written code: the code was changed after its last run",
        ),
        ((WROTE, act("a2", "execute", metadata={"returncode": 3})), "last run (a2) exited 3"),
        ((WROTE, act("a2", "run_python", result="ok")), "last run (a2) recorded no exit code"),
        ((WROTE, act("a2", "run_python", False)), "last run (a2) failed"),
        (
            (WROTE, act("a2", "run_python", False, metadata={"returncode": 0})),
            "last run (a2) failed (exit code 0)",
        ),
        (
            (WROTE, act("a2", "run", metadata={"returncode": 0}), act("a3", "run", False)),
            "last run (a3) failed",
        ),
    ],
)
def test_execution_requirement_explains_why_it_is_not_met(
    actions: tuple[Action, ...], detail: str
) -> None:
    assert reqs(ctx(actions=actions))["execution"] == (False, detail, (), 0.0)


def test_evaluation_requirement() -> None:
    named = ctx(metadata={"evaluation": "test_gcd.py"}, actions=(WROTE,))
    assert reqs(named)["evaluation"] == (
        False,
        "the evaluation (test_gcd.py) was not run on the current code",
        (),
        0.0,
    )
    stale = ctx(actions=(act("a0", "evaluate"), WROTE))
    assert reqs(stale)["evaluation"] == (
        False,
        "the evaluation was not run on the current code",
        (),
        0.0,
    )
    failed = ctx(actions=(WROTE, act("a2", "evaluate", False)))
    assert reqs(failed)["evaluation"] == (False, "last evaluation (a2) failed", (), 0.0)
    passed = ctx(actions=(WROTE, act("a2", "evaluate", False), act("a3", "evaluate")))
    assert reqs(passed)["evaluation"] == (True, "last evaluation (a3) passed", (), 1.0)
    assert "evaluation" not in reqs(ctx(actions=(WROTE,)))


def test_question_requirements() -> None:
    said = ctx(
        "simple_question",
        actions=(act("a1", "answer", result="42"), act("a2", "summarize", result="6x7")),
        evidence=(ev("e1", "synthesis", 0.6),),
    )
    assert reqs(said) == {
        "answer": (True, "answer given by a2", (), 1.0),
        "evidence": (True, "synthesis evidence e1 from tool (0.60)", ("e1",), 0.6),
    }
    # an answer action without a result is no answer; a written file is
    written = ctx(
        "simple_question",
        actions=(act("a1", "answer"),),
        files=(code_file("a.py"), code_file("b.py")),
    )
    assert reqs(written) == {
        "answer": (True, "answer written to b.py", (), 1.0),
        "evidence": (False, "no synthesis or file evidence", (), 0.0),
    }
    assert reqs(
        ctx("simple_question", actions=(act("a1", "answer", result="42", success=False),))
    )["answer"] == (False, "no answer given and no file written", (), 0.0)


def test_research_requirements() -> None:
    c = ctx(
        "research_task",
        evidence=(
            ev("e1", "synthesis", 0.8, sources=["paper.pdf", "blog"]),
            ev("e2", "validation", 0.9, sources=["ignored.md"]),
        ),
        actions=(
            act("a1", "read_file", inputs={"path": "notes.md"}),
            act("a2", "read_file", inputs={"path": "blog"}),
            act("a3", "read_file", False, inputs={"path": "missing.md"}),
            act("a4", "read_file", inputs={"file": "other.md"}),
        ),
    )
    assert reqs(c) == {
        "summary": (True, "synthesis evidence e1 from tool (0.80)", ("e1",), 0.8),
        "sources": (True, "sources: paper.pdf, blog, notes.md", (), 1.0),
    }
    doc = FileReference("r", "summary.md", "documentation", DOC, 40, "a1", 0.0, 0.0, "0")
    short = FileReference("s", "short.md", "documentation", "x" * 20, 20, "a1", 0.0, 0.0, "0")
    assert reqs(ctx("research_task", files=(short, doc))) == {
        "summary": (True, "summary written to summary.md", (), 0.9),
        "sources": (False, "no sources named or read", (), 0.0),
    }
    assert reqs(ctx("research_task", files=(short,)))["summary"] == (
        False,
        "no synthesis evidence and no summary file",
        (),
        0.0,
    )


def test_general_requirements() -> None:
    c = ctx(
        "general_task",
        actions=(act("a1", "list", result="3"), act("a2", "move", files={"x.txt": "x"})),
        evidence=(ev("e1", "execution", 0.6), ev("e2", "file_creation", 0.7)),
    )
    assert reqs(c) == {
        "result": (True, "result of a2 (move)", (), 1.0),
        "evidence": (True, "file_creation evidence e2 from tool (0.70)", ("e2",), 0.7),
    }
    report = Validator(SETTINGS).validate(c)
    assert report.confidence == 0.85 and report.met == ("result", "evidence")


def test_confidence_is_the_mean_of_met_times_the_share_met() -> None:
    c = ctx("general_task", evidence=(ev("e1", "execution", 0.6),))
    report = Validator(SETTINGS).validate(c)
    assert report.confidence == 0.3 and report.missing == ("result",)
    assert Validator(SETTINGS).validate(ctx("general_task")).confidence == 0.0


def test_reports_read_back_with_defaults_for_missing_keys() -> None:
    assert Requirement.from_dict({"name": "x", "met": 1}) == Requirement("x", True, "")
    assert ValidationReport.from_dict({"completed": 0, "confidence": "0.5"}) == ValidationReport(
        False, 0.5, ""
    )


def test_what_counts_as_a_run_that_exited_0() -> None:
    def run(success: bool, code: Any) -> Action:
        return act("r", "run_python", success, metadata={"returncode": code})

    assert ran_ok(run(True, 0))
    assert not ran_ok(run(False, 0))  # a failed action is no proof, whatever its exit code
    assert not ran_ok(run(False, 0.0))
    assert not ran_ok(run(True, False))  # False == 0, but is not an exit code
    assert not ran_ok(run(True, 0.0))
    assert not ran_ok(run(True, 1))


def test_last_code_change_and_has_evaluation() -> None:
    docs = act("a2", "write_file", files={"README.md": DOC})
    assert last_code_change(ctx(actions=(docs, docs))) == -1
    assert last_code_change(ctx(actions=(WROTE, docs))) == 0
    assert last_code_change(ctx(actions=(docs, WROTE, docs))) == 1
    assert not has_evaluation(ctx(metadata={"evaluation": ""}))
    assert has_evaluation(ctx(metadata={"evaluation": "t.py"}))
    assert has_evaluation(ctx(actions=(act("a1", "evaluate", False),)))


def test_gaps_found_by_mutation() -> None:
    # written code that never ran is "never run", not "changed after its last run"
    assert reqs(ctx(actions=(WROTE,)))["execution"][1] == (
        "no run of the written code: the code was never run"
    )
    # a synthesis naming no sources is a summary without sources
    c = ctx("research_task", evidence=(ev("e1", "synthesis", 0.8),))
    assert reqs(c)["sources"] == (False, "no sources named or read", (), 0.0)
    # a failed action is no result, whatever it returned
    failed = ctx("general_task", actions=(act("a1", "list", False, result="3"),))
    assert reqs(failed)["result"] == (False, "no successful action with a result", (), 0.0)
