"""The agent loop end to end: rule-based planner, tools (run_python in the real sandbox),
completion, loop stops, untrusted tool inputs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.context import (
    AgentResult,
    PlannedStep,
    RichMemoryManager,
    RuleBasedPlanner,
    TaskAgent,
    TaskContext,
    ToolBox,
    timeline,
)
from costeer_lab.sandbox import Limits, Sandbox

from .samples import DOCUMENTED, UNDOCUMENTED


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(Limits(wall_time_s=30, cpu_time_s=30, memory_mb=2048)) as sb:
        yield sb


def _agent(mm: RichMemoryManager, planner: object, work: Path, sandbox: Sandbox) -> TaskAgent:
    return TaskAgent(mm, planner, ToolBox(work, sandbox=sandbox))  # type: ignore[arg-type]


def test_writes_a_documented_solution_file_and_completes(
    mm: RichMemoryManager, tmp_path: Path, sandbox: Sandbox
) -> None:
    planner = RuleBasedPlanner(files={"gcd.py": DOCUMENTED})
    result = _agent(mm, planner, tmp_path, sandbox).run("Implement gcd in Python", task_id="t")
    assert result.completed and result.stop_reason is None
    assert (tmp_path / "gcd.py").read_text(encoding="utf-8") == DOCUMENTED
    assert [a.type for a in result.context.actions] == ["write_file", "run_python"]
    (ref,) = result.files
    assert ref.metadata.functions[0].docstring is not None
    assert result.report.completed and result.report.missing == ()
    assert result.context.actions[0].context.plan_id == result.plan_id
    assert mm.get_task("t") == result.context  # everything is in the store
    assert AgentResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result


def test_runs_in_the_sandbox_and_documents_undocumented_code(
    mm: RichMemoryManager, tmp_path: Path, sandbox: Sandbox
) -> None:
    planner = RuleBasedPlanner(files={"solution.py": UNDOCUMENTED})
    result = _agent(mm, planner, tmp_path, sandbox).run("Write a gcd function in Python")
    ctx = result.context
    assert result.completed
    assert [a.type for a in ctx.actions] == ["write_file", "run_python", "write_file"]
    run = ctx.actions[1]
    assert run.success and run.outputs.metadata["stdout"] == "6\n"
    assert run.outputs.metadata["isolation"] in ("full", "partial", "none")
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "## `solution.py`" in readme
    assert "- `gcd(a, b)` (`gcd`, lines 1-4, cyclomatic complexity 2)" in readme
    assert [e.type for e in ctx.evidence] == [
        "file_creation", "code_implementation",  # solution.py
        "execution",  # the sandboxed run
        "file_creation", "documentation",  # README.md
    ]  # fmt: skip
    assert ctx.actions[2].context.reasoning.startswith("the code lacks documentation")
    rows = timeline(ctx)
    assert [(r["kind"], r["type"]) for r in rows][:3] == [
        ("action", "write_file"), ("evidence", "file_creation"),
        ("evidence", "code_implementation"),
    ]  # fmt: skip
    assert len(rows) == len(ctx.actions) + len(ctx.evidence)
    assert all(r["t"] >= 0 for r in rows)


def test_failed_run_blocks_completion(
    mm: RichMemoryManager, tmp_path: Path, sandbox: Sandbox
) -> None:
    crash = UNDOCUMENTED.replace("print(gcd(12, 18))", "print(gcd(12, '18'))")
    planner = RuleBasedPlanner(files={"solution.py": crash})
    result = _agent(mm, planner, tmp_path, sandbox).run("Write a gcd function in Python")
    ctx = result.context
    assert not result.completed
    assert [a.type for a in ctx.actions] == ["write_file", "run_python", "write_file", "validate"]
    assert not ctx.actions[1].success and "TypeError" in ctx.actions[1].outputs.result
    assert result.report.missing == ("execution",)
    assert result.stop_reason == "planner_done: the planner has no further step"


def test_research_task_reads_sources_then_summarises(
    mm: RichMemoryManager, tmp_path: Path, sandbox: Sandbox
) -> None:
    (tmp_path / "a.md").write_text("Momentum decays in 3 months.", encoding="utf-8")
    (tmp_path / "b.md").write_text("Value decays slowly.", encoding="utf-8")
    planner = RuleBasedPlanner(
        sources=["a.md", "b.md"], answer="Momentum decays fast, value slowly."
    )
    result = _agent(mm, planner, tmp_path, sandbox).run("Research how factor returns decay")
    assert result.completed and result.context.task_type == "research_task"
    assert [a.type for a in result.context.actions] == ["read_file", "read_file", "answer"]
    assert result.context.actions[0].outputs.result == "Momentum decays in 3 months."
    assert "sources: a.md, b.md" in result.report.rationale


class SamePlanner:
    """A planner stuck on one step."""

    def plan(self, ctx: TaskContext) -> PlannedStep | None:
        return PlannedStep("read_file", {"path": "missing.txt"}, "look again")


def test_a_looping_planner_is_stopped_with_the_rule(
    mm: RichMemoryManager, tmp_path: Path, sandbox: Sandbox
) -> None:
    result = _agent(mm, SamePlanner(), tmp_path, sandbox).run("Tidy the results folder")
    assert not result.completed and result.n_actions == 3
    assert result.stop_reason is not None and result.stop_reason.startswith("repeated_action:")
    assert all(not a.success for a in result.context.actions)
    assert "no file 'missing.txt'" in result.context.actions[0].outputs.result


def test_no_planner_step_without_a_draft(
    mm: RichMemoryManager, tmp_path: Path, sandbox: Sandbox
) -> None:
    result = _agent(mm, RuleBasedPlanner(), tmp_path, sandbox).run("Implement a parser")
    assert not result.completed and result.n_actions == 0
    assert result.stop_reason == "planner_done: the planner has no further step"
    assert result.report.missing == (
        "code file", "code implementation", "documentation", "execution"
    )  # fmt: skip


def test_bad_tool_inputs_are_failed_actions(tmp_path: Path, sandbox: Sandbox) -> None:
    tools = ToolBox(tmp_path / "work", sandbox=sandbox)
    outside = tmp_path / "outside.txt"
    assert not tools.run("write_file", {"path": str(outside), "content": "x"}, None).success
    assert not tools.run("write_file", {"path": "../outside.txt", "content": "x"}, None).success
    assert not outside.exists()
    assert not tools.run("write_file", {"path": "a.txt", "content": 3}, None).success
    assert "unknown tool 'rm'" in tools.run("rm", {}, None).result
    assert not tools.run("run_python", {"path": "nope.py"}, None).success
    assert not tools.run("answer", {"text": ""}, None).success
    assert not tools.run("validate", {}, None).success
    ok = tools.run("write_file", {"path": "sub/a.py", "content": "import sub.b\n"}, None)
    assert ok.files == {"sub/a.py": "import sub.b\n"}
