"""The mismatch classes of a rejected factor (``costeer_lab/evaluate/_factor_mismatch.py``)
pinned exactly: every shift tried, each class's edge, the explanation texts at both
precisions, the equal-value mask and the rows shown.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from costeer_lab.evaluate import EvaluatorSettings
from costeer_lab.evaluate._factor_mismatch import (
    band,
    classify_mismatch,
    effective_atol,
    equal_mask,
    mismatch_rows,
    truth_scale,
)

S = EvaluatorSettings()


def _truth(days: int = 10, n: int = 3, seed: int = 0) -> pd.Series:
    idx = pd.MultiIndex.from_product(
        [pd.bdate_range("2020-01-02", periods=days), [f"I{i}" for i in range(n)]],
        names=["datetime", "instrument"],
    )
    return pd.Series(np.random.default_rng(seed).normal(size=len(idx)), idx)


@pytest.mark.parametrize(
    ("k", "kind", "text"),
    [
        (1, "lag", "the values equal the truth of 1 day earlier (shifted too far)"),
        (2, "lag", "the values equal the truth of 2 days earlier (shifted too far)"),
        (3, "lag", "the values equal the truth of 3 days earlier (shifted too far)"),
        (5, "lag", "the values equal the truth of 5 days earlier (shifted too far)"),
        (-1, "lead", "the values equal the truth of 1 day later (look-ahead)"),
        (-2, "lead", "the values equal the truth of 2 days later (look-ahead)"),
        (-3, "lead", "the values equal the truth of 3 days later (look-ahead)"),
        (-5, "lead", "the values equal the truth of 5 days later (look-ahead)"),
    ],
)
def test_every_shift_tried_is_named_with_its_days(k: int, kind: str, text: str) -> None:
    t = _truth()
    cand = t.groupby(level="instrument").shift(k)
    assert classify_mismatch(cand, t, S, nan_ok=True, ic=0.0) == (kind, text)


def test_a_shift_not_tried_is_other_values() -> None:
    t = _truth()
    cand = t.groupby(level="instrument").shift(4)
    assert classify_mismatch(cand, t, S, nan_ok=True, ic=0.0)[0] == "values"


def test_missing_is_fewer_than_half_of_the_truths_values() -> None:
    t = _truth()  # 30 finite values
    half = t.copy()
    half.iloc[15:] = np.nan  # 15 left: not fewer than half
    assert classify_mismatch(half * 3, t, S, nan_ok=True, ic=0.0)[0] != "missing"
    fewer = t.copy()
    fewer.iloc[14:] = np.nan  # 14 left
    assert classify_mismatch(fewer * 3, t, S, nan_ok=True, ic=0.0) == (
        "missing",
        "the candidate is missing on 16 of 30 rows where the truth has a value",
    )
    assert classify_mismatch(fewer * 3, t, S, nan_ok=True, ic=0.0, precise=False) == (
        "missing",
        "the candidate is missing on most rows where the truth has a value",
    )
    none = pd.Series(np.nan, t.index)
    assert classify_mismatch(none, none, S, nan_ok=True, ic=math.nan)[0] != "missing"


def test_nan_pattern_needs_a_failed_nan_check_and_equal_values() -> None:
    t = _truth()
    t.iloc[:3] = np.nan
    filled = t.fillna(0.0)
    assert classify_mismatch(filled, t, S, nan_ok=False, ic=1.0) == (
        "nan_pattern",
        "the values agree where both exist, but the candidate has values where the truth is "
        "missing (were NaN filled, e.g. with 0, or rows kept that should be NaN?)",
    )
    assert classify_mismatch(filled, t, S, nan_ok=True, ic=1.0)[0] != "nan_pattern"
    off = filled.copy()
    off.iloc[3] += 1.0  # 26 of 27 shared values equal: 0.963, under 0.99
    assert classify_mismatch(off, t, S, nan_ok=False, ic=1.0)[0] != "nan_pattern"
    loose = S.model_copy(update={"equal_value_threshold": 0.96})
    assert classify_mismatch(off, t, loose, nan_ok=False, ic=1.0)[0] == "nan_pattern"


def test_sign_offset_and_scale() -> None:
    t = _truth()
    assert classify_mismatch(-t, t, S, nan_ok=True, ic=-1.0) == (
        "sign",
        "the values equal minus the truth (sign flipped)",
    )
    assert classify_mismatch(t + 3, t, S, nan_ok=True, ic=1.0) == (
        "offset",
        "the values equal the truth plus 3",
    )
    assert classify_mismatch(t * (1 + 5e-7) + 3, t, S, nan_ok=True, ic=1.0)[0] == "offset"
    assert classify_mismatch(t * (1 + 2e-6) + 3, t, S, nan_ok=True, ic=1.0)[0] == "scale"
    kind, text = classify_mismatch(t * 2 + 1, t, S, nan_ok=True, ic=1.0)
    assert kind == "scale"
    assert text.startswith("the values equal 2 * truth + ") and text.endswith(
        " (a rescaled factor)"
    )
    assert classify_mismatch(t * 0.5 - 1, t, S, nan_ok=True, ic=1.0)[1] == (
        "the values equal 0.5 * truth + -1 (a rescaled factor)"
    )


def test_an_almost_affine_candidate_is_not_scale() -> None:
    t = _truth(days=40)
    noise = np.random.default_rng(5).normal(size=len(t))
    near = t * 2 + noise * 1e-3  # R² about 1 - 2.5e-7: not an affine transform
    assert classify_mismatch(near, t, S, nan_ok=True, ic=0.5)[0] == "values"
    exact_enough = t * 2 + noise * 1e-7  # R² about 1 - 2.5e-15
    assert classify_mismatch(exact_enough, t, S, nan_ok=True, ic=0.5)[0] == "scale"


def test_too_few_or_constant_values_are_no_affine_fit() -> None:
    idx = _truth(days=1, n=2).index
    t = pd.Series([1.0, 2.0], idx)
    assert classify_mismatch(t * 2, t, S, nan_ok=True, ic=0.0)[0] == "values"  # 2 points
    idx3 = _truth(days=1, n=3).index
    flat_t = pd.Series([1.0, 1.0, 1.0], idx3)
    assert classify_mismatch(pd.Series([1.0, 2, 3], idx3), flat_t, S, nan_ok=True, ic=0.0)[0] == (
        "values"
    )
    const_c = pd.Series([5.0, 5, 5], idx3)
    assert classify_mismatch(const_c, pd.Series([1.0, 2, 3], idx3), S, nan_ok=True, ic=0.0)[0] == (
        "values"
    )
    three = pd.Series([1.0, 2, 4], idx3)
    assert classify_mismatch(three * 2, three, S, nan_ok=True, ic=1.0)[0] == "scale"


def test_window_is_an_ic_above_0_8() -> None:
    t = _truth()
    cand = t + np.random.default_rng(1).normal(size=len(t)) * 0.3
    cand.iloc[:3] = t.iloc[:3]  # equal on each instrument's first value: a window change
    above = float(np.nextafter(0.8, 1.0))
    assert classify_mismatch(cand, t, S, nan_ok=True, ic=above) == (
        "window",
        "the values track the truth (mean IC 0.800) but differ: a different window, "
        "min_periods, ddof or smoothing?",
    )
    assert classify_mismatch(cand, t, S, nan_ok=True, ic=0.8) == (
        "values",
        "the values differ from the truth (mean IC 0.800): another formula, data field or "
        "grouping (rolling across instruments?)",
    )
    assert classify_mismatch(cand, t, S, nan_ok=True, ic=0.85, precise=False)[1] == (
        "the values track the truth (mean IC in [0.8, 0.9)) but differ: a different window, "
        "min_periods, ddof or smoothing?"
    )
    for ic, shown in ((math.nan, "n/a"), (-1.0, "-1.0"), (-0.25, "in [-0.3, -0.2)")):
        assert classify_mismatch(cand, t, S, nan_ok=True, ic=ic, precise=False)[1] == (
            f"the values differ from the truth (mean IC {shown}): another formula, data "
            "field or grouping (rolling across instruments?)"
        )
    assert classify_mismatch(cand, t, S, nan_ok=True, ic=math.inf)[0] == "values"


def test_band_edges() -> None:
    assert [band(x) for x in (1.0, 2.0, -1.0, -3.0, 0.99994, -0.05, 0.05, -math.inf)] == [
        "1.0",
        "1.0",
        "-1.0",
        "-1.0",
        "[0.9, 1.0)",
        "[-0.1, 0.0)",
        "[0.0, 0.1)",
        "n/a",
    ]
    assert band(float(np.nextafter(1.0, 0.0))) == "[0.9, 1.0)"
    assert band(float(np.nextafter(-1.0, 0.0))) == "[-1.0, -0.9)"


def test_equal_mask_cases() -> None:
    c = np.array([1.0, np.nan, np.inf, -np.inf, np.inf, np.nan, 1.0, -100.0011, -100.0009])
    t = np.array([1.0, np.nan, np.inf, np.inf, 5.0, 1.0, np.nan, -100.0, -100.0])
    assert equal_mask(c, t, S, scale=1.0).tolist() == [
        True,  # equal
        True,  # both NaN
        True,  # the same infinity
        False,  # opposite infinities
        False,  # infinite vs finite
        False,  # NaN vs a value
        False,  # a value where the truth is NaN
        False,  # 1.1e-3 off: over 1e-6 + 1e-5 * |-100|
        True,  # 0.9e-3 off
    ]


def test_rows_sample_spreads_over_the_bad_rows() -> None:
    t = _truth(days=4, n=3)  # 12 rows, all wrong
    cand = t + 1.0
    rows = mismatch_rows(cand, t, S, "full")
    assert rows[0] == "rows that differ (12 in all; datetime, instrument, candidate, truth):"
    picked = [0, 3, 6, 8, 11]  # linspace(0, 11, 5) rounded
    assert rows[1:] == [
        f"  {t.index[i][0].date().isoformat()} {t.index[i][1]}: candidate {cand.iloc[i]:.6g}, "
        f"truth {t.iloc[i]:.6g}"
        for i in picked
    ]
    diag = mismatch_rows(cand, t, S, "diagnostics")
    assert diag[0] == "rows that differ (a sample; datetime, instrument, candidate):"
    assert diag[1] == f"  2020-01-02 I0: candidate {cand.iloc[0]:.6g}"
    assert len(diag) == 6
    two = t.copy()
    two.iloc[[4, 9]] += 1.0
    assert [r.split(":")[0] for r in mismatch_rows(two, t, S, "diagnostics")[1:]] == [
        "  2020-01-03 I1",
        "  2020-01-07 I0",
    ]


# -- written against the survivors of the first mutmut run --------------------------------------
HALF = S.model_copy(update={"equal_value_threshold": 0.5})


def test_the_equal_value_tolerance_edge_is_inclusive() -> None:
    exact = S.model_copy(update={"equal_value_atol": 0.0, "equal_value_rtol": 0.5})
    c, t = np.array([3.0, -3.0, 3.0]), np.array([2.0, -2.0, 1.9])
    assert equal_mask(c, t, exact, scale=1.0).tolist() == [
        True,
        True,
        False,
    ]  # |diff| 1.0 <= 0.5 * 2
    plus_atol = S.model_copy(update={"equal_value_atol": 0.5, "equal_value_rtol": 0.25})
    assert equal_mask(c, t, plus_atol, scale=1.0).tolist() == [True, True, False]  # 0.5 + 0.25 * 2


def test_each_class_needs_more_than_the_threshold_share() -> None:
    """Shares of exactly ``equal_value_threshold`` (0.5 here) name no class."""
    t = _truth(days=2, n=4)  # 8 rows
    other = _truth(days=2, n=4, seed=9)
    half = t.where(np.arange(8) % 2 == 0, other)  # 4 of 8 equal the truth
    assert classify_mismatch(half, t, HALF, nan_ok=False, ic=0.0)[0] == "values"
    more = t.where(np.arange(8) % 4 != 1, other)  # 6 of 8
    assert classify_mismatch(more, t, HALF, nan_ok=False, ic=0.0)[0] == "nan_pattern"
    minus = (-t).where(np.arange(8) % 2 == 0, other)
    assert classify_mismatch(minus, t, HALF, nan_ok=True, ic=0.0)[0] == "values"
    assert (
        classify_mismatch((-t).where(np.arange(8) % 4 != 1, other), t, HALF, nan_ok=True, ic=0.0)[
            0
        ]
        == "sign"
    )
    lagged = t.groupby(level="instrument").shift(1)  # 4 shared rows on the second date
    lag_half = lagged.where(np.arange(8) % 2 == 0, other)  # 2 of the 4 equal
    assert classify_mismatch(lag_half, t, HALF, nan_ok=True, ic=0.0)[0] == "values"
    lag_more = lagged.where(np.arange(8) != 5, other)  # 3 of the 4
    assert classify_mismatch(lag_more, t, HALF, nan_ok=True, ic=0.0)[0] == "lag"


def test_small_unrelated_values_are_no_affine_transform() -> None:
    """R² is 1 - residual / total: tiny values of another formula explain nothing."""
    t = _truth()
    tiny = pd.Series(np.random.default_rng(7).normal(size=len(t)) * 1e-4, t.index)
    assert classify_mismatch(tiny, t, S, nan_ok=True, ic=0.0)[0] == "values"


# -- coverage before shape; window or field (issue 25) -----------------------------------------
def _panel(days: int = 40, n: int = 4, seed: int = 3) -> pd.DataFrame:
    """A small hand-built price panel: close a random walk, open close times a small gap."""
    idx = pd.MultiIndex.from_product(
        [pd.bdate_range("2021-01-04", periods=days), [f"S{i}" for i in range(n)]],
        names=["datetime", "instrument"],
    )
    rng = np.random.default_rng(seed)
    steps = rng.normal(0.0, 0.02, size=(days, n))
    close = 10.0 * np.exp(np.cumsum(steps, axis=0)).ravel()
    opened = close * (1.0 + rng.normal(0.0, 0.002, size=days * n))
    return pd.DataFrame({"close": close, "open": opened}, idx)


def _mean(x: pd.Series, window: int, min_periods: int | None = None) -> pd.Series:
    by = x.groupby(level="instrument", group_keys=False)
    return by.apply(lambda s: s.rolling(window, min_periods=min_periods).mean()).sort_index()


def test_equal_values_missing_on_a_few_rows_are_missing_not_offset() -> None:
    t = _truth(days=40, n=4)  # 160 rows
    cand = t.copy()
    cand.iloc[[7, 50, 99, 130]] = np.nan  # 2.5 % of the rows
    assert classify_mismatch(cand, t, S, nan_ok=True, ic=1.0) == (
        "missing",
        "the values equal the truth where both exist, but the candidate is missing on 4 of 160 "
        "rows where the truth has a value (rows dropped, or a step giving NaN?)",
    )
    assert classify_mismatch(cand, t, S, nan_ok=False, ic=1.0, precise=False) == (
        "missing",
        "the values equal the truth where both exist, but the candidate is missing on some "
        "rows where the truth has a value (rows dropped, or a step giving NaN?)",
    )
    t2 = t.copy()
    t2.iloc[0] = np.nan  # the truth's own NaN is not counted
    assert classify_mismatch(cand, t2, S, nan_ok=True, ic=1.0)[1].startswith(
        "the values equal the truth where both exist, but the candidate is missing on 4 of 159 "
    )


def test_missing_rows_with_other_values_are_not_a_coverage_mistake() -> None:
    t = _truth(days=40, n=4)
    cand = t + 3.0
    cand.iloc[[7, 50]] = np.nan
    assert classify_mismatch(cand, t, S, nan_ok=True, ic=1.0) == (
        "offset",
        "the values equal the truth plus 3",
    )


def test_extra_values_where_the_truth_is_missing_stay_nan_pattern() -> None:
    t = _truth(days=40, n=4)
    t.iloc[:8] = np.nan
    cand = t.fillna(0.0)
    cand.iloc[20] = np.nan  # and missing on one row: coverage of the truth's rows comes first
    assert classify_mismatch(cand, t, S, nan_ok=False, ic=1.0)[0] == "missing"
    assert classify_mismatch(t.fillna(0.0), t, S, nan_ok=False, ic=1.0)[0] == "nan_pattern"


def test_another_input_column_is_field_not_window() -> None:
    p = _panel()
    truth = _mean(p["close"], 5) / p["close"]
    cand = _mean(p["open"], 5) / p["open"]  # the same formula on $open
    assert classify_mismatch(cand, truth, S, nan_ok=True, ic=0.95) == (
        "field",
        "the values track the truth (mean IC 0.950) with its warm-up, but differ from each "
        "instrument's first value on: the same window on another input column (e.g. $open "
        "for $close)?",
    )
    assert classify_mismatch(cand, truth, S, nan_ok=True, ic=0.85, precise=False)[1] == (
        "the values track the truth (mean IC in [0.8, 0.9)) with its warm-up, but differ from "
        "each instrument's first value on: the same window on another input column (e.g. $open "
        "for $close)?"
    )
    assert classify_mismatch(cand, truth, S, nan_ok=True, ic=0.8)[0] == "values"


def test_another_warm_up_is_window() -> None:
    p = _panel()
    truth = _mean(p["close"], 5) / p["close"]
    longer = _mean(p["close"], 6) / p["close"]  # one more leading NaN per instrument
    assert classify_mismatch(longer, truth, S, nan_ok=True, ic=0.95)[0] == "window"
    shorter = _mean(p["close"], 4) / p["close"]
    assert classify_mismatch(shorter, truth, S, nan_ok=True, ic=0.95)[0] == "window"


def test_a_window_without_warm_up_is_window_by_its_first_values() -> None:
    p = _panel()
    truth = _mean(p["close"], 5, min_periods=1)  # no NaN: the first rows are expanding means
    cand = _mean(p["close"], 7, min_periods=1)
    assert classify_mismatch(cand, truth, S, nan_ok=True, ic=0.95)[0] == "window"
    field = _mean(p["open"], 5, min_periods=1)
    assert classify_mismatch(field, truth, S, nan_ok=True, ic=0.95)[0] == "field"


def test_one_instrument_decides_window_by_warm_up_whatever_its_order() -> None:
    p = _panel()
    truth = _mean(p["close"], 5) / p["close"]
    cand = _mean(p["open"], 5) / p["open"]  # field on every instrument ...
    for name in ("S0", "S3"):  # ... but one instrument starts a row later: a warm-up change
        late = cand.copy()
        first = np.flatnonzero(
            (late.index.get_level_values("instrument") == name) & late.notna().to_numpy()
        )[0]
        late.iloc[first] = np.nan
        assert classify_mismatch(late, truth, S, nan_ok=True, ic=0.95)[0] == "window"


def test_one_instrument_with_another_first_value_makes_field() -> None:
    p = _panel()
    truth = _mean(p["close"], 5, min_periods=1)
    cand = _mean(p["close"], 7, min_periods=1)
    for name in ("S0", "S3"):
        other = cand.copy()
        first = np.flatnonzero(other.index.get_level_values("instrument") == name)[0]
        other.iloc[first] += 1.0
        assert classify_mismatch(other, truth, S, nan_ok=True, ic=0.95)[0] == "field"


def test_no_instrument_with_values_in_both_is_field() -> None:
    idx = _truth(days=4, n=2).index
    t = pd.Series([np.nan, 1.0, np.nan, 2.0, np.nan, 3.0, np.nan, 4.0], idx)  # I0 all NaN
    c = pd.Series([5.0, np.nan, 6.0, np.nan, 7.0, np.nan, 8.0, np.nan], idx)  # I1 all NaN
    from costeer_lab.evaluate._factor_mismatch import _window_explains

    assert _window_explains(c.to_numpy(), t.to_numpy(), t, S, 1.0) is False


def test_a_late_slow_factor_is_lag_not_missing() -> None:
    """Equal where both exist and missing on the first rows, but the shifted truth equals it
    on more rows: ``lag``; on a tie (a constant factor) coverage comes first."""
    idx = _truth(days=20, n=2).index
    levels = np.repeat([[1.0, 5.0], [2.0, 7.0]], 10, axis=0)  # two levels per instrument
    t = pd.Series(levels.reshape(-1), idx)
    late = t.groupby(level="instrument").shift(1)  # 36 shared rows, 34 equal; lag 1: 36 of 36
    assert classify_mismatch(late, t, HALF, nan_ok=True, ic=0.0)[0] == "lag"
    flat = pd.Series(np.repeat([[1.0, 5.0]], 20, axis=0).reshape(-1), idx)
    flat_late = flat.groupby(level="instrument").shift(1)  # equal and lag 1 both 36 of 36
    assert classify_mismatch(flat_late, flat, HALF, nan_ok=True, ic=0.0)[0] == "missing"


def test_an_instrument_the_candidate_lacks_decides_nothing() -> None:
    """An instrument all-NaN in the candidate is skipped (not a warm-up change), and the
    other instruments still decide, whichever comes first."""
    p = _panel()
    insts = p.index.get_level_values("instrument")
    truth = _mean(p["close"], 5) / p["close"]
    field = (_mean(p["open"], 5) / p["open"]).where(insts != "S3")
    assert classify_mismatch(field, truth, S, nan_ok=True, ic=0.95)[0] == "field"
    flat_truth = _mean(p["close"], 5, min_periods=1)
    window = _mean(p["close"], 7, min_periods=1).where(insts != "S0")
    assert classify_mismatch(window, flat_truth, S, nan_ok=True, ic=0.95)[0] == "window"


# -- the absolute tolerance follows the truth's scale (issue 25) -------------------------------
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


def test_a_first_value_off_by_a_percent_of_a_tiny_factor_is_field() -> None:
    """``_window_explains`` compares first values with the truth's scale: a tiny factor's
    first values that differ (another input column) no longer pass as a window change."""
    p = _panel()
    truth = p["close"].groupby(level="instrument").cumsum() * 1e-10  # no warm-up
    cand = truth * (1.0 + 0.01 * np.sin(np.arange(len(truth))))  # off from the first rows
    assert classify_mismatch(cand, truth, S, nan_ok=True, ic=0.95)[0] == "field"
    assert (
        classify_mismatch(
            truth * 1.01 + 1e-12 * np.cos(np.arange(len(truth))), truth, S, nan_ok=True, ic=0.95
        )[0]
        == "field"
    )
