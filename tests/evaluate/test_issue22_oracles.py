"""Issue 22: a factor right on one date, the rank-IC condition, and feedback as an oracle.

Each test failed on the code before the fix (see the commit message of this file).
The tests over every alpha158 task (a module-scoped suite, seconds) are marked ``slow``: they
stay in ``make test`` and out of mutmut's per-mutant runs, where the exact small-panel tests
here and in ``tests/evaluate/test_factor_compare_exact.py`` pin the same rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from costeer_lab.evaluate import EvaluatorSettings, FactorEvaluator, PythonFunctionEvaluator
from costeer_lab.evaluate._factor_compare import band, compare_to_truth, date_ics
from costeer_lab.records import Task, Workspace
from costeer_lab.suites import Suite, alpha158_suite

S = EvaluatorSettings()
FULL = EvaluatorSettings(feedback_detail="full")
CORRELATED = EvaluatorSettings(factor_acceptance="equal_or_correlated")
SAVE = '    factor.to_frame(NAME).to_parquet("result.parquet")'


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return alpha158_suite(12, 120, seed=11, cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def evaluator(suite: Suite) -> FactorEvaluator:
    ev = suite.evaluator(runner="inprocess")
    assert isinstance(ev, FactorEvaluator)
    return ev


@pytest.fixture(scope="module")
def truths(suite: Suite, evaluator: FactorEvaluator) -> dict[str, pd.Series]:
    return {
        t.id: evaluator.ground_truth_result(suite.ground_truth(t.id), evaluator.output_of(t))
        for t in suite.tasks
    }


def _dates(s: pd.Series) -> pd.Index:
    return s.index.get_level_values("datetime")


def one_date(truth: pd.Series) -> pd.Series:
    """The truth on its last date, 0 elsewhere (NaN kept: the NaN pattern holds)."""
    last = _dates(truth) == _dates(truth).max()
    return truth.where(last | truth.isna(), 0.0)


# -- 1: a factor right on one date -----------------------------------------------------------
@pytest.mark.slow
def test_a_factor_right_on_one_date_is_rejected_on_every_alpha158_task(
    truths: dict[str, pd.Series],
) -> None:
    accepted = [
        (tid, rule)
        for tid, truth in truths.items()
        for rule in (S, CORRELATED)
        if compare_to_truth(one_date(truth), truth, rule).decision
    ]
    assert accepted == []  # before: 158 of 158 under the default rule


@pytest.mark.slow
def test_a_factor_without_a_moving_average_fails_end_to_end(
    suite: Suite, evaluator: FactorEvaluator
) -> None:
    code = suite.ground_truth("alpha158/MA10").code
    assert SAVE in code
    cheat = (
        "    dates = factor.index.get_level_values('datetime')\n"
        "    factor = factor.where((dates == dates.max()) | factor.isna(), 0.0)\n"
    )
    task = suite.task("alpha158/MA10")
    fb = evaluator.evaluate(
        task, Workspace({"main.py": code.replace(SAVE, cheat + SAVE)}), suite.ground_truth(task.id)
    )
    assert fb.final_decision is False and fb.details["accepted_by"] == ""
    assert fb.details["ic_date_coverage"] < 0.05
    assert "[FAIL] IC dates: the candidate is usable on a share [0.0, 0.1)" in (
        fb.return_checking or ""
    )


def _constant_on(truth: pd.Series, share: float) -> pd.Series:
    """2 * truth + 1 (a rescaled factor) on the first ``1 - share`` of the dates, 0 after."""
    dates = pd.Index(_dates(truth).unique()).sort_values()
    cut = dates[int(len(dates) * (1 - share))]
    return (truth * 2 + 1).where((_dates(truth) < cut) | truth.isna(), 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["alpha158/MA10", "alpha158/RANK20", "alpha158/KMID"])
def test_a_factor_constant_on_a_tenth_of_the_dates_is_rejected(
    truths: dict[str, pd.Series], name: str
) -> None:
    truth = truths[name]
    partly = _constant_on(truth, 0.1)
    for rule in (S, CORRELATED):
        c = compare_to_truth(partly, truth, rule)
        assert not c.decision, (name, c.metrics)
        assert c.metrics["ic_date_coverage"] == pytest.approx(0.9, abs=0.02)
    everywhere = compare_to_truth(truth * 2 + 1, truth, S)
    assert everywhere.decision and everywhere.accepted_by == "correlation"
    assert everywhere.metrics["ic_date_coverage"] == 1.0


@pytest.mark.slow
def test_rewrites_stay_accepted_on_every_alpha158_task(truths: dict[str, pd.Series]) -> None:
    """Ground truths, per-date affine transforms and (under the correlated rule) monotone
    rewrites pass; dates where the truth is flat (warm-up) are not scored."""
    rejected = []
    for tid, truth in truths.items():
        dates = _dates(truth)
        codes = pd.factorize(dates, sort=True)[0]
        per_date = truth * (1.0 + codes / 50.0) - codes  # a different affine map each date
        monotone = pd.Series(np.tanh(truth / (truth.abs().max() or 1.0)), truth.index)
        for cand, rule in ((truth.copy(), S), (per_date, S), (monotone, CORRELATED)):
            if not compare_to_truth(cand, truth, rule).decision:
                rejected.append(tid)
    assert rejected == []
    assert (
        compare_to_truth(truths["alpha158/MA10"] * 3, truths["alpha158/MA10"], S).metrics[
            "ic_dates_flat"
        ]
        == 1
    )  # the first date: every instrument's MA10 / close is 1


# -- 1: exact boundaries of the date rule -----------------------------------------------------
def _panel(days: int = 100, n: int = 6, seed: int = 0) -> pd.Series:
    idx = pd.MultiIndex.from_product(
        [pd.bdate_range("2021-01-04", periods=days), [f"I{i}" for i in range(n)]],
        names=["datetime", "instrument"],
    )
    return pd.Series(np.random.default_rng(seed).normal(size=len(idx)), idx)


def test_date_coverage_threshold_is_inclusive() -> None:
    truth = _panel(100)
    cand = (truth * 2).where(_dates(truth) != _dates(truth).min(), 5.0)  # constant on 1 of 100
    d = date_ics(cand, truth, 3)
    assert (d.scored, d.usable, d.coverage) == (100, 99, 0.99)
    assert d.ic == pytest.approx(0.99)  # the constant date counts as 0
    at = EvaluatorSettings(
        factor_acceptance="equal_or_correlated", ic_threshold=0.5, ic_date_coverage_threshold=0.99
    )
    assert compare_to_truth(cand, truth, at).accepted_by == "correlation"
    above = at.model_copy(update={"ic_date_coverage_threshold": 0.991})
    c = compare_to_truth(cand, truth, above)
    assert not c.decision
    assert any(f.startswith("IC dates: the candidate is usable on a share") for f in c.failures)
    full = compare_to_truth(cand, truth, above.model_copy(update={"feedback_detail": "full"}))
    assert "[FAIL] IC dates: the candidate is usable on 99 of 100 scored dates (0.990" in (
        "\n".join(full.lines)
    )


def test_too_few_candidate_values_on_a_date_count_as_zero() -> None:
    truth = _panel(10, n=4)
    cand = truth * 2
    first = _dates(truth) == _dates(truth).min()
    cand[first & (truth.index.get_level_values("instrument").isin(["I0", "I1"]))] = np.nan
    d = date_ics(cand, truth, 3)  # 2 values left on the first date: below 3
    assert (d.scored, d.usable) == (10, 9) and d.ic == pytest.approx(0.9)
    assert date_ics(cand, truth, 2).usable == 10  # 2 are enough when min_n is 2


def test_flat_and_sparse_truth_dates_are_not_scored() -> None:
    truth = _panel(10, n=4)
    dates = _dates(truth)
    truth[dates == dates[0]] = 1.0 + 1e-7  # flat within the equal-value tolerance
    sparse = (dates == dates[-1]) & truth.index.get_level_values("instrument").isin(["I0", "I1"])
    truth[sparse] = np.nan  # 2 finite values left: below min 3
    cand = truth * 2
    cand[dates == dates[0]] = np.arange(4.0)  # anything on the flat date
    d = date_ics(cand, truth, 3)
    assert (d.scored, d.flat, d.sparse, d.usable) == (8, 1, 1, 8)
    assert d.ic == pytest.approx(1.0)
    barely = truth.copy()
    barely[dates == dates[0]] = [1.0, 1.0, 1.0, 1.0 + 2e-5]  # beyond 1e-6 + 1e-5 * 1: scored
    assert date_ics(barely * 2, barely, 3).scored == 9


# -- 2: every condition of the acceptance rules ------------------------------------------------
def _outlier_panel(days: int = 30, permute: bool = True) -> tuple[pd.Series, pd.Series]:
    """Per date a huge outlier and five small values; the candidate reverses the small ones:
    Pearson IC 1 - 2e-9 (the outlier dominates), rank IC -1/7."""
    idx = pd.MultiIndex.from_product(
        [pd.bdate_range("2021-01-04", periods=days), [f"I{i}" for i in range(6)]],
        names=["datetime", "instrument"],
    )
    shift = np.repeat(np.arange(days, dtype=float), 6)
    base = np.tile([1e5, 1, 2, 3, 4, 5], days) + shift
    cand = np.tile([1e5, 5, 4, 3, 2, 1], days) + shift if permute else base
    return pd.Series(cand, idx), pd.Series(base, idx)


def test_the_rank_ic_condition_rejects_under_both_rules() -> None:
    cand, truth = _outlier_panel()
    for rule in (S, CORRELATED):
        c = compare_to_truth(cand, truth, rule)
        assert c.metrics["ic"] >= S.scaled_ic_threshold  # the IC alone would accept
        assert c.metrics["rank_ic"] == pytest.approx(-1 / 7)
        assert not c.decision and c.accepted_by == ""
    no_rank = EvaluatorSettings(ic_threshold=-0.5)  # rank IC -1/7 > -0.5: accepted
    assert compare_to_truth(cand, truth, no_rank).accepted_by == "correlation"


@pytest.mark.parametrize("rule", ["equal_or_scaled", "equal_or_correlated"])
def test_the_rank_ic_threshold_is_strict(rule: str) -> None:
    cand, truth = _outlier_panel()
    ric = compare_to_truth(cand, truth, S).metrics["rank_ic"]
    at = EvaluatorSettings(factor_acceptance=rule, ic_threshold=ric)
    assert not compare_to_truth(cand, truth, at).decision  # rank IC == threshold: rejected
    below = EvaluatorSettings(factor_acceptance=rule, ic_threshold=np.nextafter(ric, -1))
    assert compare_to_truth(cand, truth, below).accepted_by == "correlation"


def test_the_scaled_ic_threshold_is_inclusive_and_the_ic_threshold_strict() -> None:
    truth = _panel(20)
    cand = truth + np.random.default_rng(1).normal(scale=1e-3, size=len(truth))
    ic = compare_to_truth(cand, truth, S).metrics["ic"]
    assert 0.99 < ic < 1.0
    scaled = EvaluatorSettings(scaled_ic_threshold=ic)
    assert compare_to_truth(cand, truth, scaled).accepted_by == "correlation"  # IC == threshold
    above = EvaluatorSettings(scaled_ic_threshold=np.nextafter(ic, 2))
    assert not compare_to_truth(cand, truth, above).decision
    strict = EvaluatorSettings(factor_acceptance="equal_or_correlated", ic_threshold=ic)
    assert not compare_to_truth(cand, truth, strict).decision  # IC == ic_threshold: rejected
    loose = EvaluatorSettings(factor_acceptance="equal_or_correlated", ic_threshold=ic - 1e-9)
    assert compare_to_truth(cand, truth, loose).accepted_by == "correlation"


def test_the_equal_rule_never_accepts_by_correlation() -> None:
    truth = _panel(20)
    c = compare_to_truth(truth * 2, truth, S, acceptance="equal")
    assert not c.decision and c.mismatch == "scale"
    assert not any(line.startswith("[FAIL] mean IC") for line in c.lines)  # information only
    assert not any(line.startswith("[FAIL] IC dates") for line in c.lines)


# -- 3: diagnostics is no oracle of the truth -------------------------------------------------
PRECISE = re.compile(r"\d\.\d{3,}")  # a number with 3 or more decimals


def _visible(lines: list[str]) -> list[str]:
    """The report minus the sampled rows (they show the candidate's own values)."""
    return [ln for ln in lines if not ln.startswith("  20")]


@pytest.mark.slow
def test_diagnostics_shows_no_precise_metric(truths: dict[str, pd.Series]) -> None:
    truth = truths["alpha158/MA10"]
    noisy = truth + np.random.default_rng(0).normal(scale=0.02, size=len(truth))
    for cand in (noisy, truth * 2, -truth, one_date(truth), truth.fillna(0.0)):
        c = compare_to_truth(cand, truth, S)
        shown = "\n".join(_visible(c.lines))
        assert not PRECISE.search(shown.replace("0.999999", "")), shown  # the threshold itself
        assert not re.search(r"\b\d+ of \d+\b", shown), shown  # no truth-dependent counts
        assert isinstance(c.metrics["ic"], float)  # the trusted metrics stay precise
    full = compare_to_truth(noisy, truth, FULL)
    assert re.search(r"mean IC 0\.\d{4}", "\n".join(full.lines))
    assert re.search(r"rows that differ \(\d+ in all", "\n".join(full.lines))


@pytest.mark.slow
def test_a_greedy_climber_sees_no_change_at_diagnostics(truths: dict[str, pd.Series]) -> None:
    """Small steps toward (or away from) the truth leave the visible text as it was: an
    adaptive coder has nothing to climb; the researcher's ``full`` text moves every step."""
    truth = truths["alpha158/KMID"]
    rng = np.random.default_rng(3)
    cand = truth + rng.normal(scale=float(truth.std()), size=len(truth))
    seen: dict[str, set[str]] = {"diagnostics": set(), "full": set()}
    for _ in range(12):
        rows = rng.choice(np.flatnonzero(truth.notna().to_numpy()), 3, replace=False)
        step = cand.copy()
        step.iloc[rows] = truth.iloc[rows]  # the best possible move: three rows made right
        for level, settings in (("diagnostics", S), ("full", FULL)):
            lines = compare_to_truth(step, truth, settings).lines
            seen[level].add("\n".join(_visible(lines)))
        cand = step
    assert len(seen["diagnostics"]) == 1  # before: a new 4-decimal IC at every step
    assert len(seen["full"]) == 12


def test_band_boundaries() -> None:
    assert [band(x) for x in (0.0, 0.0999, 0.1, -0.0001, -1.0, -2.0, 0.9999999)] == [
        "[0.0, 0.1)",
        "[0.0, 0.1)",
        "[0.1, 0.2)",
        "[-0.1, 0.0)",
        "-1.0",
        "-1.0",
        "[0.9, 1.0)",
    ]


# -- 4: the boolean-flip oracle of python-function feedback ------------------------------------
BOOL_TESTS = Workspace(
    {
        "main.py": "",
        "tests.py": "def check(c):\n"
        + "".join(f"    assert c({i}) is {i % 3 == 0}\n" for i in range(1, 9)),
    }
)
BOOL_TASK = Task(
    "demo/mult3",
    "mult3",
    "Whether x is a multiple of 3.",
    extra={"entry_point": "mult3", "prompt": "def mult3(x: int) -> bool:\n    ...\n"},
)


def _answers(overrides: dict[int, bool], default: bool) -> Workspace:
    code = f"ANSWERS = {overrides!r}\n\ndef mult3(x):\n    return ANSWERS.get(x, {default})\n"
    return Workspace({"main.py": code})


@pytest.fixture(scope="module")
def pyfunc() -> Iterator[PythonFunctionEvaluator]:
    ev = PythonFunctionEvaluator(runner="inprocess")
    yield ev
    ev.close()


def test_constant_true_and_constant_false_get_the_same_feedback(
    pyfunc: PythonFunctionEvaluator,
) -> None:
    true = pyfunc.evaluate(BOOL_TASK, _answers({}, True), BOOL_TESTS)
    false = pyfunc.evaluate(BOOL_TASK, _answers({}, False), BOOL_TESTS)
    assert not true.final_decision and not false.final_decision
    assert true.return_checking == false.return_checking  # before: each named its failing call
    assert "mult3(" not in (true.return_checking or "") and "returned" not in (
        true.return_checking or ""
    )
    assert true.error_fingerprints == false.error_fingerprints
    full = PythonFunctionEvaluator(runner="inprocess", settings=FULL)
    assert "mult3(1)" in (
        full.evaluate(BOOL_TASK, _answers({}, True), BOOL_TESTS).return_checking or ""
    )


def test_a_right_guess_and_a_wrong_one_look_the_same(pyfunc: PythonFunctionEvaluator) -> None:
    """The failure moving to a later call would say the earlier guess was right."""
    right = pyfunc.evaluate(BOOL_TASK, _answers({1: False}, True), BOOL_TESTS)  # fails at 2
    wrong = pyfunc.evaluate(BOOL_TASK, _answers({1: True}, True), BOOL_TESTS)  # fails at 1
    assert right.details["line"] != wrong.details["line"]  # the trusted record knows
    assert right.return_checking == wrong.return_checking


def test_an_answer_flipping_attacker_does_not_pass(pyfunc: PythonFunctionEvaluator) -> None:
    """Flip the answer of whichever call the feedback names: with 8 hidden cases that passed
    in at most 9 attempts; now no call is ever named."""
    overrides: dict[int, bool] = {}
    for _ in range(10):
        fb = pyfunc.evaluate(BOOL_TASK, _answers(overrides, True), BOOL_TESTS)
        if fb.final_decision:
            break
        named = re.search(r"mult3\((\d+)\)", fb.return_checking or "")
        if named is None:
            break  # nothing to flip
        x = int(named.group(1))
        overrides[x] = not overrides.get(x, True)
    assert not fb.final_decision and overrides == {}
