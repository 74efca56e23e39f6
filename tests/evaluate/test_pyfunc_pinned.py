"""What the documentation of PythonFunctionEvaluator promises, pinned through its public API:
a candidate whose process fails does not pass, even when every hidden test got its answer."""

from __future__ import annotations

from costeer_lab.evaluate import PythonFunctionEvaluator
from costeer_lab.records import Task, Workspace

TASK = Task("t/f", "f", "Return x plus one.", extra={"entry_point": "f"})
REFERENCE = Workspace(
    {
        "main.py": "def f(x):\n    return x + 1\n",
        "tests.py": "def check(c):\n    assert c(1) == 2\n    assert c(5) == 6\n",
    }
)
RIGHT = "def f(x):\n    return x + 1\n"


def test_a_run_that_exits_badly_after_answering_every_test_is_not_a_success() -> None:
    # the answers are right, but the process then exits with code 3
    bad_exit = "import atexit, os\natexit.register(os._exit, 3)\n" + RIGHT
    evaluator = PythonFunctionEvaluator()
    feedback = evaluator.evaluate(TASK, Workspace({"main.py": bad_exit}), REFERENCE)
    assert feedback.details["status"] == "passed"  # every hidden test had its right answer
    assert feedback.execution.startswith("Execution failed: exit code 3")
    assert feedback.final_decision is False and not feedback.succeeded
    # the same answers from a process that ends cleanly pass
    clean = evaluator.evaluate(TASK, Workspace({"main.py": RIGHT}), REFERENCE)
    assert clean.final_decision is True
