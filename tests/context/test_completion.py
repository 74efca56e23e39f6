"""Completion rules of every task type and the Validator's report."""

from __future__ import annotations

from costeer_lab.context import (
    COMPLETION_RULES,
    TASK_TYPES,
    ContextSettings,
    Output,
    RichMemoryManager,
    TaskContext,
    ValidationReport,
    Validator,
    detect_task_type,
)
from costeer_lab.store import SQLiteStore

from .conftest import Clock
from .samples import BROKEN, DOCUMENTED, RAN_OK, UNDOCUMENTED


def test_every_task_type_has_a_rule() -> None:
    assert set(COMPLETION_RULES) == set(TASK_TYPES)


def test_detector_and_override(mm: RichMemoryManager) -> None:
    assert detect_task_type("Fix the bug in parser.py") == "coding_task"
    assert detect_task_type("Investigate why factor IC decays") == "research_task"
    assert detect_task_type("Who wrote CoSTEER?") == "simple_question"
    assert detect_task_type("Book a room for Tuesday") == "general_task"
    long_question = "Why " + "really " * 30 + "?"
    assert detect_task_type(long_question) == "general_task"
    ctx = mm.create_task("Who wrote CoSTEER?", task_type="research_task")
    assert ctx.task_type == "research_task" and ctx.metadata["detected_type"] == "simple_question"


def test_coding_task_needs_code_implementation_and_documentation(mm: RichMemoryManager) -> None:
    mm.create_task("Implement gcd in Python", task_id="t")
    report = mm.validate("t")
    assert not report.completed and report.confidence == 0.0
    assert report.missing == ("code file", "code implementation", "documentation", "execution")
    ctx = mm.add_action("t", "write_file", {}, Output(True, files={"c.py": BROKEN}))
    report = mm.validate("t")
    assert not ctx.complete and "c.py has a syntax error" in report.rationale
    ctx = mm.add_action("t", "write_file", {}, Output(True, files={"gcd.py": UNDOCUMENTED}))
    report = mm.validate("t")
    assert not ctx.complete and report.met == ("code file", "code implementation")
    assert report.missing == ("documentation", "execution")
    assert 0 < report.confidence < 1
    doc = "# gcd\n\n`gcd(a, b)` returns the greatest common divisor of two integers.\n"
    ctx = mm.add_action(
        "t", "write_file", {"path": "README.md"}, Output(True, files={"README.md": doc})
    )
    assert not ctx.complete and mm.validate("t").missing == ("execution",)
    ctx = mm.add_action("t", "run_python", {"path": "gcd.py"}, RAN_OK)
    assert ctx.complete and ctx.stop_reason is None
    report = mm.validate("t")
    assert report.completed and report.missing == ()
    assert set(ctx.completion_evidence) == set(report.evidence)
    kinds = {ctx.evidence_by_id(i).type for i in ctx.completion_evidence}  # type: ignore[union-attr]
    assert kinds == {"code_implementation", "documentation", "execution"}
    assert ctx.metadata["completion"]["completed"] is True


def test_coding_task_with_a_documented_code_file(mm: RichMemoryManager) -> None:
    mm.create_task("Implement gcd in Python", task_id="t")
    ctx = mm.add_action("t", "write_file", {}, Output(True, files={"gcd.py": DOCUMENTED}))
    assert not ctx.complete
    assert mm.add_action("t", "run_python", {"path": "gcd.py"}, RAN_OK).complete


def test_documented_code_file_counts_without_documentation_evidence(store: SQLiteStore) -> None:
    """A code file documented in more than doc_min_chars counts even when documentation
    evidence is not trusted enough (min_confidence above its 0.8)."""
    settings = ContextSettings(min_confidence=0.85)
    mm = RichMemoryManager(store, settings=settings)
    mm.create_task("Implement gcd in Python", task_id="t")
    mm.add_action("t", "write_file", {}, Output(True, files={"gcd.py": DOCUMENTED}))
    ctx = mm.add_action("t", "run_python", {"path": "gcd.py"}, RAN_OK)
    assert ctx.complete
    report = Validator(settings).validate(ctx)
    assert "gcd.py documented (" in report.rationale
    short = RichMemoryManager(
        store, settings=ContextSettings(min_confidence=0.85, doc_min_chars=500)
    )
    short.create_task("Implement gcd in Python", task_id="u")
    short.add_action("u", "write_file", {}, Output(True, files={"g.py": DOCUMENTED}))
    assert not short.add_action("u", "run_python", {"path": "g.py"}, RAN_OK).complete


def test_coding_task_with_a_failed_evaluation_is_not_complete(mm: RichMemoryManager) -> None:
    mm.create_task("Implement gcd in Python", task_id="t")
    mm.add_action("t", "write_file", {}, Output(True, files={"gcd.py": DOCUMENTED}), judge=False)
    mm.add_action("t", "run_python", {"path": "gcd.py"}, RAN_OK, judge=False)
    ctx = mm.add_action("t", "evaluate", {}, Output(False, "gcd(12, 18) returned 0"))
    assert not ctx.complete and mm.validate("t").missing == ("evaluation",)
    ctx = mm.add_action("t", "evaluate", {"n": 2}, Output(True, "passed"))
    assert ctx.complete


def test_simple_question_needs_an_answer_with_evidence(mm: RichMemoryManager) -> None:
    mm.create_task("What is 6 * 7?", task_id="q")
    ctx = mm.add_action("q", "answer", {}, Output(False, "I am not sure"))
    assert not ctx.complete and mm.validate("q").missing == ("answer", "evidence")
    ctx = mm.add_action("q", "answer", {"try": 2}, Output(True, "42"))
    assert ctx.complete and mm.validate("q").met == ("answer", "evidence")
    mm.create_task("What is 6 * 7?", task_id="q2")
    ctx = mm.add_action("q2", "write_file", {}, Output(True, files={"answer.txt": "42"}))
    assert ctx.complete and "answer written to answer.txt" in mm.validate("q2").rationale


def test_research_task_needs_a_summary_and_sources(mm: RichMemoryManager) -> None:
    mm.create_task("Research factor decay in the literature", task_id="r")
    ctx = mm.add_action("r", "summarize", {}, Output(True, "Decay is fast."))
    assert not ctx.complete and mm.validate("r").missing == ("sources",)
    ctx = mm.add_action("r", "read_file", {"path": "paper.md"}, Output(True, "..."))
    assert ctx.complete and "sources: paper.md" in mm.validate("r").rationale
    mm.create_task("Research factor decay in the literature", task_id="r2")
    ctx = mm.add_action(
        "r2", "summarize", {"sources": ["https://example.org/p"]}, Output(True, "Fast decay.")
    )
    assert ctx.complete
    mm.create_task("Research factor decay in the literature", task_id="r3")
    summary = "# Decay\n\n" + "Factor returns decay within weeks in most studies. " * 2
    ctx = mm.add_action("r3", "write_file", {}, Output(True, files={"summary.md": summary}))
    assert not ctx.complete and mm.validate("r3").missing == ("sources",)
    ctx = mm.add_action("r3", "read_file", {"path": "a.pdf"}, Output(False, "no such file"))
    assert not ctx.complete  # a failed read is no source


def test_general_task_needs_a_result_and_evidence(mm: RichMemoryManager) -> None:
    mm.create_task("Tidy the results folder", task_id="g")
    ctx = mm.add_action("g", "list", {}, Output(True, "3 files"))
    assert not ctx.complete and mm.validate("g").missing == ("evidence",)
    ctx = mm.add_action("g", "run_python", {"path": "tidy.py"}, Output(True, "moved 3 files"))
    assert ctx.complete
    report = mm.validate("g")
    assert report.completed and report.confidence == 1.0


def test_validator_on_a_bare_context_and_report_dict(clock: Clock) -> None:
    report = Validator().validate(TaskContext("x", "general_task", "tidy", created_at=clock.now))
    assert report.to_dict() == {
        "completed": False,
        "confidence": 0.0,
        "rationale": "general_task not complete; missing result: no successful action with a "
        "result; missing evidence: no evidence",
        "evidence": [],
        "met": [],
        "missing": ["result", "evidence"],
        "requirements": [
            {
                "name": "result",
                "met": False,
                "detail": "no successful action with a result",
                "evidence": [],
                "confidence": 0.0,
            },
            {
                "name": "evidence",
                "met": False,
                "detail": "no evidence",
                "evidence": [],
                "confidence": 0.0,
            },
        ],
    }
    assert ValidationReport.from_dict(report.to_dict()) == report
