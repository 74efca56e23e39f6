"""PythonFunctionEvaluator: HumanEval-style hidden tests against a candidate function.

The task carries the public part (``extra["entry_point"]``, ``extra["prompt"]``); the ground
truth workspace carries the hidden tests in ``tests.py`` (a ``check(candidate)`` function, as in
HumanEval). The candidate's files, the tests and a small harness run together in the runner
(the sandbox by default); the harness reports which assertion failed, the value its left side
evaluated to, and the traceback.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from costeer_lab._fingerprint import error_fingerprint, extract_errors
from costeer_lab._records import SingleFeedback, Task, Workspace
from costeer_lab.errors import InvalidInputError
from costeer_lab.evaluate._factor import RunnerName, describe_run, make_runner
from costeer_lab.evaluate._protocol import Runner
from costeer_lab.evaluate._pyfunc_harness import (
    CONFIG_FILE,
    HARNESS_FILE,
    HARNESS_SOURCE,
    RESULT_FILE,
    TESTS_FILE,
)
from costeer_lab.evaluate._settings import EvaluatorSettings, evaluator_settings

__all__ = ["PythonFunctionEvaluator"]

#: Name of the hidden test file inside the ground-truth workspace.
GT_TESTS_FILE = "tests.py"


class PythonFunctionEvaluator:
    """Run a task's hidden tests against the candidate's function.

    Without a ground truth (no tests), success means the main file loads and defines the
    entry point.

    Args:
        runner: ``"sandbox"`` (default), ``"inprocess"`` (trusted code only) or a runner object.
        settings: limits and feedback size (default: the ``evaluator`` settings section).

    Example:
        >>> task = Task("demo/inc", "inc", "Add one.", extra={"entry_point": "inc"})
        >>> gt = Workspace({"main.py": "def inc(x):\\n    return x + 1\\n",
        ...                 "tests.py": "def check(c):\\n    assert c(1) == 2\\n"})
        >>> ev = PythonFunctionEvaluator(runner="inprocess")
        >>> ev.evaluate(task, Workspace({"main.py": "def inc(x):\\n    return x\\n"}), gt
        ...             ).final_decision
        False
    """

    def __init__(
        self,
        *,
        runner: RunnerName | Runner = "sandbox",
        settings: EvaluatorSettings | None = None,
    ) -> None:
        self.settings = settings or evaluator_settings()
        self._runner_spec = runner
        self._runner_name: RunnerName = runner if isinstance(runner, str) else "sandbox"
        self._runner_obj: Runner | None = None if isinstance(runner, str) else runner
        self._lock = threading.Lock()

    def _runner(self) -> Runner:
        with self._lock:
            if self._runner_obj is None:
                self._runner_obj = make_runner(
                    self._runner_name, self.settings, self.settings.pyfunc_timeout_s
                )
            return self._runner_obj

    def to_spec(self) -> dict[str, Any]:
        """JSON description to rebuild this evaluator in another process."""
        if not isinstance(self._runner_spec, str):
            raise InvalidInputError("evaluator with a runner object cannot be sent as JSON")
        return {
            "kind": "pyfunc",
            "runner": self._runner_spec,
            "settings": self.settings.model_dump(),
        }

    def close(self) -> None:
        """Close the runner this evaluator created."""
        with self._lock:
            if isinstance(self._runner_spec, str) and self._runner_obj is not None:
                close = getattr(self._runner_obj, "close", None)
                if callable(close):
                    close()
                self._runner_obj = None

    def evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None = None
    ) -> SingleFeedback:
        """Run the hidden tests; the feedback names the failing assertion."""
        entry = task.extra.get("entry_point")
        if not isinstance(entry, str) or not entry:
            raise InvalidInputError(
                f"task {task.id!r} has no extra['entry_point']; expected the function name"
            )
        tests = None if gt_implementation is None else gt_implementation.files.get(GT_TESTS_FILE)
        files = dict(implementation.files)
        config = {
            "main_file": implementation.main_file,
            "entry_point": entry,
            "has_tests": tests is not None,
        }
        files.update({HARNESS_FILE: HARNESS_SOURCE, CONFIG_FILE: json.dumps(config)})
        if tests is not None:
            files[TESTS_FILE] = tests
        t0 = time.perf_counter()
        outcome = self._runner().run(Workspace(files, HARNESS_FILE), collect=[RESULT_FILE])
        ran, execution = describe_run(outcome, self.settings.max_feedback_chars)
        fps = [fp for fp, _ in extract_errors(outcome.stderr)] if outcome.stderr else []
        raw = outcome.outputs.get(RESULT_FILE)
        result: dict[str, Any] = {}
        if raw is not None:
            try:
                result = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                result = {}
        status = result.get("status", "no_result")
        checking = _explain(status, result, entry, implementation.main_file, tests is not None)
        decision = ran and status == "passed"
        if status == "no_result" and not fps:
            fps.append(error_fingerprint(outcome.error or "ExecutionError: no test result"))
        if status == "assertion_failed":
            fps.append(error_fingerprint(f"AssertionError: {result.get('statement', '')}"))
        return SingleFeedback(
            execution=execution,
            return_checking=checking,
            final_decision=decision,
            error_fingerprints=tuple(dict.fromkeys(fps)),
            timings={"run_s": outcome.duration_s, "total_s": time.perf_counter() - t0},
            details={"status": status, "line": result.get("line")},
        )


def _explain(
    status: str, result: dict[str, Any], entry: str, main_file: str, has_tests: bool
) -> str:
    where = f" (hidden test line {result['line']})" if result.get("line") else ""
    if status == "passed":
        return (
            "[ok] all hidden tests passed"
            if has_tests
            else (f"[ok] {main_file} defines {entry}() (no hidden tests given)")
        )
    if status == "assertion_failed":
        text = f"[FAIL] assertion failed{where}: {result.get('statement')}"
        if result.get("left") is not None:
            text += f"\n  left-hand side evaluated to: {result['left']}"
        if result.get("message"):
            text += f"\n  message: {result['message']}"
        return text
    if status == "error":
        return f"[FAIL] an exception was raised while testing{where}: {result.get('error')}" + (
            f"\n  in: {result['statement']}" if result.get("statement") else ""
        )
    if status == "load_error":
        return f"[FAIL] {main_file} could not be loaded: {result.get('error')}"
    if status == "missing_entry_point":
        return f"[FAIL] {main_file} does not define a function named {entry!r}"
    return "[FAIL] the tests did not report a result (the run was killed or timed out)"
