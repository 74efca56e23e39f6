"""FactorEvaluator: run a candidate factor script and check its output against the truth.

Candidate contract: ``main.py`` runs in a fresh directory holding the input files (for
Alpha158: ``daily_pv.parquet``) and writes ``result.parquet``, a one-column float DataFrame
indexed by ``(datetime, instrument)``. A task may name another output file
(``task.extra["output_file"]``); one ending in ``.h5``/``.hdf5``/``.hdf`` is an HDF5 file
(``to_hdf``, one key) that is decoded *in the candidate's runner* (a sandbox), never in this
process (HDF5 readers unpickle object columns): a small trusted script reads it there and
writes Parquet, which this process then checks as usual.

Ground truth: the reference workspace is run through ``gt_runner`` — by default a sandbox of
its own, never the one candidates run in — once per process and inputs; the parsed result is
cached in memory keyed by (workspace content hash, input files' paths, sizes and mtimes). A
reference that fails is an infrastructure error of the experiment
(:class:`~costeer_lab.errors.GroundTruthError`): the attempt's feedback says only that it was
not evaluated, and ``details["infrastructure_error"]`` names the failure without any of the
reference's output (which could show its values); the full text goes to the log.

Only *deterministic* reference failures are cached (the reference ran and exited with an
error, or wrote no usable factor): they would fail the same way again. Failures that may be
the machine's — a time or memory limit (load, host memory pressure), a signal (OOM killer, a
dead worker), a sandbox that could not run it, a process limit, resource exhaustion in its
stderr (``ENOSPC``, ``ENOMEM``, ``MemoryError``, ...), an HDF5 output that could not be
decoded, or a runner that raised — are not: the next evaluation (another task's, another
arm's or a resumed run's) runs the reference again, so a full disk leaves tasks "Not
evaluated" only while it is full. The evolution loop stops a task at its first not-evaluated
attempt (:mod:`costeer_lab.evolve._agent`): a failing reference costs no retries.

Any other exception in the trusted steps of :meth:`FactorEvaluator.evaluate` (a bug, a
``MemoryError``) gives a "Not evaluated: the evaluation infrastructure failed" feedback too
(:func:`infrastructure_failure`), never a raise, while a candidate's unreadable or malformed
output stays an ordinary FAIL with feedback. Feedback is bounded: at most
:data:`~costeer_lab.evaluate._budget.MAX_SECTION_CHARS` characters per section and
:data:`~costeer_lab._fingerprint.MAX_FINGERPRINTS` error fingerprints.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from costeer_lab._fingerprint import cap_fingerprints, error_fingerprint, extract_errors
from costeer_lab.errors import ConfigurationError, GroundTruthError, InvalidInputError
from costeer_lab.evaluate._budget import clip
from costeer_lab.evaluate._factor_checks import FormatReport, compare_to_truth, read_factor
from costeer_lab.evaluate._factor_hdf import decode_output, is_hdf
from costeer_lab.evaluate._factor_rdagent import rdagent_measures
from costeer_lab.evaluate._protocol import InProcessRunner, Runner, RunOutcome
from costeer_lab.records import SingleFeedback, Task, Workspace
from costeer_lab.settings import EvaluatorSettings, get_settings

__all__ = [
    "FactorEvaluator",
    "describe_run",
    "error_line",
    "infrastructure_failure",
    "isolation_of",
    "make_runner",
    "not_evaluated",
    "transient_failure",
]

RunnerName = Literal["sandbox", "inprocess"]
_LOG = logging.getLogger(__name__)
_GT_CACHE: OrderedDict[tuple[str, str, str], pd.Series | GroundTruthError] = OrderedDict()
_GT_LOCK = threading.Lock()
_GT_CACHE_SIZE = 256
#: Signs in a reference's stderr that it failed for want of a machine resource, not because of
#: its code: a full disk or quota, no memory, no file descriptors, no processes.
_RESOURCE_ERRORS = re.compile(
    r"No space left on device|Disk quota exceeded|Cannot allocate memory|Out of memory|"
    r"MemoryError|Too many open files|Resource temporarily unavailable|"
    r"\[Errno (?:11|12|23|24|28|122)\]|ENOSPC|ENOMEM|EDQUOT|EMFILE|ENFILE|EAGAIN"
)

#: Cap of a factor output file (HDF5, or the Parquet it is decoded to) read back from the
#: sandbox: ``max_output_rows`` (5M) rows of a (datetime, instrument) series fit well within.
_FACTOR_OUTPUT_BYTES = 256 * 1024 * 1024


#: Characters kept of a reference's error line (:attr:`GroundTruthError.cause`).
_CAUSE_CHARS = 200
_ERROR_LINE = re.compile(r"^\s*[\w.]*(Error|Exception)\b")


def error_line(stderr: str) -> str:
    r"""The last ``SomeError: …`` line of a run's stderr (at most 200 characters), or ``""``.

    Example:
        >>> error_line("Traceback ...\n  File x\nKeyError: '$money'\n")
        "KeyError: '$money'"
    """
    found = [ln.strip() for ln in (stderr or "").splitlines() if _ERROR_LINE.match(ln)]
    return found[-1][:_CAUSE_CHARS] if found else ""


def make_runner(
    name: RunnerName,
    settings: EvaluatorSettings,
    timeout_s: float,
    packages: tuple[str, ...] | None = None,
    max_output_file_bytes: int | None = None,
) -> Runner:
    """Build a runner by name: ``"sandbox"`` (isolated, limits from settings; ``packages``:
    the libraries runs may import, default the sandbox setting; ``max_output_file_bytes``:
    the cap of each output file read back, default the sandbox's 256 MiB budget) or
    ``"inprocess"`` (trusted code only)."""
    if name == "inprocess":
        return InProcessRunner()
    if name != "sandbox":
        raise InvalidInputError(f"unknown runner {name!r}; expected 'sandbox' or 'inprocess'")
    module = importlib.import_module("costeer_lab.sandbox")
    sandbox_cls, limits_cls = getattr(module, "Sandbox", None), getattr(module, "Limits", None)
    if sandbox_cls is None or limits_cls is None:
        raise ConfigurationError("costeer_lab.sandbox.Sandbox is not available")
    limits = limits_cls(wall_time_s=timeout_s, cpu_time_s=timeout_s, memory_mb=settings.memory_mb)
    caps = (
        {} if max_output_file_bytes is None else {"max_output_file_bytes": max_output_file_bytes}
    )
    runner: Runner = sandbox_cls(limits, packages=packages, **caps)
    return runner


def isolation_of(outcome: RunOutcome) -> str:
    """The isolation level a run had (``"inprocess"`` for the trusted in-process runner)."""
    return str(getattr(outcome, "isolation", "") or "inprocess")


def not_evaluated(error: GroundTruthError, timings: dict[str, float]) -> SingleFeedback:
    """Feedback of an attempt whose reference failed: no verdict on the code, no text of the
    reference; the failure is recorded in ``details["infrastructure_error"]``."""
    return SingleFeedback(
        execution="Not evaluated: the evaluation infrastructure failed (the reference "
        "implementation could not be computed). This says nothing about the code.",
        return_checking="not checked",
        final_decision=False,
        timings=timings,
        details={"infrastructure_error": str(error)},
    )


def infrastructure_failure(
    exc: BaseException, evaluator: str, timings: Mapping[str, float] | None = None
) -> SingleFeedback:
    """Feedback of an attempt whose evaluation failed in the trusted process (an exception of
    ``evaluator``'s own steps): no verdict on the code. Only the exception's type is recorded
    (``details["infrastructure_error"]``); its message, which may quote the ground truth, goes
    to the log only."""
    return SingleFeedback(
        execution="Not evaluated: the evaluation infrastructure failed (an internal error of "
        f"{evaluator}: {type(exc).__name__}). This says nothing about the code.",
        return_checking="not checked",
        final_decision=False,
        timings=dict(timings or {}),
        details={"infrastructure_error": f"{evaluator}: {type(exc).__name__}"},
    )


def transient_failure(outcome: RunOutcome) -> str | None:
    """Why a failed reference run may be the machine's failure rather than its code's (then it
    is retried, never cached), or ``None`` when it failed deterministically."""
    if outcome.timed_out:
        return "time limit"
    if outcome.memory_exceeded:
        return "memory limit"
    if getattr(outcome, "killed_signal", None) is not None or outcome.returncode is None:
        return "killed or not started"
    if getattr(outcome, "process_limit_hit", False):
        return "process limit"
    if _RESOURCE_ERRORS.search(outcome.stderr or "") or _RESOURCE_ERRORS.search(
        outcome.error or ""
    ):
        return "resource exhausted"
    return None


def describe_run(outcome: RunOutcome, max_chars: int) -> tuple[bool, str]:
    """(ran to completion, execution section text) of a run."""
    ran = (
        outcome.returncode == 0
        and not outcome.timed_out
        and not outcome.memory_exceeded
        and getattr(outcome, "killed_signal", None) is None
    )
    # No durations in the text: feedback becomes knowledge content, which must not depend on
    # machine speed (a resumed run reproduces an uninterrupted one). Times go to ``timings``.
    if ran:
        text = "Executed successfully."
    elif outcome.timed_out:
        text = f"Execution failed: time limit hit ({outcome.error or 'timeout'})."
    elif outcome.memory_exceeded:
        text = "Execution failed: memory limit exceeded."
    else:
        why = outcome.error or f"exit code {outcome.returncode}"
        text = f"Execution failed: {why}."
    for label, stream in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
        if stream.strip():
            tail = stream if len(stream) <= max_chars else "…" + stream[-max_chars:]
            text += f"\n--- {label} ---\n{tail.rstrip()}"
    return ran, text


def _clean(metrics: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in metrics.items()
    }


class FactorEvaluator:
    """Evaluate factor implementations (see the module docstring for the contract).

    Args:
        inputs: files the candidate gets (name → path), e.g. ``suite.inputs``.
        runner: runner of candidate code: ``"sandbox"`` (default), ``"inprocess"`` (trusted
            code only) or any object with the :class:`Runner` interface.
        gt_runner: runner of the ground truth (default: the same kind as ``runner``, but a
            separate instance: references never run in a sandbox candidates use).
        settings: thresholds (default: the ``evaluator`` settings section).
        output_file: name of the file the candidate writes.

    Example:
        >>> from costeer_lab.suites import load_suite
        >>> suite = load_suite("alpha158", n_instruments=5, n_days=60)  # doctest: +SKIP
        >>> ev = suite.evaluator(runner="inprocess")                      # doctest: +SKIP
        >>> fb = ev.evaluate(suite.tasks[0], suite.ground_truth(suite.tasks[0].id),
        ...                  suite.ground_truth(suite.tasks[0].id))      # doctest: +SKIP
        >>> fb.final_decision                                            # doctest: +SKIP
        True
    """

    def __init__(
        self,
        inputs: Mapping[str, str | Path],
        *,
        runner: RunnerName | Runner = "sandbox",
        gt_runner: RunnerName | Runner | None = None,
        settings: EvaluatorSettings | None = None,
        output_file: str = "result.parquet",
    ) -> None:
        self.inputs = {k: Path(v) for k, v in inputs.items()}
        missing = [str(p) for p in self.inputs.values() if not p.is_file()]
        if missing:
            raise InvalidInputError(f"FactorEvaluator inputs do not exist: {missing}")
        self.settings = settings or get_settings().evaluator
        self.output_file = output_file
        self._runner_spec = runner
        self._gt_runner_spec = runner if gt_runner is None else gt_runner
        self._runners: dict[tuple[str, str], Runner] = {}
        self._lock = threading.Lock()

    def _runner(self, which: str) -> Runner:
        spec = self._runner_spec if which == "candidate" else self._gt_runner_spec
        if not isinstance(spec, str):
            return spec
        with self._lock:
            if (which, spec) not in self._runners:
                self._runners[which, spec] = make_runner(
                    spec,
                    self.settings,
                    self.settings.factor_timeout_s,
                    packages=tuple(self.settings.factor_packages),
                    max_output_file_bytes=_FACTOR_OUTPUT_BYTES,
                )
            return self._runners[which, spec]

    def _decoded(
        self, data: bytes, name: str, which: str, max_rows: int | None = None
    ) -> tuple[bytes, str | None]:
        """``(Parquet bytes, problem)`` of an output file: HDF5 files are decoded in the
        ``which`` runner (see the module docstring); other files are returned as they are."""
        if not is_hdf(name):
            return data, None
        rows = max_rows or self.settings.max_output_rows
        return decode_output(self._runner(which), data, name, max_rows=rows)

    def to_spec(self) -> dict[str, Any]:
        """JSON description to rebuild this evaluator in another process."""
        if not isinstance(self._runner_spec, str) or not isinstance(self._gt_runner_spec, str):
            raise InvalidInputError("FactorEvaluator with a runner object cannot be sent as JSON")
        return {
            "kind": "factor",
            "inputs": {k: str(v) for k, v in self.inputs.items()},
            "runner": self._runner_spec,
            "gt_runner": self._gt_runner_spec,
            "settings": self.settings.model_dump(),
            "output_file": self.output_file,
        }

    def close(self) -> None:
        """Close the runners this evaluator created (sandbox workers)."""
        with self._lock:
            for r in self._runners.values():
                close = getattr(r, "close", None)
                if callable(close):
                    close()
            self._runners.clear()

    def _inputs_key(self) -> str:
        parts = []
        for name, p in sorted(self.inputs.items()):
            st = p.stat()
            parts.append(f"{name}={p.resolve()}:{st.st_size}:{st.st_mtime_ns}")
        return "|".join(parts)

    def output_of(self, task: Task | None) -> str:
        """The file a task's candidate writes: ``task.extra["output_file"]`` or the default."""
        name = task.extra.get("output_file") if task is not None else None
        return name if isinstance(name, str) and name else self.output_file

    def ground_truth_result(self, gt: Workspace, output_file: str | None = None) -> pd.Series:
        """The parsed ground-truth factor (cached), infinities treated as the
        ``factor_infinite`` setting says.

        Raises:
            GroundTruthError: the reference failed or wrote no usable factor (cached when the
                failure is deterministic, see the module docstring).
        """
        return _finite(self.exact_ground_truth(gt, output_file), self.settings.factor_infinite)

    def exact_ground_truth(self, gt: Workspace, output_file: str | None = None) -> pd.Series:
        """The parsed ground-truth factor with its infinities kept (what the cache holds, and
        what RD-Agent's measures compare with).

        Raises:
            GroundTruthError: as :meth:`ground_truth_result`.
        """
        output = output_file or self.output_file
        key = (gt.content_hash, self._inputs_key(), f"{output}:exact")
        with _GT_LOCK:
            if key in _GT_CACHE:
                _GT_CACHE.move_to_end(key)
                cached = _GT_CACHE[key]
                if isinstance(cached, GroundTruthError):
                    raise cached
                return cached
        result, deterministic = self._run_reference(gt, output)
        if deterministic:
            with _GT_LOCK:
                _GT_CACHE[key] = result
                while len(_GT_CACHE) > _GT_CACHE_SIZE:
                    _GT_CACHE.popitem(last=False)
        if isinstance(result, GroundTruthError):
            raise result
        return result

    def _run_reference(
        self, gt: Workspace, output: str
    ) -> tuple[pd.Series | GroundTruthError, bool]:
        """``(the parsed truth or its error, whether it may be cached)``: see the module
        docstring for which failures are deterministic."""
        try:
            outcome = self._runner("gt").run(gt, inputs=self.inputs, collect=[output])
        except Exception as exc:  # the runner itself failed: the machine's, retried
            _LOG.exception("ground truth could not be run")
            return GroundTruthError(
                f"the reference could not be run ({type(exc).__name__})"
            ), False
        data = outcome.outputs.get(output)
        if data is None:
            why = outcome.error or f"exit code {outcome.returncode}"
            _LOG.error("ground truth failed (%s):\n%s", why, describe_run(outcome, 4000)[1])
            transient = transient_failure(outcome)
            if transient is not None:
                why = f"{why}; {transient}: not cached, run again at its next evaluation"
            error = GroundTruthError(
                f"the reference implementation failed ({why})", cause=error_line(outcome.stderr)
            )
            return error, transient is None
        data, problem = self._decoded(data, output, "gt")
        rep = _read(data, output, problem, infinite="exact")
        if rep.ok and rep.series is not None:
            return rep.series, True
        _LOG.error("ground truth output unusable:\n%s", "\n".join(rep.lines))
        cause = "; ".join(rep.failures)[:_CAUSE_CHARS]
        return GroundTruthError(
            "the reference implementation wrote no usable factor", cause=cause
        ), (
            problem is None  # a failed HDF5 decoding run may be the machine's: retried
        )

    def evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None = None
    ) -> SingleFeedback:
        """Run ``implementation`` and check its factor; see the class docstring. Never raises
        for a failure of the evaluation itself (see the module docstring); configuration
        errors (:class:`InvalidInputError`, :class:`ConfigurationError`) are raised."""
        try:
            feedback = self._evaluate(task, implementation, gt_implementation)
        except (InvalidInputError, ConfigurationError):
            raise
        except GroundTruthError as exc:
            return not_evaluated(exc, {})
        except Exception as exc:
            _LOG.exception("FactorEvaluator failed on task %s", task.id)
            return infrastructure_failure(exc, type(self).__name__)
        return bounded(feedback)

    def _evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None
    ) -> SingleFeedback:
        s = self.settings
        output = self.output_of(task)
        t0 = time.perf_counter()
        outcome = self._runner("candidate").run(
            implementation, inputs=self.inputs, collect=[output]
        )
        timings = {"run_s": outcome.duration_s}
        isolation: dict[str, Any] = {
            "isolation": isolation_of(outcome),
            "feedback_detail": s.feedback_detail,
        }
        ran, execution = describe_run(outcome, s.max_feedback_chars)
        isolation["ran"] = ran
        fps = [fp for fp, _ in extract_errors(outcome.stderr)] if outcome.stderr else []
        if not ran:
            if not fps:
                fps.append(error_fingerprint(outcome.error or "ExecutionError: run failed"))
            return SingleFeedback(
                execution=execution,
                return_checking="not checked: the code did not run to completion",
                final_decision=False,
                error_fingerprints=tuple(dict.fromkeys(fps)),
                timings=timings,
                details=isolation,
            )
        data = outcome.outputs.get(output)
        if data is None:
            msg = (
                f"output: {output} was not written; write the factor to "
                f"{output} in the working directory"
            )
            return SingleFeedback(
                execution=execution,
                return_checking=f"[FAIL] {msg}",
                final_decision=False,
                error_fingerprints=(error_fingerprint(f"FactorOutputError: {msg}"),),
                timings=timings,
                details=isolation,
            )
        max_rows = s.max_output_rows
        truth: pd.Series | None = None
        exact_truth: pd.Series | None = None
        if gt_implementation is not None:  # the truth bounds what is worth decoding
            t1 = time.perf_counter()
            try:
                exact_truth = self.exact_ground_truth(gt_implementation, output)
                truth = _finite(exact_truth, s.factor_infinite)
            except GroundTruthError as exc:
                return dataclasses.replace(
                    not_evaluated(exc, timings),
                    details={**isolation, "infrastructure_error": str(exc)},
                )
            timings["ground_truth_s"] = time.perf_counter() - t1
            max_rows = min(max_rows, 4 * len(truth) + 10_000)
        data, problem = self._decoded(data, output, "candidate", max_rows)
        rep = _read(data, output, problem, max_rows=max_rows, infinite=s.factor_infinite)
        lines, failures = list(rep.lines), list(rep.failures)
        details: dict[str, Any] = dict(isolation)
        details["format_ok"] = rep.ok
        details["rd_run_ok"] = rep.frame is not None
        if rep.frame is not None and exact_truth is not None:  # hidden: details only
            details.update(_clean(rdagent_measures(rep.frame, exact_truth)))
        decision = rep.ok
        mismatch = ""
        if rep.ok and rep.series is not None and truth is not None:
            rule = task.extra.get("acceptance")
            cmp = compare_to_truth(
                rep.series, truth, s, acceptance=rule if isinstance(rule, str) else None
            )
            lines += cmp.lines
            failures += cmp.failures
            details.update(_clean(cmp.metrics))
            decision, mismatch = cmp.decision, cmp.mismatch
        elif rep.ok and gt_implementation is None:
            lines.append("decision: SUCCESS (no ground truth; format checks passed)")
        timings["total_s"] = time.perf_counter() - t0
        if not decision and mismatch:  # one fingerprint per kind of value mistake
            fps.append(error_fingerprint(f"FactorMismatchError: {mismatch.replace('_', ' ')}"))
            failures = list(rep.failures)
        if not decision:
            fps += [error_fingerprint(f"FactorCheckError: {f}") for f in failures]
        feedback = SingleFeedback(
            execution=execution,
            return_checking="\n".join(lines),
            final_decision=decision,
            error_fingerprints=tuple(dict.fromkeys(fps)),
            timings=timings,
            details=details,
        )
        return _apply_feedback_detail(feedback, s.feedback_detail, rep.failures)


def bounded(fb: SingleFeedback) -> SingleFeedback:
    """``fb`` with its text sections clipped to ``MAX_SECTION_CHARS`` and at most
    ``MAX_FINGERPRINTS`` error fingerprints (the first distinct ones)."""
    return dataclasses.replace(
        fb,
        execution=clip(fb.execution or ""),
        return_checking=None if fb.return_checking is None else clip(fb.return_checking),
        code=None if fb.code is None else clip(fb.code),
        error_fingerprints=cap_fingerprints(fb.error_fingerprints),
    )


def _finite(series: pd.Series, infinite: str) -> pd.Series:
    """``series`` with +-inf as NaN when ``infinite`` is ``"as_nan"`` (see :func:`read_factor`)."""
    if infinite == "as_nan" and np.isinf(series.to_numpy(float)).any():
        return series.replace([np.inf, -np.inf], np.nan)
    return series


def _read(data: bytes, name: str, problem: str | None, **options: Any) -> FormatReport:
    """The format report of an output (a failed report naming ``problem`` when set)."""
    if problem is None:
        return read_factor(data, name, **options)
    rep = FormatReport(None)
    rep.fail(problem)
    return rep


def _apply_feedback_detail(
    fb: SingleFeedback, detail: str, format_failures: Sequence[str]
) -> SingleFeedback:
    """``detail == "verdict"``: ``return_checking`` keeps only the decision line and the format
    failures (no comparison with the ground truth); other levels leave ``fb`` as it is."""
    if detail != "verdict" or not fb.return_checking:
        return fb
    kept = {f"[FAIL] {f}" for f in format_failures}
    lines = [ln for ln in fb.return_checking.splitlines() if ln in kept]
    decision = [ln for ln in fb.return_checking.splitlines() if ln.startswith("decision:")]
    if not fb.final_decision:  # the kind of mismatch would describe the truth
        decision = []
    lines += decision or [f"decision: {'SUCCESS' if fb.final_decision else 'FAIL'}"]
    return dataclasses.replace(fb, return_checking="\n".join(lines))
