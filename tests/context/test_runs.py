"""A coding task is complete only when its code ran with exit code 0 (in the real sandbox) and,
when the task has an evaluation, the evaluation passed — after the code's last change."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.context import (
    AgentResult,
    Output,
    RichMemoryManager,
    RuleBasedPlanner,
    TaskAgent,
    ToolBox,
)
from costeer_lab.sandbox import Limits, Sandbox

from .samples import DOCUMENTED, RAN_OK

EXITS_3 = '''"""Prints the greatest common divisor of 12 and 18, or so its documentation claims."""

raise SystemExit(3)
'''

TESTS_OK = """from gcd import gcd


def test_gcd():
    assert gcd(12, 18) == 6
"""

TESTS_FAIL = """from gcd import gcd


def test_gcd_is_wrong():
    assert gcd(12, 18) == 7


def test_gcd_of_zero():
    assert gcd(0, 5) == 5
"""


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(Limits(wall_time_s=30, cpu_time_s=30, memory_mb=2048)) as sb:
        yield sb


def _run(
    mm: RichMemoryManager, work: Path, sandbox: Sandbox, files: dict[str, str], **kw: Any
) -> AgentResult:
    agent = TaskAgent(mm, RuleBasedPlanner(files=files), ToolBox(work, sandbox=sandbox))
    return agent.run("Implement gcd in Python", **kw)


def test_a_documented_script_that_exits_3_is_not_complete(
    mm: RichMemoryManager, tmp_path: Path, sandbox: Sandbox
) -> None:
    result = _run(mm, tmp_path, sandbox, {"main.py": EXITS_3})
    ctx = result.context
    assert not result.completed
    run = next(a for a in ctx.actions if a.type == "run_python")
    assert not run.success and run.outputs.metadata["returncode"] == 3
    assert result.report.missing == ("execution",)
    assert "last run (act-0002) failed (exit code 3)" in result.report.rationale
    assert result.stop_reason == "planner_done: the planner has no further step"


def test_a_correct_script_completes_after_its_run(
    mm: RichMemoryManager, tmp_path: Path, sandbox: Sandbox
) -> None:
    result = _run(mm, tmp_path, sandbox, {"gcd.py": DOCUMENTED})
    assert result.completed
    assert [a.type for a in result.context.actions] == ["write_file", "run_python"]
    assert result.context.actions[1].outputs.metadata["returncode"] == 0
    assert "met execution: last run (act-0002) exited 0" in result.report.rationale


def test_the_evaluation_must_pass_when_the_task_has_one(
    mm: RichMemoryManager, tmp_path: Path, sandbox: Sandbox
) -> None:
    good = _run(mm, tmp_path / "good", sandbox, {"gcd.py": DOCUMENTED, "test_gcd.py": TESTS_OK},
                metadata={"evaluation": "test_gcd.py"})  # fmt: skip
    assert good.completed
    assert [a.type for a in good.context.actions][-2:] == ["run_python", "evaluate"]
    assert good.context.actions[-1].outputs.metadata["passed"] == ["test_gcd"]
    bad = _run(mm, tmp_path / "bad", sandbox,
               {"gcd.py": DOCUMENTED, "test_gcd.py": TESTS_FAIL},
               metadata={"evaluation": "test_gcd.py"})  # fmt: skip
    assert not bad.completed and bad.report.missing == ("evaluation",)
    verdict = next(a for a in bad.context.actions if a.type == "evaluate").outputs.metadata
    assert verdict["failed"] == ["test_gcd_is_wrong"] and verdict["passed"] == ["test_gcd_of_zero"]


def test_a_run_before_the_last_code_change_does_not_count(mm: RichMemoryManager) -> None:
    mm.create_task("Implement gcd in Python", task_id="t")
    mm.add_action("t", "write_file", {"v": 1}, Output(True, files={"gcd.py": DOCUMENTED}))
    assert mm.add_action("t", "run_python", {"path": "gcd.py"}, RAN_OK, judge=False)
    ctx = mm.add_action("t", "write_file", {"v": 2}, Output(True, files={"gcd.py": EXITS_3}))
    assert not ctx.complete
    report = mm.validate("t")
    assert report.missing == ("execution",)
    assert "the code was changed after its last run" in report.rationale


def test_a_run_claiming_success_without_an_exit_code_does_not_count(
    mm: RichMemoryManager,
) -> None:
    mm.create_task("Implement gcd in Python", task_id="t")
    mm.add_action("t", "write_file", {}, Output(True, files={"gcd.py": DOCUMENTED}))
    ctx = mm.add_action("t", "run_python", {"path": "gcd.py"}, Output(True, "all good"))
    assert not ctx.complete
    assert "last run (act-0002) recorded no exit code" in mm.validate("t").rationale


def test_a_named_evaluation_that_never_ran_blocks_completion(mm: RichMemoryManager) -> None:
    mm.create_task("Implement gcd in Python", task_id="t", metadata={"evaluation": "test_gcd.py"})
    mm.add_action("t", "write_file", {}, Output(True, files={"gcd.py": DOCUMENTED}))
    ctx = mm.add_action("t", "run_python", {"path": "gcd.py"}, RAN_OK)
    assert not ctx.complete
    report = mm.validate("t")
    assert report.missing == ("evaluation",)
    assert "the evaluation (test_gcd.py) was not run on the current code" in report.rationale
    passed = Output(True, "1 passed", metadata={"returncode": 0})
    assert mm.add_action("t", "evaluate", {"path": "test_gcd.py"}, passed).complete
