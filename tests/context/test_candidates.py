"""The rule-based planner's scored candidate steps: each with the evidence it expects and the
open requirements it would close, ranked breadth-first (all of a level before the next)."""

from __future__ import annotations

from costeer_lab.context import (
    Output,
    PlannedStep,
    RichMemoryManager,
    RuleBasedPlanner,
    TaskContext,
)

from .samples import DOCUMENTED, RAN_OK, UNDOCUMENTED


def _row(step: PlannedStep) -> tuple[object, ...]:
    return (step.depth, step.tool, step.inputs.get("path"), step.score, step.closes)


def test_coding_candidates_are_scored_by_the_requirements_they_close() -> None:
    planner = RuleBasedPlanner(
        files={"helper.py": UNDOCUMENTED, "gcd.py": DOCUMENTED}, main="gcd.py"
    )
    ctx = TaskContext("t", "coding_task", "Implement gcd in Python")
    ranked = planner.candidate_steps(ctx)
    assert [_row(s) for s in ranked] == [
        # level 0: the documented file closes three requirements, the helper two
        (0, "write_file", "gcd.py", 3.3, ("code file", "code implementation", "documentation")),
        (0, "write_file", "helper.py", 2.2, ("code file", "code implementation")),
        # level 1, once both are written: the run closes the last requirement
        (1, "run_python", "gcd.py", 1.1, ("execution",)),
        (1, "validate", None, 0.1, ()),
    ]
    assert ranked[0].expected_evidence == ("file_creation", "code_implementation", "documentation")
    assert ranked[2].expected_evidence == ("execution",)
    # the single-step API is the best candidate
    assert planner.plan(ctx) == planner.next_step(ctx) == ranked[0]


def test_research_explores_every_source_before_answering() -> None:
    planner = RuleBasedPlanner(sources=["a.md", "b.md", "c.md"], answer="Momentum decays fast.")
    ctx = TaskContext("r", "research_task", "Research how factor returns decay")
    ranked = planner.candidate_steps(ctx)
    assert [_row(s) for s in ranked] == [
        (0, "read_file", "a.md", 1.0, ("sources",)),
        (0, "read_file", "b.md", 1.0, ("sources",)),
        (0, "read_file", "c.md", 1.0, ("sources",)),
        (1, "answer", None, 1.1, ("summary",)),  # worth more, but a level deeper
    ]
    assert ranked[-1].expected_evidence == ("synthesis",)


def test_candidates_follow_the_recorded_context(mm: RichMemoryManager) -> None:
    planner = RuleBasedPlanner(files={"gcd.py": UNDOCUMENTED}, main="gcd.py")
    mm.create_task("Implement gcd in Python", task_id="t", metadata={"evaluation": "test_gcd.py"})
    ctx = mm.add_action("t", "write_file", {}, Output(True, files={"gcd.py": UNDOCUMENTED}))
    ctx = mm.add_action("t", "run_python", {"path": "gcd.py"}, RAN_OK)
    ranked = planner.candidate_steps(ctx)
    # what is met (code, run) is not proposed again; the open questions are all at level 0
    assert [(s.depth, s.tool, s.closes) for s in ranked] == [
        (0, "evaluate", ("evaluation",)),
        (0, "write_file", ("documentation",)),
        (0, "validate", ()),
    ]
    assert ranked[1].inputs["path"] == "README.md" and ranked[0].inputs == {"path": "test_gcd.py"}
    done = TaskContext("d", "simple_question", "6 * 7?", actions=ctx.actions[:0])
    assert RuleBasedPlanner().candidate_steps(done) == [] and RuleBasedPlanner().plan(done) is None
