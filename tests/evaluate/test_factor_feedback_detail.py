"""FactorEvaluator at ``feedback_detail="verdict"``: the decision line and format failures only."""

from __future__ import annotations

import pytest

from costeer_lab.evaluate import EvaluatorSettings, FactorEvaluator
from costeer_lab.records import Workspace
from costeer_lab.suites import Suite, alpha158_suite


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return alpha158_suite(8, 60, seed=5, cache_dir=tmp_path_factory.mktemp("cache"))


def evaluate(suite: Suite, name: str, code: str, detail: str) -> str:
    settings = EvaluatorSettings(feedback_detail=detail)
    ev = suite.evaluator(runner="inprocess", settings=settings)
    assert isinstance(ev, FactorEvaluator)
    task = suite.task(f"alpha158/{name}")
    fb = ev.evaluate(task, Workspace({"main.py": code}), suite.ground_truth(task.id))
    return fb.return_checking or ""


def test_verdict_hides_the_comparison_with_the_truth(suite: Suite) -> None:
    wrong = suite.ground_truth("alpha158/MA10").code.replace("WINDOW = 10", "WINDOW = 5")
    diagnostics = evaluate(suite, "MA10", wrong, "diagnostics")
    assert "[FAIL] equal values" in diagnostics and "[ok] index" in diagnostics
    assert evaluate(suite, "MA10", wrong, "verdict") == "decision: FAIL"
    right = suite.ground_truth("alpha158/MA10").code
    assert evaluate(suite, "MA10", right, "verdict").startswith("decision: SUCCESS (")


def test_verdict_keeps_format_failures(suite: Suite) -> None:
    code = suite.ground_truth("alpha158/KMID").code.replace(
        '    factor.to_frame(NAME).to_parquet("result.parquet")',
        "    factor = factor.reset_index(drop=True)\n"
        '    factor.to_frame(NAME).to_parquet("result.parquet")',
    )
    text = evaluate(suite, "KMID", code, "verdict")
    assert text.splitlines()[0].startswith("[FAIL] index: index names are [None]")
    assert text.splitlines()[-1] == "decision: FAIL"
    assert "[ok]" not in text
