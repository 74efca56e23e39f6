"""The planner and the context's evidence, coverage, examples and metadata rules pinned
exactly: tests written for the mutants that survived ``make mutation``."""

from __future__ import annotations

from costeer_lab.context import RuleBasedPlanner, TaskContext, document_task
from costeer_lab.context._simulate import apply_step

CODE = '''"""Greatest common divisors."""
import math
import numpy as np


class Pair:
    """Two numbers.

    More text.
    """

    def total(self):
        return 1


def gcd(a: int, b: int) -> int:
    """Greatest common divisor of a and b.

    Second line.

    Example:
        >>> gcd(4, 6)
        2
    """
    while b:
        a, b = b, a % b
    return a


def lcm(a, b):
    return a * b // gcd(a, b)
'''
TEST = "from gcd import gcd\n\ndef test_gcd():\n    assert gcd(4, 6) == 2\n"


def _written(task: str, files: dict[str, str]) -> TaskContext:
    ctx = TaskContext("t", "coding_task", task)
    for path, content in files.items():
        ctx = apply_step(ctx, "write_file", {"path": path, "content": content})
    return ctx


def test_a_question_without_an_answer_has_no_step() -> None:
    assert RuleBasedPlanner().plan(TaskContext("t", "simple_question", "6 * 7?")) is None


def test_document_task_is_exact() -> None:
    title = "Write gcd and lcm, " + "x" * 70
    ctx = _written(f"  {title}\nwith tests", {"gcd.py": CODE, "test_gcd.py": TEST, "n.md": "# n"})
    assert document_task(ctx) == "\n".join(
        [
            f"# {title[:80]}",
            "",
            "Files written for this task:",
            "",
            "## `gcd.py` — Greatest common divisors.",
            "",
            "- class `Pair` (lines 6-13)",
            "  Two numbers.",
            "- `gcd(a: int, b: int) -> int` (`gcd`, lines 16-27, cyclomatic complexity 2)",
            "  Greatest common divisor of a and b.",
            "  example:",
            "",
            "  ```python",
            "  >>> gcd(4, 6)",
            "  2",
            "  ```",
            "",
            "  tested by: test_gcd.py::test_gcd",
            "- `lcm(a, b)` (`lcm`, lines 30-31, cyclomatic complexity 1)",
            "  tested by: none",
            "- `total(self)` (`Pair.total`, lines 12-13, cyclomatic complexity 1)",
            "  tested by: none",
            "- depends on: numpy",
            "",
            "## `test_gcd.py`",
            "",
            "- `test_gcd()` (`test_gcd`, lines 3-4, cyclomatic complexity 2)",
            "- depends on: gcd",
            "",
        ]
    )


def test_document_task_without_tests_or_purpose_says_nothing_of_them() -> None:
    ctx = _written("Write f", {"f.py": "def f(x):\n    return x\n"})
    assert document_task(ctx) == "\n".join(
        [
            "# Write f",
            "",
            "Files written for this task:",
            "",
            "## `f.py`",
            "",
            "- `f(x)` (`f`, lines 1-2, cyclomatic complexity 1)",
            "",
        ]
    )


def test_pending_writes_are_reasoned_and_a_non_ascii_file_counts_as_written() -> None:
    planner = RuleBasedPlanner(files={"é.py": "s = 'é'\n", "b.py": "y = 2\n"})
    steps = planner.candidate_steps(TaskContext("t", "coding_task", "Write"), max_depth=1)
    assert [(s.tool, s.reasoning) for s in steps] == [
        ("write_file", "write é.py"),
        ("write_file", "write b.py"),
    ]
    ctx = _written("Write", {"é.py": "s = 'é'\n"})
    (step,) = planner.candidate_steps(ctx, max_depth=1)
    assert step.inputs["path"] == "b.py"  # the checksum of the written file matches


def _steps(planner: RuleBasedPlanner, ctx: TaskContext) -> list[tuple[str, object, str]]:
    return [
        (s.tool, dict(s.inputs), s.reasoning) for s in planner.candidate_steps(ctx, max_depth=1)
    ]


def test_coding_steps_after_the_writes_are_reasoned() -> None:
    files = {"a.py": "'''A.'''\n\ndef f():\n    '''" + "Returns one, always. " * 4 + "'''\n"}
    files["test_a.py"] = "from a import f\n\ndef test_f():\n    assert f() is None\n"
    planner = RuleBasedPlanner(files=files)
    ctx = TaskContext("t", "coding_task", "Write a", metadata={"evaluation": "test_a.py"})
    for path, content in files.items():
        ctx = apply_step(ctx, "write_file", {"path": path, "content": content})
    assert _steps(planner, ctx) == [
        ("run_python", {"path": "a.py"}, "run a.py to check it"),
        ("evaluate", {"path": "test_a.py"}, "run the task's evaluation test_a.py on the code"),
        ("validate", {}, "check the completion rule"),
    ]
    # another file run, an evaluation done: only the main file's run is still asked for
    ctx = apply_step(ctx, "run_python", {"path": "test_a.py"})
    ctx = apply_step(ctx, "evaluate", {"path": "test_a.py"})
    assert [t for t, _, _ in _steps(planner, ctx)] == ["run_python", "validate"]


def test_an_evaluation_that_is_not_a_file_name_is_not_run() -> None:
    planner = RuleBasedPlanner(files={"a.py": "x = 1\n"})
    for evaluation in ("", ["test_a.py"]):
        ctx = TaskContext("t", "coding_task", "Write a", metadata={"evaluation": evaluation})
        ctx = apply_step(ctx, "write_file", {"path": "a.py", "content": "x = 1\n"})
        assert "evaluate" not in [t for t, _, _ in _steps(planner, ctx)]


def test_a_short_readme_is_not_rewritten_by_the_planner() -> None:
    planner = RuleBasedPlanner(files={"a.py": "x = 1\n"})
    ctx = TaskContext("t", "coding_task", "Write a")
    ctx = apply_step(ctx, "write_file", {"path": "a.py", "content": "x = 1\n"})
    assert ("write_file", "README.md") in [(t, i.get("path")) for t, i, _ in _steps(planner, ctx)]  # type: ignore[attr-defined]
    ctx = apply_step(ctx, "write_file", {"path": "README.md", "content": "# a\n"})
    assert [t for t, _, _ in _steps(planner, ctx)] == ["run_python", "validate"]
