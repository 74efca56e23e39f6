"""PythonFunctionEvaluator: HumanEval-style hidden tests against a candidate function.

The task carries the public part (``extra["entry_point"]``, ``extra["prompt"]``); the ground
truth workspace carries the hidden tests in ``tests.py`` (a ``check(candidate)`` function, as in
HumanEval).

The verdict is decided in this (trusted) process, which never runs candidate code, and the
hidden tests — with their expected values — never enter the candidate's process:

1. The tests run here with a recording proxy in place of the candidate's function
   (:mod:`~costeer_lab.evaluate._pyfunc_replay`); a *discovery* pass collects the calls they
   make, as plain data.
2. One sandbox run (the runner) imports the candidate's main file and makes those calls
   (:mod:`~costeer_lab.evaluate._pyfunc_runner`); the answers come back as plain data only
   (:mod:`~costeer_lab.evaluate._plaindata`), read defensively as the candidate's claims
   (:mod:`~costeer_lab.evaluate._pyfunc_answers`).
3. Repeat while the tests make new calls (arguments that depend on earlier answers), at most
   :data:`MAX_RUNS` runs; then *replay* the original tests on the answers: an
   ``AssertionError`` means failed, another exception error, completion passed.

How much the feedback tells the coder is ``settings.feedback_detail`` (see
:mod:`~costeer_lab.evaluate._pyfunc_feedback`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from costeer_lab._fingerprint import extract_errors
from costeer_lab.errors import ConfigurationError, InvalidInputError
from costeer_lab.evaluate._factor import (
    RunnerName,
    bounded,
    describe_run,
    infrastructure_failure,
    isolation_of,
    make_runner,
)
from costeer_lab.evaluate._protocol import Runner, RunOutcome
from costeer_lab.evaluate._pyfunc_answers import (
    MAX_ANSWER_BYTES,
    Answer,
    call_workspace,
    read_answers,
)
from costeer_lab.evaluate._pyfunc_feedback import Detail, Verdict, explain, fingerprint, guard
from costeer_lab.evaluate._pyfunc_proxy import Call
from costeer_lab.evaluate._pyfunc_replay import HiddenTests, PassResult
from costeer_lab.evaluate._pyfunc_runner import ANSWERS_FILE
from costeer_lab.records import SingleFeedback, Task, Workspace
from costeer_lab.settings import EvaluatorSettings, get_settings

__all__ = ["PythonFunctionEvaluator"]

#: Name of the hidden test file inside the ground-truth workspace.
GT_TESTS_FILE = "tests.py"
#: Sandbox runs of one evaluation (rounds of calls whose arguments depend on answers).
MAX_RUNS = 8
#: Distinct calls of the candidate's function in one evaluation.
MAX_CALLS = 10_000
#: Seed of the private ``random`` module of the hidden tests (the same in every pass).
TESTS_SEED = 0
_LOG = logging.getLogger(__name__)


class PythonFunctionEvaluator:
    """Run a task's hidden tests against the candidate's function.

    Without a ground truth (no tests), success means the main file loads and defines the
    entry point. See the module docstring for how the tests and the candidate are kept apart.

    Args:
        runner: ``"sandbox"`` (default), ``"inprocess"`` (trusted code only) or a runner object.
        settings: limits and feedback detail (default: the ``evaluator`` settings section).

    Example:
        >>> task = Task("demo/inc", "inc", "Add one.", extra={"entry_point": "inc"})
        >>> gt = Workspace({"main.py": "def inc(x):\\n    return x + 1\\n",
        ...                 "tests.py": "def check(c):\\n    assert c(1) == 2\\n"})
        >>> ev = PythonFunctionEvaluator(runner="inprocess")
        >>> fb = ev.evaluate(task, Workspace({"main.py": "def inc(x):\\n    return x\\n"}), gt)
        >>> fb.final_decision
        False
        >>> print(fb.return_checking)
        [FAIL] assertion failed: a hidden test rejected the result of inc(1)
          it returned: 1
    """

    def __init__(
        self,
        *,
        runner: RunnerName | Runner = "sandbox",
        settings: EvaluatorSettings | None = None,
    ) -> None:
        self.settings = settings or get_settings().evaluator
        self._runner_spec = runner
        self._runner_name: RunnerName = runner if isinstance(runner, str) else "sandbox"
        self._runner_obj: Runner | None = None if isinstance(runner, str) else runner
        self._lock = threading.Lock()

    def _runner(self) -> Runner:
        with self._lock:
            if self._runner_obj is None:
                self._runner_obj = make_runner(
                    self._runner_name,
                    self.settings,
                    self.settings.pyfunc_timeout_s,
                    packages=tuple(self.settings.pyfunc_packages),
                    max_output_file_bytes=MAX_ANSWER_BYTES,  # no more is ever parsed
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
        """Run the hidden tests; the feedback's detail follows ``settings.feedback_detail``.

        An exception of the trusted steps (replaying the tests, reading answers, a runner that
        raises) gives a "Not evaluated: the evaluation infrastructure failed" feedback, never a
        raise; a task without an entry point raises :class:`InvalidInputError`. The feedback
        is bounded (sections clipped, at most ``MAX_FINGERPRINTS`` fingerprints).
        """
        entry = task.extra.get("entry_point")
        if not isinstance(entry, str) or not entry:
            raise InvalidInputError(
                f"task {task.id!r} has no extra['entry_point']; expected the function name"
            )
        t0 = time.perf_counter()
        tests = None if gt_implementation is None else gt_implementation.files.get(GT_TESTS_FILE)
        prompt = task.extra.get("prompt")
        session = _Session(self, implementation, entry, prompt if isinstance(prompt, str) else "")
        try:
            verdict = session.verdict(tests)
            hidden = session.hidden
            if session.detail == "diagnostics" and hidden is not None:  # small domains
                verdict = guard(verdict, hidden.replay, session.memo, session.prompt, entry)
            feedback = session.feedback(verdict, time.perf_counter() - t0)
        except (InvalidInputError, ConfigurationError):
            raise
        except Exception as exc:  # the trusted steps failed: no verdict on the code
            _LOG.exception("PythonFunctionEvaluator failed on task %s", task.id)
            return infrastructure_failure(exc, type(self).__name__)
        return bounded(feedback)


class _Session:
    """One evaluation: the memo of answers and the sandbox runs made so far."""

    def __init__(
        self, ev: PythonFunctionEvaluator, implementation: Workspace, entry: str, prompt: str
    ) -> None:
        self.ev, self.implementation, self.entry, self.prompt = ev, implementation, entry, prompt
        self.detail: Detail = ev.settings.feedback_detail
        self.memo: dict[str, Answer] = {}
        self.hidden: HiddenTests | None = None
        self.runs: list[RunOutcome] = []
        self.tests_s = 0.0

    def verdict(self, tests: str | None) -> Verdict:
        """Discover, run, replay (see the module docstring)."""
        hidden: HiddenTests | None = None
        if tests is not None:
            try:
                hidden = HiddenTests(
                    tests,
                    self.prompt,
                    self.entry,
                    seed=TESTS_SEED,
                    max_calls=MAX_CALLS,
                    time_limit_s=self.ev.settings.pyfunc_timeout_s,
                )
            except (SyntaxError, ValueError) as exc:
                return Verdict("invalid", message=f"they do not compile: {exc}")
        self.hidden = hidden
        pending: tuple[Call, ...] = ()
        while True:
            if hidden is not None and not pending:
                found = self._timed(hidden.discover)
                if found.status == "need_calls":
                    pending = found.new_calls
                elif found.status != "passed":
                    return self._from_pass(found)
            if pending or not self.runs:
                if len(self.runs) >= MAX_RUNS:
                    return Verdict(
                        "invalid",
                        message=f"the tests needed more than {MAX_RUNS} rounds of calls "
                        "(arguments that depend on earlier answers)",
                    )
                stop = self._run(pending)
                if stop is not None:
                    return stop
                if pending:
                    pending = ()
                    continue  # discover again: new answers may lead to new calls
            if hidden is None:
                return Verdict("passed", has_tests=False)
            result = self._timed(hidden.replay)
            if result.status != "need_calls":
                return self._from_pass(result)
            pending = result.new_calls

    def _timed(self, run_pass: Callable[[Mapping[str, Answer]], PassResult]) -> PassResult:
        t0 = time.perf_counter()
        try:
            return run_pass(self.memo)
        finally:
            self.tests_s += time.perf_counter() - t0

    def _from_pass(self, result: PassResult) -> Verdict:
        status = {"no_answer": "no_result"}.get(result.status, result.status)
        return Verdict(status, result=result, message=result.message)

    def _run(self, calls: Sequence[Call]) -> Verdict | None:
        """Make ``calls`` in one run; record the answers. A verdict when loading failed."""
        workspace = call_workspace(
            self.implementation,
            self.entry,
            [c.encoded for c in calls],
            tracebacks=self.detail != "verdict",
        )
        outcome = self.ev._runner().run(workspace, collect=[ANSWERS_FILE])
        self.runs.append(outcome)
        report = read_answers(outcome.outputs.get(ANSWERS_FILE), len(calls))
        if report.status == "no_status":
            why = outcome.error or f"exit code {outcome.returncode}"
            return Verdict(
                "no_result",
                message=f"the run ended ({why}) before {self.implementation.main_file} "
                "finished loading",
            )
        if report.status != "loaded":
            return Verdict(report.status, message=report.error)
        unanswered = [i for i in range(len(calls)) if i not in report.answers]
        running = next((i for i in unanswered if i not in report.rejected), None)
        for i, call in enumerate(calls):
            answer = report.answers.get(i)
            if answer is None:
                if i in report.rejected:
                    why = "its answer line was invalid or repeated"
                elif report.refused:
                    why = report.refused
                else:
                    why = self._why_missing(i, running, calls, outcome)
                answer = Answer("missing", message=why)
            self.memo[call.key] = answer
        return None

    def _why_missing(
        self, i: int, running: int | None, calls: Sequence[Call], outcome: RunOutcome
    ) -> str:
        if outcome.ok:
            return "the candidate's process ended without answering it"
        why = outcome.error or f"exit code {outcome.returncode}"
        if i == running:
            return f"the run stopped while this call was running ({why})"
        other = calls[running].describe(self.entry) if running is not None else "another call"
        return f"the run stopped ({why}) before this call, while {other} was running"

    def feedback(self, verdict: Verdict, total_s: float) -> SingleFeedback:
        """The :class:`SingleFeedback` of a verdict."""
        described = [describe_run(o, self.ev.settings.max_feedback_chars) for o in self.runs]
        ran = bool(described) and all(ok for ok, _ in described)
        # the execution section shows the first run that failed, else the last one
        shown = next((i for i, (ok, _) in enumerate(described) if not ok), len(described) - 1)
        execution = described[shown][1] if described else "Not run."
        r = verdict.result
        loading = verdict.status in ("load_error", "missing_entry_point") or (
            verdict.status == "no_result" and r.call is None
        )
        if self.detail == "verdict" and not loading:
            execution = execution.split("\n", 1)[0]  # whether it ran, not what it printed
        fps = [fp for o in self.runs if o.stderr for fp, _ in extract_errors(o.stderr)]
        extra = fingerprint(verdict, self.detail, self.runs[shown].error if described else None)
        if extra:
            fps.append(extra)
        return SingleFeedback(
            execution=execution,
            return_checking=explain(
                verdict, self.detail, self.entry, self.implementation.main_file
            ),
            final_decision=ran and verdict.status == "passed",
            error_fingerprints=tuple(dict.fromkeys(fps)),
            timings={
                "run_s": sum(o.duration_s for o in self.runs),
                "tests_s": self.tests_s,
                "total_s": total_s,
            },
            details={
                "status": verdict.status,
                "line": r.line,
                "feedback_detail": self.detail,
                "calls": len(self.memo),
                "runs": len(self.runs),
                "isolation": isolation_of(self.runs[-1]) if self.runs else "",
            },
        )
