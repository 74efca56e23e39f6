"""The equal-value tolerance follows the factor's own scale (``truth_scale``,
``effective_atol`` in ``costeer_lab/evaluate/_factor_mismatch.py``).

With a fixed absolute tolerance of 1e-6, a factor of size 1e-10 (a turnover over a market
value in raw units) equalled its negation, its lag, its window change and all zeros: a
sign-flipped turnover factor was accepted. Each planted mistake is checked here at three scales
(1e-10, 1e-6, 1e3), with the truth and float-noise rewrites of it accepted at each; then the
new branch is pinned exactly (the median, the zeros and non-finite values left out, the
``min(1, scale)`` edge, the date rule, the report's text at both precisions).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from costeer_lab.evaluate import EvaluatorSettings
from costeer_lab.evaluate._factor_compare import compare_to_truth, date_ics
from costeer_lab.evaluate._factor_mismatch import (
    classify_mismatch,
    effective_atol,
    equal_mask,
    truth_scale,
)

S = EvaluatorSettings()
FULL = EvaluatorSettings(feedback_detail="full")
EQUAL = EvaluatorSettings(factor_acceptance="equal")
SCALES = (1e-10, 1e-6, 1e3)
WINDOW = 5


def _prices(days: int = 60, n: int = 8, seed: int = 11) -> pd.Series:
    """Random walks around instrument-specific levels (1 to 8): a cross-section to rank."""
    idx = pd.MultiIndex.from_product(
        [pd.bdate_range("2021-01-04", periods=days), [f"S{i}" for i in range(n)]],
        names=["datetime", "instrument"],
    )
    rng = np.random.default_rng(seed)
    levels = np.arange(1.0, n + 1.0)
    walk = np.exp(np.cumsum(rng.normal(0.0, 0.02, size=(days, n)), axis=0))
    return pd.Series((levels * walk).ravel(), idx)


def _ma(x: pd.Series, window: int) -> pd.Series:
    """Per-instrument rolling mean (a warm-up of ``window - 1`` NaN per instrument)."""
    return x.groupby(level="instrument", group_keys=False).apply(
        lambda s: s.rolling(window).mean()
    )


def _ma_reversed_sum(x: pd.Series, window: int) -> pd.Series:
    """The same mean summed in another order (newest first): equal up to float noise."""

    def one(s: pd.Series) -> pd.Series:
        total = s.shift(window - 1)
        for k in reversed(range(window - 1)):
            total = total + s.shift(k)
        return total / window

    return x.groupby(level="instrument", group_keys=False).apply(one)


def _truth(scale: float) -> pd.Series:
    return _ma(_prices(), WINDOW) * scale


@pytest.mark.parametrize("scale", SCALES)
def test_the_truth_and_float_noise_rewrites_are_accepted(scale: float) -> None:
    truth = _truth(scale)
    reordered = _ma_reversed_sum(_prices(), WINDOW) * scale
    assert not reordered.equals(truth)  # really another float result
    for cand in (truth.copy(), reordered, truth * (1 + 1e-12)):
        for s in (S, EQUAL):
            c = compare_to_truth(cand, truth, s)
            assert (c.decision, c.accepted_by) == (True, "equal_values")
            assert c.metrics["equal_value_ratio"] == 1.0


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("rule", ["equal", "equal_or_scaled", "equal_or_correlated"])
def test_planted_mistakes_are_rejected_with_their_class(scale: float, rule: str) -> None:
    truth = _truth(scale)
    by_inst = truth.groupby(level="instrument")
    mistakes = {
        "sign": -truth,
        "lag": by_inst.shift(1),
        "window": _ma(_prices(), WINDOW + 1) * scale,
        "nan_pattern": truth.fillna(0.0),
    }
    s = S.model_copy(update={"factor_acceptance": rule})
    for kind, cand in mistakes.items():
        c = compare_to_truth(cand, truth, s)
        assert (c.decision, c.mismatch) == (False, kind), (kind, c.lines)


@pytest.mark.parametrize("scale", SCALES)
def test_zeros_and_a_rescaled_truth_are_not_equal_values(scale: float) -> None:
    """A candidate writing zeros (where the truth has values) or ``truth * 1e-9`` is never
    "equal"; the rescaled truth is accepted only by the rules that accept a rescaled factor."""
    truth = _truth(scale)
    zeros = truth * 0.0
    c = compare_to_truth(zeros, truth, S)
    warm_up = (WINDOW - 1) / 60  # rows where both are NaN are the only equal ones
    assert (c.decision, c.mismatch, c.metrics["equal_value_ratio"]) == (False, "values", warm_up)
    tiny = truth * 1e-9
    assert compare_to_truth(tiny, truth, EQUAL).mismatch == "scale"
    assert compare_to_truth(tiny, truth, S).accepted_by == "correlation"  # a rescaled factor


@pytest.mark.parametrize("scale", SCALES)
def test_a_tiny_mixed_sign_factor_is_not_its_negation(scale: float) -> None:
    """Daily returns cross zero: rows near 0 stay within the tolerance of their negation, but
    they are few (the absolute tolerance is 1e-6 of the median size)."""
    truth = _prices().groupby(level="instrument").pct_change() * scale
    c = compare_to_truth(-truth, truth, S)
    assert (c.decision, c.mismatch) == (False, "sign")
    assert c.metrics["equal_value_ratio"] < 0.05
    assert compare_to_truth(truth * (1 + 1e-12), truth, S).decision


@pytest.mark.parametrize("scale", SCALES)
def test_the_ic_scores_the_dates_of_a_tiny_factor(scale: float) -> None:
    truth = _truth(scale)
    d = date_ics(truth * 3.0, truth, 3)
    assert (d.flat, d.sparse, d.scored, d.usable) == (0, WINDOW - 1, 60 - WINDOW + 1, 56)
    assert d.ic == pytest.approx(1.0)


# -- the new branch, pinned exactly ---------------------------------------------------------------
def test_truth_scale_is_the_median_of_finite_nonzero_magnitudes() -> None:
    assert truth_scale(np.array([1e-10, 2e-10, 1e5])) == 2e-10  # a huge outlier: not the mean
    assert truth_scale(np.array([0.0, 0.0, 0.0, 3e-10])) == 3e-10  # zeros left out
    assert truth_scale(np.array([np.inf, -np.inf, np.nan, 2e-10])) == 2e-10
    assert truth_scale(np.array([-4.0])) == 4.0  # magnitudes
    assert truth_scale(np.array([1.0, 3.0])) == 2.0  # an even count: the middle two
    assert truth_scale(np.array([0.0, np.nan])) == 1.0  # nothing to measure: unit scale
    assert truth_scale(np.array([])) == 1.0


def test_effective_atol_shrinks_below_unit_scale_only() -> None:
    s = EvaluatorSettings(equal_value_atol=0.5)
    assert effective_atol(s, 1.0) == 0.5
    assert effective_atol(s, 1.5) == 0.5  # at or above 1: the setting itself
    assert effective_atol(s, 1e6) == 0.5
    assert effective_atol(s, 0.5) == 0.25
    assert effective_atol(s, 0.0) == 0.0
    assert effective_atol(S, 1e-10) == pytest.approx(1e-16, rel=1e-12)


def test_equal_mask_edge_at_the_scaled_atol_is_inclusive() -> None:
    s = EvaluatorSettings(equal_value_atol=0.5, equal_value_rtol=0.0)
    t = np.array([2.0, 2.0, 2.0, -2.0])
    c = np.array([2.25, float(np.nextafter(2.25, 3.0)), 1.75, -2.25])
    assert equal_mask(c, t, s, scale=0.5).tolist() == [True, False, True, True]  # atol 0.25
    assert equal_mask(c, t, s, scale=1.5).tolist() == [True, True, True, True]  # atol 0.5
    both = EvaluatorSettings(equal_value_atol=0.25, equal_value_rtol=0.0625)
    # 0.25 * 0.5 + 0.0625 * 2 = 0.25
    assert equal_mask(c, t, both, scale=0.5).tolist() == [True, False, True, True]


def test_one_scale_for_every_test_of_a_comparison() -> None:
    """``classify_mismatch`` measures the scale on the whole truth, not on the rows it tests:
    the share test on a subset of tiny rows of a large truth keeps the large tolerance."""
    idx = pd.MultiIndex.from_product(
        [pd.bdate_range("2021-01-04", periods=4), ["A", "B", "C", "D"]],
        names=["datetime", "instrument"],
    )
    big = np.array([10.0, 20.0, 30.0, 40.0] * 4)
    truth = pd.Series(big, idx)
    truth.iloc[[0, 5, 10, 15]] = 1e-8  # tiny rows in a truth of scale 20+
    cand = truth.copy()
    cand.iloc[[0, 5, 10, 15]] = -1e-8  # within atol 1e-6 of the truth there
    c = compare_to_truth(cand, truth, EQUAL)
    assert (c.decision, c.metrics["equal_value_ratio"]) == (True, 1.0)
    assert c.metrics["truth_scale"] == 20.0 and c.metrics["equal_value_atol"] == 1e-6


def test_the_date_rule_uses_the_scaled_atol() -> None:
    idx = pd.MultiIndex.from_product(
        [pd.bdate_range("2021-01-04", periods=2), ["A", "B", "C"]],
        names=["datetime", "instrument"],
    )
    truth = pd.Series([0.25, 0.375, 0.5, 0.5, 1.0, 2.0], idx)  # median 0.5; day 1 spans 0.25
    cand = pd.Series([3.0, 2.0, 1.0, 1.0, 2.0, 3.0], idx)
    on = date_ics(cand, truth, 3, atol=0.5, rtol=0.0)  # 0.5 * 0.5 = 0.25: flat (inclusive)
    assert (on.flat, on.scored) == (1, 1)
    assert date_ics(cand, truth, 3, atol=float(np.nextafter(0.5, 0.0)), rtol=0.0).flat == 0
    tiny = truth * 1e-10  # spans 2.5e-11 against a tolerance of 5e-17: scored
    assert date_ics(cand, tiny, 3).scored == 2


def test_a_first_value_off_by_a_percent_of_a_tiny_factor_is_field() -> None:
    """``_window_explains`` compares first values with the truth's scale: a tiny factor's
    first values that differ (another input column) no longer pass as a window change."""
    p = _prices(days=20, n=4)
    truth = p.groupby(level="instrument").cumsum() * 1e-10  # no warm-up
    cand = truth * (1.0 + 0.01 * np.sin(np.arange(len(truth))))  # off from the first rows
    assert classify_mismatch(cand, truth, S, nan_ok=True, ic=0.95)[0] == "field"


def test_report_lines_name_the_scaled_tolerance() -> None:
    truth = _truth(1e-10)
    c = compare_to_truth(-truth, truth, FULL)
    scale = c.metrics["truth_scale"]
    assert 1e-10 < scale < 1e-9 and c.metrics["equal_value_atol"] == 1e-6 * min(1.0, scale)
    assert c.lines[3] == (
        f"[FAIL] equal values (|diff| <= {1e-6 * scale:g} + 1e-05*|truth|; atol 1e-06 x the "
        f"truth's median |value| {scale:.3g}): 0.0667 (threshold 0.99)"
    )
    diag = compare_to_truth(-truth, truth, S).lines[3]
    assert diag == (
        "[FAIL] equal values (|diff| <= 1e-06*min(1, m) + 1e-05*|truth|; m: median |truth|): "
        "[0.0, 0.1) (threshold 0.99)"
    )
    no_atol = {"equal_value_atol": 0.0}
    full0 = compare_to_truth(-truth, truth, FULL.model_copy(update=no_atol)).lines[3]
    assert full0.startswith("[FAIL] equal values (|diff| <= 0 + 1e-05*|truth|): ")
    diag0 = compare_to_truth(-truth, truth, S.model_copy(update=no_atol)).lines[3]
    assert diag0.startswith("[FAIL] equal values (|diff| <= 0 + 1e-05*|truth|): ")
    unit = _truth(1e3)
    assert (
        compare_to_truth(-unit, unit, FULL)
        .lines[3]
        .startswith("[FAIL] equal values (|diff| <= 1e-06 + 1e-05*|truth|): ")
    )
    assert not math.isnan(scale)
