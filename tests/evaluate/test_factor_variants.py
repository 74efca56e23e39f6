"""Deliberately wrong factor implementations fail, each with the section that explains why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.evaluate import EvaluatorSettings, FactorEvaluator
from costeer_lab.records import SingleFeedback, Workspace
from costeer_lab.suites import Suite, alpha158_suite

SAVE = '    factor.to_frame(NAME).to_parquet("result.parquet")'


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return alpha158_suite(12, 120, seed=11, cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def evaluator(suite: Suite) -> FactorEvaluator:
    ev = suite.evaluator(runner="inprocess")
    assert isinstance(ev, FactorEvaluator)
    return ev


def gt_code(suite: Suite, name: str) -> str:
    return suite.ground_truth(f"alpha158/{name}").code


def patched(suite: Suite, name: str, *lines: str, replace: tuple[str, str] | None = None) -> str:
    code = gt_code(suite, name)
    if replace is not None:
        assert replace[0] in code
        code = code.replace(*replace)
    assert SAVE in code
    return code.replace(SAVE, "".join(f"    {ln}\n" for ln in lines) + SAVE)


def check(ev: FactorEvaluator, suite: Suite, name: str, code: str) -> SingleFeedback:
    task = suite.task(f"alpha158/{name}")
    return ev.evaluate(task, Workspace({"main.py": code}), suite.ground_truth(task.id))


def test_wrong_window_fails_on_values_and_ic(evaluator: FactorEvaluator, suite: Suite) -> None:
    code = gt_code(suite, "MA10").replace("WINDOW = 10", "WINDOW = 5")
    fb = check(evaluator, suite, "MA10", code)
    assert fb.final_decision is False
    assert "[FAIL] equal values" in (fb.return_checking or "")
    assert "[FAIL] mean IC" in (fb.return_checking or "")
    assert fb.details["equal_value_ratio"] < 0.5 and fb.details["ic"] < 0.99
    assert fb.execution.startswith("Executed successfully")
    assert "FactorMismatchError: window" in fb.error_fingerprints


def test_rolling_without_per_instrument_grouping_fails(
    evaluator: FactorEvaluator, suite: Suite
) -> None:
    code = (
        "import pandas as pd\n"
        "panel = pd.read_parquet('daily_pv.parquet')\n"
        "close = panel['close']\n"
        "factor = close.rolling(20, min_periods=1).mean() / close\n"
        "factor.to_frame('MA20').to_parquet('result.parquet')\n"
    )
    fb = check(evaluator, suite, "MA20", code)
    assert fb.final_decision is False
    assert "[FAIL] equal values" in (fb.return_checking or "")
    assert "[FAIL] mean IC" in (fb.return_checking or "")
    assert "[ok] index" in (fb.return_checking or "")  # the format is right, the values are not


@pytest.mark.parametrize(("shift", "words"), [(1, "one day late"), (-1, "one day early")])
def test_dates_shifted_by_one_fail_with_a_dates_hint(
    evaluator: FactorEvaluator, suite: Suite, shift: int, words: str
) -> None:
    code = patched(suite, "MA60", f"factor = factor.groupby(level='instrument').shift({shift})")
    fb = check(evaluator, suite, "MA60", code)
    assert fb.final_decision is False
    assert f"[FAIL] dates: the values equal the ground truth shifted {words}" in (
        fb.return_checking or ""
    )
    key = "equal_value_ratio_lag1" if shift == 1 else "equal_value_ratio_lead1"
    assert fb.details[key] > 0.99


def test_wrong_column_fails(evaluator: FactorEvaluator, suite: Suite) -> None:
    code = gt_code(suite, "VWAP0").replace('vwap = df["vwap"]', 'vwap = df["open"]')
    fb = check(evaluator, suite, "VWAP0", code)
    assert fb.final_decision is False
    assert "[FAIL] equal values" in (fb.return_checking or "")
    assert "[FAIL] mean IC" in (fb.return_checking or "")


def test_nan_explosion_fails_on_coverage(evaluator: FactorEvaluator, suite: Suite) -> None:
    code = patched(suite, "MA5", "factor = factor.where(np.arange(len(factor)) % 3 == 0)")
    fb = check(evaluator, suite, "MA5", code)
    assert fb.final_decision is False
    assert "[FAIL] NaN on the ground-truth index" in (fb.return_checking or "")
    assert "finite coverage [0.3, 0.4)" in (fb.return_checking or "")  # a band (diagnostics)
    assert fb.details["nan_candidate"] > 2 * fb.details["nan_truth"]


def test_all_nan_output_fails_the_format_check(evaluator: FactorEvaluator, suite: Suite) -> None:
    code = patched(suite, "MA5", "factor = np.log(factor - 1000)")
    fb = check(evaluator, suite, "MA5", code)
    assert fb.final_decision is False
    assert "[FAIL] values:" in (fb.return_checking or "") and "every value is NaN" in (
        fb.return_checking or ""
    )


@pytest.mark.parametrize(
    ("line", "names"),
    [
        ("factor = factor.reset_index(drop=True)", "[None]"),
        ("factor = factor.droplevel('datetime')", "['instrument']"),
    ],
)
def test_wrong_index_fails_the_index_check(
    evaluator: FactorEvaluator, suite: Suite, line: str, names: str
) -> None:
    fb = check(evaluator, suite, "KMID", patched(suite, "KMID", line))
    assert fb.final_decision is False
    assert f"[FAIL] index: index names are {names}" in (fb.return_checking or "")
    assert "equal values" not in (fb.return_checking or "")  # not compared at all


def test_swapped_index_levels_are_accepted_with_a_note(
    evaluator: FactorEvaluator, suite: Suite
) -> None:
    code = patched(suite, "KMID", "factor = factor.reorder_levels(['instrument', 'datetime'])")
    fb = check(evaluator, suite, "KMID", code)
    assert fb.final_decision is True, str(fb)
    assert "note: index levels were (instrument, datetime); reordered" in (
        fb.return_checking or ""
    )


def test_small_numeric_noise_passes_through_the_ic_path_of_the_correlated_rule(
    suite: Suite,
) -> None:
    settings = EvaluatorSettings(factor_acceptance="equal_or_correlated")
    evaluator = suite.evaluator(runner="inprocess", settings=settings)
    assert isinstance(evaluator, FactorEvaluator)
    code = patched(
        suite,
        "MA5",
        "noise = np.random.default_rng(0).normal(0, 1e-4, len(factor))",
        "factor = factor * (1 + noise)",
    )
    fb = check(evaluator, suite, "MA5", code)
    assert fb.details["equal_value_ratio"] < 0.5
    assert fb.final_decision is True, str(fb)
    assert fb.details["accepted_by"] == "correlation"
    default = check(suite.evaluator(runner="inprocess"), suite, "MA5", code)  # type: ignore[arg-type]
    assert default.final_decision is False  # the default rule wants an affine transform


def test_runtime_error_reports_traceback_and_fingerprint(
    evaluator: FactorEvaluator, suite: Suite
) -> None:
    code = gt_code(suite, "MA5").replace('df["close"]', 'df["clsoe"]')
    fb = check(evaluator, suite, "MA5", code)
    assert fb.final_decision is False
    assert fb.execution.startswith("Execution failed")
    assert (
        "Traceback (most recent call last)" in fb.execution and "KeyError: 'clsoe'" in fb.execution
    )
    assert fb.return_checking == "not checked: the code did not run to completion"
    assert "KeyError: <str>" in fb.error_fingerprints


def test_missing_output_inf_columns_and_frequency(
    evaluator: FactorEvaluator, suite: Suite
) -> None:
    two_columns = "factor.to_frame('a').assign(b=1.0).to_parquet('result.parquet')"
    cases = {
        "print('forgot to save')": "[FAIL] output: result.parquet was not written",
        patched(suite, "KMID", "factor = factor / 0"): "inf",
        patched(suite, "KMID", two_columns, "raise SystemExit(0)"):
            "[FAIL] columns: result.parquet has 2 columns",
        patched(
            suite,
            "KMID",
            "factor = factor.groupby([pd.Grouper(level='datetime', freq='W'), "
            "pd.Grouper(level='instrument')]).last()",
        ): "[FAIL] frequency: median gap between dates is 7.00 days",
    }  # fmt: skip
    for code, expected in cases.items():
        fb = check(evaluator, suite, "KMID", code)
        assert fb.final_decision is False, code
        assert expected in (fb.return_checking or ""), (code, fb.return_checking)


def test_without_ground_truth_only_format_checks_decide(
    evaluator: FactorEvaluator, suite: Suite
) -> None:
    task = suite.task("alpha158/MA10")
    wrong_window = gt_code(suite, "MA10").replace("WINDOW = 10", "WINDOW = 5")
    fb = evaluator.evaluate(task, Workspace({"main.py": wrong_window}))
    assert fb.final_decision is True
    assert "no ground truth; format checks passed" in (fb.return_checking or "")
    bad_index = patched(suite, "MA10", "factor = factor.reset_index(drop=True)")
    assert evaluator.evaluate(task, Workspace({"main.py": bad_index})).final_decision is False


def test_broken_ground_truth_is_an_infrastructure_error(
    evaluator: FactorEvaluator, suite: Suite, caplog: pytest.LogCaptureFixture
) -> None:
    """A failing reference is the experiment's problem: the candidate is not judged, and
    nothing the reference printed reaches its feedback (only the log)."""
    task = suite.task("alpha158/MA5")
    broken = Workspace({"main.py": "print('CANARY_GT_42'); raise RuntimeError('truth is broken')"})
    with caplog.at_level("ERROR"):
        fb = evaluator.evaluate(task, suite.ground_truth(task.id), broken)
    assert fb.final_decision is False
    assert "Not evaluated" in fb.execution
    text = json.dumps(fb.to_dict())
    assert "CANARY_GT_42" not in text and "truth is broken" not in text
    assert "reference implementation failed" in fb.details["infrastructure_error"]
    assert "CANARY_GT_42" in caplog.text


def test_thresholds_come_from_settings(suite: Suite) -> None:
    strict = EvaluatorSettings(
        equal_value_atol=0.0,
        equal_value_rtol=0.0,
        ic_threshold=1.0,
        factor_acceptance="equal_or_correlated",
    )
    ev = suite.evaluator(runner="inprocess", settings=strict)
    code = patched(suite, "MA5", "factor = factor * (1 + 1e-12)")
    fb = check(ev, suite, "MA5", code)  # type: ignore[arg-type]
    assert fb.final_decision is False
    assert "(threshold 1.0)" in (fb.return_checking or "")


@pytest.fixture(scope="module")
def sandboxed(suite: Suite) -> Iterator[FactorEvaluator]:
    ev = suite.evaluator(gt_runner="inprocess")
    assert isinstance(ev, FactorEvaluator)
    yield ev
    ev.close()


def test_wrong_variants_fail_the_same_way_in_the_sandbox(
    sandboxed: FactorEvaluator, suite: Suite
) -> None:
    fb = check(
        sandboxed, suite, "MA10", gt_code(suite, "MA10").replace("WINDOW = 10", "WINDOW = 5")
    )
    assert fb.final_decision is False and "[FAIL] equal values" in (fb.return_checking or "")
    fb = check(
        sandboxed, suite, "MA5", "import socket\nsocket.create_connection(('1.1.1.1', 80), 2)"
    )
    assert fb.final_decision is False and fb.execution.startswith("Execution failed")
    assert fb.error_fingerprints


def test_inputs_must_exist(tmp_path: Path) -> None:
    from costeer_lab.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="do not exist"):
        FactorEvaluator({"daily_pv.parquet": tmp_path / "missing.parquet"})
