"""Every Alpha158 ground truth passes its own evaluator (in-process: all 158; sandbox: some)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from costeer_lab.evaluate import FactorEvaluator
from costeer_lab.suites import Suite


def test_all_158_ground_truths_pass_in_process(small_alpha: Suite) -> None:
    evaluator = small_alpha.evaluator(runner="inprocess")
    assert isinstance(evaluator, FactorEvaluator)
    failed = {}
    for task in small_alpha.tasks:
        gt = small_alpha.ground_truth(task.id)
        fb = evaluator.evaluate(task, gt, gt)
        if not fb.final_decision:
            failed[task.id] = str(fb)
        else:
            assert fb.details["equal_value_ratio"] == 1.0
            assert "[FAIL]" not in (fb.return_checking or "")
    assert not failed, failed


@pytest.fixture(scope="module")
def sandboxed(small_alpha: Suite) -> Iterator[FactorEvaluator]:
    evaluator = small_alpha.evaluator(gt_runner="inprocess")  # candidates in the sandbox
    assert isinstance(evaluator, FactorEvaluator)
    yield evaluator
    evaluator.close()


@pytest.mark.parametrize("name", ["MA5", "RSQR10", "CORD20", "IMXD60", "VSUMD30"])
def test_ground_truth_passes_through_the_sandbox(
    small_alpha: Suite, sandboxed: FactorEvaluator, name: str
) -> None:
    task = small_alpha.task(f"alpha158/{name}")
    gt = small_alpha.ground_truth(task.id)
    fb = sandboxed.evaluate(task, gt, gt)
    assert fb.final_decision, str(fb)
    assert fb.execution.startswith("Executed successfully")
    assert fb.details["equal_value_ratio"] == 1.0
