"""MultiEvaluator: parallel evaluation (processes and threads), merging, skipped tasks."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.evaluate import (
    Evaluator,
    FactorEvaluator,
    MultiEvaluator,
    PythonFunctionEvaluator,
    evaluator_from_spec,
)
from costeer_lab.records import SingleFeedback, Task, Workspace
from costeer_lab.suites import alpha158_suite

INC = Task("d/inc", "inc", "Add one.", extra={"entry_point": "inc"})
INC_GT = Workspace({"tests.py": "def check(c):\n    assert c(1) == 2\n    assert c(-1) == 0\n"})
GOOD = Workspace({"main.py": "def inc(x):\n    return x + 1\n"})
BAD = Workspace({"main.py": "def inc(x):\n    return x + 2\n"})


class LengthLimit:
    """A custom evaluator without to_spec(): code longer than ``limit`` characters fails."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None = None
    ) -> SingleFeedback:
        ok = len(implementation.code) <= self.limit
        return SingleFeedback(code=f"{len(implementation.code)} characters", final_decision=ok)


def test_threads_merge_evaluators_and_skip_none() -> None:
    evaluators: list[Evaluator] = [PythonFunctionEvaluator(runner="inprocess"), LengthLimit(40)]
    with MultiEvaluator(evaluators) as multi:
        assert multi.kind == "thread"  # LengthLimit cannot travel as JSON
        fb = multi.evaluate([INC, INC, INC], [GOOD, BAD, None], [INC_GT, INC_GT, INC_GT])
    assert len(fb) == 3 and fb[2] is None
    assert fb[0] is not None and fb[0].final_decision is True
    assert fb[0].code == f"{len(GOOD.code)} characters"
    assert fb[1] is not None and fb[1].final_decision is False
    assert "assertion failed" in (fb[1].return_checking or "")
    assert not fb.finished()
    with MultiEvaluator([LengthLimit(5)], kind="thread") as multi:
        short = multi.evaluate([INC], [GOOD])
    assert short[0] is not None and short[0].final_decision is False


def test_process_pool_runs_factor_jobs_as_json(tmp_path: Path) -> None:
    suite = alpha158_suite(6, 60, seed=3, cache_dir=tmp_path)
    ev = suite.evaluator(runner="inprocess")
    assert isinstance(ev, FactorEvaluator)
    names = ["MA5", "KMID", "RSQR10"]
    tasks = [suite.task(f"alpha158/{n}") for n in names]
    gts = [suite.ground_truth(t.id) for t in tasks]
    impls: list[Workspace | None] = [
        gts[0],
        gts[1],
        Workspace({"main.py": "raise ValueError('x')"}),
    ]
    with MultiEvaluator(ev, max_workers=2) as multi:
        assert multi.kind == "process"
        fb = multi.evaluate(tasks, impls, gts)
    decisions = [None if f is None else f.final_decision for f in fb]
    assert decisions == [True, True, False]
    assert fb[2] is not None and "ValueError: x" in fb[2].execution


def test_any_executor_is_accepted_and_left_open() -> None:
    with ThreadPoolExecutor(2) as pool:
        multi = MultiEvaluator(PythonFunctionEvaluator(runner="inprocess"), executor=pool)
        assert multi.evaluate([INC], [GOOD], [INC_GT]).finished()
        multi.close()
        assert pool.submit(lambda: 1).result() == 1  # not shut down by the MultiEvaluator


def test_errors() -> None:
    with pytest.raises(InvalidInputError, match="same length"):
        MultiEvaluator(LengthLimit(1), kind="thread").evaluate([INC], [GOOD, GOOD])
    with pytest.raises(InvalidInputError, match="at least one evaluator"):
        MultiEvaluator([])
    with ProcessPoolExecutor(1) as pool, pytest.raises(InvalidInputError, match="to_spec"):
        MultiEvaluator(LengthLimit(1), executor=pool)
    with pytest.raises(InvalidInputError, match="unknown evaluator kind"):
        evaluator_from_spec({"kind": "nope"})


def test_specs_round_trip() -> None:
    ev = PythonFunctionEvaluator(runner="inprocess")
    again = evaluator_from_spec(ev.to_spec())
    assert isinstance(again, PythonFunctionEvaluator) and again.to_spec() == ev.to_spec()


def test_evaluate_many_is_the_step_interface() -> None:
    with MultiEvaluator(PythonFunctionEvaluator(runner="inprocess"), kind="thread") as multi:
        out = multi.evaluate_many([INC, INC], [GOOD, BAD], [INC_GT, INC_GT])
    assert [f.final_decision for f in out] == [True, False]
