"""Issue 22 (4b, 5, 6): trusted failures are "not evaluated", transient reference failures are
retried, and a flood of errors gives bounded feedback and fingerprints.

Runners here are scripted fakes: the tests are about what the trusted process does with a
run's outcome, not about running code.
"""

from __future__ import annotations

import io
import string
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from costeer_lab.errors import GroundTruthError
from costeer_lab.evaluate import (
    EvaluatorSettings,
    FactorEvaluator,
    MultiEvaluator,
    PythonFunctionEvaluator,
)
from costeer_lab.evaluate import _factor as factor_module
from costeer_lab.evaluate import _pyfunc as pyfunc_module
from costeer_lab.records import SingleFeedback, Task, Workspace

NOT_EVALUATED = "Not evaluated: the evaluation infrastructure failed"
SECRET = "0.8123456789"  # stands for a ground-truth value inside an exception message


@dataclass
class Outcome:
    """The attributes of a run outcome the evaluators read."""

    returncode: int | None = 0
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    memory_exceeded: bool = False
    duration_s: float = 0.01
    outputs: Mapping[str, bytes] = field(default_factory=dict)
    error: str | None = None
    killed_signal: int | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and self.error is None


class Scripted:
    """A runner that answers each run with the next outcome of a script."""

    def __init__(self, *outcomes: Outcome | Exception) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0

    def run(
        self,
        workspace: Workspace,
        *,
        inputs: Mapping[str, str | Path] = {},
        collect: Sequence[str] = (),
    ) -> Outcome:
        step = self.outcomes[min(self.calls, len(self.outcomes) - 1)]
        self.calls += 1
        if isinstance(step, Exception):
            raise step
        return step


def factor_bytes(dates: pd.DatetimeIndex | None = None) -> bytes:
    dates = pd.bdate_range("2021-01-04", periods=5) if dates is None else dates
    idx = pd.MultiIndex.from_product([dates, ["A", "B"]], names=["datetime", "instrument"])
    buf = io.BytesIO()
    pd.DataFrame({"f": np.arange(len(idx), dtype=float)}, idx).to_parquet(buf)
    return buf.getvalue()


TRUTH = Outcome(outputs={"result.parquet": factor_bytes()})


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    path = tmp_path / "daily_pv.parquet"
    path.write_bytes(factor_bytes())
    return {"daily_pv.parquet": path}


def evaluator(inputs: dict[str, Path], candidate: Scripted, gt: Scripted) -> FactorEvaluator:
    return FactorEvaluator(inputs, runner=candidate, gt_runner=gt)


def fresh_gt() -> Workspace:
    """A reference workspace of its own (the ground-truth cache is per process)."""
    return Workspace({"main.py": f"# {uuid.uuid4()}\n"})


TASK = Task("t/f", "f", "a factor")


# -- 4b: a DST gap is the candidate's failure; a trusted exception is "not evaluated" --------
def test_a_dst_gap_level_gives_a_fail_feedback(inputs: dict[str, Path]) -> None:
    dates = pd.DatetimeIndex(
        ["2018-11-02 12:00", "2018-11-03 12:00", "2018-11-04 12:00", "2018-11-05 12:00"]
    ).tz_localize("America/Sao_Paulo")
    cand = Scripted(Outcome(outputs={"result.parquet": factor_bytes(dates)}))
    fb = evaluator(inputs, cand, Scripted(TRUTH)).evaluate(TASK, Workspace({}), fresh_gt())
    assert fb.final_decision is False
    assert "[FAIL] frequency: datetimes carry a time of day" in (fb.return_checking or "")
    assert "infrastructure_error" not in fb.details


def test_a_raising_trusted_step_of_the_factor_evaluator_is_not_evaluated(
    inputs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"truth value {SECRET}")

    monkeypatch.setattr(factor_module, "compare_to_truth", broken)
    cand = Scripted(TRUTH)
    fb = evaluator(inputs, cand, Scripted(TRUTH)).evaluate(TASK, Workspace({}), fresh_gt())
    assert fb.final_decision is False
    assert fb.execution.startswith(NOT_EVALUATED)
    assert fb.details["infrastructure_error"] == "FactorEvaluator: RuntimeError"
    assert SECRET not in str(fb.to_dict())
    assert fb.error_fingerprints == ()


def test_a_raising_trusted_step_of_the_pyfunc_evaluator_is_not_evaluated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError(SECRET)

    monkeypatch.setattr(pyfunc_module, "read_answers", broken)
    task = Task("d/inc", "inc", "Add one.", extra={"entry_point": "inc"})
    gt = Workspace({"tests.py": "def check(c):\n    assert c(1) == 2\n"})
    ev = PythonFunctionEvaluator(runner="inprocess")
    fb = ev.evaluate(task, Workspace({"main.py": "def inc(x):\n    return x + 1\n"}), gt)
    assert fb.final_decision is False and fb.execution.startswith(NOT_EVALUATED)
    assert fb.details["infrastructure_error"] == "PythonFunctionEvaluator: MemoryError"
    assert SECRET not in str(fb.to_dict())


class Raising:
    """An evaluator with a bug."""

    def evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None = None
    ) -> SingleFeedback:
        raise KeyError(SECRET)


def test_multi_evaluator_turns_an_evaluator_exception_into_not_evaluated() -> None:
    with MultiEvaluator(Raising(), kind="thread") as multi:
        (fb,) = multi.evaluate([TASK], [Workspace({})], [None])
    assert fb is not None and fb.final_decision is False
    assert fb.execution.startswith(NOT_EVALUATED)
    assert SECRET not in str(fb.to_dict())


# -- 5: only deterministic reference failures are cached -------------------------------------
ENOSPC = Outcome(
    returncode=1,
    stderr='Traceback (most recent call last):\n  File "main.py", line 9, in <module>\n'
    "OSError: [Errno 28] No space left on device\n",
)


@pytest.mark.parametrize(
    "failure",
    [
        ENOSPC,
        Outcome(returncode=1, stderr="MemoryError\n", memory_exceeded=True),
        Outcome(returncode=None, timed_out=True, error="wall-clock limit of 60 s exceeded"),
        Outcome(returncode=None, killed_signal=9, error="killed by SIGKILL"),
        Outcome(returncode=None, error="the sandbox worker died"),
        OSError(28, "No space left on device"),
    ],
    ids=["enospc", "memory", "timeout", "killed", "sandbox", "runner-raised"],
)
def test_an_infrastructure_failure_of_the_reference_is_retried(
    inputs: dict[str, Path], failure: Outcome | Exception
) -> None:
    gt_runner = Scripted(failure, TRUTH)
    ev = evaluator(inputs, Scripted(TRUTH), gt_runner)
    gt = fresh_gt()
    with pytest.raises(GroundTruthError):
        ev.ground_truth_result(gt)
    truth = ev.ground_truth_result(gt)  # the disk is free again: the reference runs again
    assert gt_runner.calls == 2 and len(truth) == 10
    fb = ev.evaluate(TASK, Workspace({}), gt)
    assert fb.final_decision is True and gt_runner.calls == 2  # now cached


def test_an_enospc_attempt_is_not_evaluated_and_the_next_one_is(inputs: dict[str, Path]) -> None:
    gt_runner = Scripted(ENOSPC, TRUTH)
    ev = evaluator(inputs, Scripted(TRUTH), gt_runner)
    gt = fresh_gt()
    first = ev.evaluate(TASK, Workspace({}), gt)
    assert first.execution.startswith(NOT_EVALUATED) and first.final_decision is False
    assert "not cached, run again" in first.details["infrastructure_error"]
    second = ev.evaluate(TASK, Workspace({}), gt)
    assert second.final_decision is True


def test_a_deterministic_reference_failure_is_cached(inputs: dict[str, Path]) -> None:
    broken = Outcome(
        returncode=1,
        stderr='Traceback (most recent call last):\n  File "main.py", line 3\n'
        "KeyError: 'close'\n",
    )
    gt_runner = Scripted(broken, TRUTH)
    ev = evaluator(inputs, Scripted(TRUTH), gt_runner)
    gt = fresh_gt()
    for _ in range(2):
        with pytest.raises(GroundTruthError):
            ev.ground_truth_result(gt)
    assert gt_runner.calls == 1


# -- 6: floods of errors ---------------------------------------------------------------------
def _name(i: int) -> str:
    letters = ""
    while True:
        letters = string.ascii_lowercase[i % 26] + letters
        i //= 26
        if not i:
            return f"Bad{letters.capitalize()}Error"


FLOOD = "\n".join(f"{_name(i)}: something failed" for i in range(38_000)) + (
    '\nTraceback (most recent call last):\n  File "main.py", line 1\nValueError: final\n'
)


def _feedback_chars(fb: SingleFeedback) -> int:
    return sum(len(p or "") for p in (fb.execution, fb.return_checking, fb.code)) + len(
        str(fb.details)
    )


def test_a_flood_of_distinct_errors_gives_few_fingerprints_factor(
    inputs: dict[str, Path],
) -> None:
    from costeer_lab.evaluate import _budget
    from costeer_lab.testing import _redteam

    ev = FactorEvaluator(
        inputs,
        runner=Scripted(Outcome(returncode=1, stderr=FLOOD)),
        gt_runner=Scripted(TRUTH),
        settings=EvaluatorSettings(max_feedback_chars=10**7),  # the section cap still holds
    )
    fb = ev.evaluate(TASK, Workspace({}), fresh_gt())
    assert fb.final_decision is False
    assert 1 <= len(fb.error_fingerprints) <= 20
    assert fb.error_fingerprints[0] == "ValueError: final"  # the error finally raised first
    assert fb.error_fingerprints[1] == "BadAError: something failed"  # then the first ones
    assert _feedback_chars(fb) <= _redteam.MAX_FEEDBACK_CHARS
    assert len(fb.execution) <= _budget.MAX_SECTION_CHARS + 100


def test_a_flood_of_distinct_errors_gives_few_fingerprints_pyfunc() -> None:
    from costeer_lab.testing import _redteam

    task = Task("d/inc", "inc", "Add one.", extra={"entry_point": "inc"})
    gt = Workspace({"tests.py": "def check(c):\n    assert c(1) == 2\n"})
    code = f"import sys\nsys.stderr.write({FLOOD!r})\ndef inc(x):\n    return x\n"
    fb = PythonFunctionEvaluator(runner="inprocess").evaluate(
        task, Workspace({"main.py": code}), gt
    )
    assert fb.final_decision is False
    assert 1 <= len(fb.error_fingerprints) <= 20
    assert _feedback_chars(fb) <= _redteam.MAX_FEEDBACK_CHARS


def test_extract_errors_is_capped_and_keeps_the_first_distinct_errors() -> None:
    from costeer_lab._fingerprint import MAX_FINGERPRINTS, extract_errors

    found = extract_errors(FLOOD)
    assert len(found) == MAX_FINGERPRINTS == 20
    assert [fp for fp, _ in found[1:4]] == [
        "BadAError: something failed",
        "BadBError: something failed",
        "BadCError: something failed",
    ]
    assert len(extract_errors(FLOOD, limit=None)) == 38_001
