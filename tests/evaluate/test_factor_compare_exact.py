"""The factor comparison (``costeer_lab/evaluate/_factor_compare.py``) pinned exactly: each
threshold on its edge (metrics built by hand, so the edge is exact, not a float near it), each
condition of the acceptance rule, the per-date IC on small hand-built panels and the report's
lines at both precisions.

Fast (milliseconds each): these are the tests mutmut runs per mutant; the every-alpha158-task
oracles of ``test_issue22_oracles.py`` are ``slow`` and run in ``make test`` only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.evaluate import EvaluatorSettings
from costeer_lab.evaluate._factor_compare import (
    DateICs,
    _check,
    _Checks,
    _correlation_ok,
    _dates_ok,
    _Metrics,
    band,
    compare_to_truth,
    date_ics,
)

S = EvaluatorSettings()  # thresholds 0.99, scaled IC 0.999999, min 3 instruments
FULL = EvaluatorSettings(feedback_detail="full")
CORRELATED = EvaluatorSettings(factor_acceptance="equal_or_correlated")
EQUAL_RULE = EvaluatorSettings(factor_acceptance="equal")
UP = math.inf


def _above(x: float) -> float:
    return float(np.nextafter(x, UP))


def _below(x: float) -> float:
    return float(np.nextafter(x, -UP))


def _metrics(**kw: Any) -> _Metrics:
    """Metrics of a candidate that passes every check but equal values (override any)."""
    base: dict[str, Any] = {
        "n_c": 12,
        "n_t": 12,
        "overlap": 1.0,
        "coverage": 1.0,
        "nan_c": 0,
        "nan_t": 0,
        "nan_match": 1.0,
        "filled": 0,
        "truth_nan": 0,
        "equal": 0.0,
        "dates": DateICs(1.0, 1.0, 100, 100, 0, 0),
        "lag": {1: 0.0, -1: 0.0},
    }
    return _Metrics(**(base | kw))


def _idx(dates: int, insts: int) -> pd.MultiIndex:
    return pd.MultiIndex.from_product(
        [pd.bdate_range("2020-01-02", periods=dates), [f"I{i}" for i in range(insts)]],
        names=["datetime", "instrument"],
    )


# -- each threshold on its edge -----------------------------------------------------------------
def test_nan_match_threshold_is_inclusive() -> None:
    assert _check(_metrics(nan_match=0.99), "equal_or_scaled", S).nan_ok
    assert not _check(_metrics(nan_match=_below(0.99)), "equal_or_scaled", S).nan_ok


def test_equal_value_threshold_is_strict() -> None:
    assert not _check(_metrics(equal=0.99), "equal", S).eq_ok
    assert _check(_metrics(equal=_above(0.99)), "equal", S).eq_ok


@pytest.mark.parametrize("field", ["overlap", "coverage"])
def test_overlap_and_coverage_thresholds_are_inclusive_each_alone(field: str) -> None:
    assert _check(_metrics(**{field: 0.99}), "equal_or_scaled", S).ic_path
    assert not _check(_metrics(**{field: _below(0.99)}), "equal_or_scaled", S).ic_path


@pytest.mark.parametrize(
    ("equal", "lag", "shift"),
    [
        (0.0, {1: 0.995, -1: 0.0}, 1),  # yesterday's value
        (0.0, {1: 0.0, -1: 0.995}, -1),  # tomorrow's value
        (0.0, {1: 0.995, -1: 0.995}, 1),  # a tie is reported as late
        (0.0, {1: 0.99, -1: 0.0}, 0),  # on the threshold: not shifted
        (0.0, {1: _above(0.99), -1: 0.0}, 1),
        (0.0, {1: 0.0, -1: _above(0.99)}, -1),
        (0.995, {1: 0.995, -1: 0.0}, 0),  # the truth explains it as well: not shifted
        (0.995, {1: _above(0.995), -1: 0.0}, 1),
        (0.996, {1: 0.0, -1: 0.995}, 0),
    ],
)
def test_shift_needs_the_threshold_and_to_beat_the_unshifted_ratio(
    equal: float, lag: dict[int, float], shift: int
) -> None:
    assert _check(_metrics(equal=equal, lag=lag), "equal_or_scaled", S).shift == shift


def test_correlated_rule_thresholds_are_strict_on_ic_and_rank_ic() -> None:
    def ok(ic: float, ric: float) -> bool:
        m = _metrics(dates=DateICs(ic, ric, 100, 100, 0, 0))
        return _correlation_ok(m, "equal_or_correlated", S)[0]

    hi = _above(0.99)
    assert ok(hi, hi)
    assert not ok(0.99, hi) and not ok(hi, 0.99)
    assert not ok(math.nan, hi) and not ok(hi, math.nan)
    assert _correlation_ok(_metrics(), "equal_or_correlated", S)[1] == "threshold 0.99"


def test_scaled_rule_ic_is_inclusive_and_rank_ic_strict() -> None:
    def ok(ic: float, ric: float) -> bool:
        m = _metrics(dates=DateICs(ic, ric, 100, 100, 0, 0))
        return _correlation_ok(m, "equal_or_scaled", S)[0]

    hi = _above(0.99)
    assert ok(0.999999, hi)
    assert not ok(_below(0.999999), hi)
    assert not ok(0.999999, 0.99)
    assert not ok(math.nan, hi) and not ok(1.0, math.nan)
    assert ok(1.0, 1.0)
    assert _correlation_ok(_metrics(), "equal_or_scaled", S)[1] == (
        "per-date affine transform when IC >= 0.999999"
    )


def test_the_equal_rule_has_no_correlation_path() -> None:
    assert _correlation_ok(_metrics(), "equal", S) == (
        False,
        "not an acceptance path under this rule",
    )


def test_date_coverage_needs_scored_dates_and_is_inclusive() -> None:
    assert _dates_ok(_metrics(dates=DateICs(1.0, 1.0, 100, 99, 0, 0)), S)  # 0.99
    assert not _dates_ok(_metrics(dates=DateICs(1.0, 1.0, 100, 98, 0, 0)), S)
    assert not _dates_ok(_metrics(dates=DateICs(math.nan, math.nan, 0, 0, 0, 0)), S)
    anything = S.model_copy(update={"ic_date_coverage_threshold": 0.0})
    assert not _dates_ok(_metrics(dates=DateICs(math.nan, math.nan, 0, 0, 0, 0)), anything)
    assert _dates_ok(_metrics(dates=DateICs(0.0, 0.0, 1, 0, 0, 0)), anything)


# -- the acceptance rule: each condition alone ----------------------------------------------------
_PASS: dict[str, Any] = {
    "rule": "equal_or_scaled",
    "nan_ok": True,
    "eq_ok": False,
    "corr_ok": True,
    "corr_text": "",
    "dates_ok": True,
    "ic_path": True,
    "shift": 0,
}


@pytest.mark.parametrize(
    ("change", "accepted_by"),
    [
        ({}, "correlation"),
        ({"eq_ok": True}, "equal_values"),
        ({"eq_ok": True, "corr_ok": False, "dates_ok": False, "ic_path": False}, "equal_values"),
        ({"nan_ok": False}, ""),
        ({"nan_ok": False, "eq_ok": True}, ""),
        ({"shift": 1}, ""),
        ({"shift": -1, "eq_ok": True}, ""),
        ({"corr_ok": False}, ""),
        ({"dates_ok": False}, ""),
        ({"ic_path": False}, ""),
    ],
)
def test_accepted_by_each_condition(change: dict[str, Any], accepted_by: str) -> None:
    assert _Checks(**(_PASS | change)).accepted_by == accepted_by


# -- per-date IC on hand-built panels ------------------------------------------------------------
def test_date_ics_docstring_example() -> None:
    idx = _idx(2, 3)
    truth = pd.Series([1.0, 2, 3, 4, 5, 7], idx)
    d = date_ics(pd.Series([0.0, 0, 0, 4, 5, 7], idx), truth, 3)
    assert (d.ic, d.rank_ic, d.scored, d.usable, d.flat, d.sparse) == (0.5, 0.5, 2, 1, 0, 0)
    assert d.coverage == 0.5


def test_date_ics_exact_pearson_and_spearman() -> None:
    idx = _idx(2, 4)
    truth = pd.Series([1.0, 2, 3, 4, 1, 2, 3, 4], idx)
    cand = pd.Series([1.0, 2, 3, 10, 4, 3, 2, 1], idx)  # monotone on day 1, reversed on day 2
    d = date_ics(cand, truth, 3)
    pearson = float(np.corrcoef([1, 2, 3, 4], [1, 2, 3, 10])[0, 1])
    assert d.ic == pytest.approx((pearson - 1.0) / 2, abs=1e-12)
    assert d.rank_ic == pytest.approx(0.0, abs=1e-12)  # (1 + -1) / 2
    assert (d.scored, d.usable) == (2, 2)


def test_ranks_average_ties_and_both_index_layouts_agree() -> None:
    idx = _idx(1, 4)
    truth = pd.Series([1.0, 2, 3, 4], idx)
    cand = pd.Series([1.0, 1, 2, 3], idx)  # a tie: ranks 1.5, 1.5, 3, 4
    expected = float(np.corrcoef([1, 2, 3, 4], [1.5, 1.5, 3, 4])[0, 1])
    assert date_ics(cand, truth, 3).rank_ic == pytest.approx(expected, abs=1e-12)
    # a duplicated row makes the index not unique: the group-by rank path, same ranks
    dup = pd.MultiIndex.from_tuples([*idx, idx[3]], names=idx.names)
    truth2 = pd.Series([1.0, 2, 3, 4, 4], dup)
    cand2 = pd.Series([1.0, 1, 2, 3, 3], dup)
    expected2 = float(np.corrcoef([1, 2, 3, 4.5, 4.5], [1.5, 1.5, 3, 4.5, 4.5])[0, 1])
    assert date_ics(cand2, truth2, 3).rank_ic == pytest.approx(expected2, abs=1e-12)
    assert date_ics(cand2, truth2, 3).ic == pytest.approx(
        float(np.corrcoef([1, 2, 3, 4, 4], [1, 1, 2, 3, 3])[0, 1]), abs=1e-12
    )


def test_min_instruments_is_inclusive_for_truth_and_candidate() -> None:
    idx = _idx(2, 3)
    truth = pd.Series([1.0, 2, 3, 1, 2, np.nan], idx)  # 3 values, then 2
    d = date_ics(truth * 2, truth, 3)
    assert (d.scored, d.sparse, d.usable) == (1, 1, 1)
    assert date_ics(truth * 2, truth, 2).scored == 2
    cand = pd.Series([1.0, 2, np.nan, 1, 2, 3], idx)  # 2 paired values on the scored date
    d2 = date_ics(cand, truth, 3)
    assert (d2.scored, d2.usable, d2.ic) == (1, 0, 0.0)
    assert date_ics(cand, truth, 2).usable == 2


def test_flat_truth_edge_is_inclusive_in_atol_and_rtol() -> None:
    idx = _idx(2, 3)
    truth = pd.Series([1.0, 1.25, 1.5, 1, 2, 3], idx)  # day 1 spans 0.5 (exact in binary)
    cand = pd.Series([3.0, 2, 1, 1, 2, 3], idx)
    on_atol = date_ics(cand, truth, 3, atol=0.5, rtol=0.0)
    assert (on_atol.flat, on_atol.scored, on_atol.ic) == (1, 1, 1.0)
    assert date_ics(cand, truth, 3, atol=_below(0.5), rtol=0.0).flat == 0
    on_rtol = date_ics(cand, truth, 3, atol=0.0, rtol=0.5 / 1.5)  # 0.5 / max |truth| 1.5
    assert on_rtol.flat == 1
    neg = pd.Series([-1.0, -1.25, -1.5, 1, 2, 3], idx)  # max |truth| of a negative date
    assert date_ics(cand, neg, 3, atol=0.0, rtol=0.5 / 1.5).flat == 1
    assert date_ics(cand, neg, 3, atol=0.0, rtol=_below(0.5 / 1.5)).flat == 0
    both = date_ics(cand, truth, 3, atol=0.25, rtol=0.25 / 1.5)
    assert both.flat == 1
    assert date_ics(cand, truth, 3).flat == 0  # the default tolerance is far smaller
    # a date whose only finite values are NaN elsewhere: extremes of an empty date are 0
    sparse = pd.Series([np.nan, np.nan, np.nan, 1, 2, 3], idx)
    d = date_ics(cand, sparse, 3)
    assert (d.scored, d.sparse, d.flat) == (1, 1, 0)


def test_constant_candidate_dates_score_zero_including_all_zero() -> None:
    idx = _idx(3, 3)
    truth = pd.Series([1.0, 2, 3] * 3, idx)
    zeros = pd.Series([1.0, 2, 3, 0, 0, 0, 5, 5, 5], idx)
    d = date_ics(zeros, truth, 3)
    assert (d.scored, d.usable) == (3, 1)
    assert d.ic == pytest.approx(1 / 3) and d.rank_ic == pytest.approx(1 / 3)
    tiny = pd.Series([1.0, 2, 3, 1e6, 1e6, 1e6 + 1e-3, -1e-9, 0, 1e-9], idx)
    t = date_ics(tiny, truth, 3)  # small moves are still moves: usable
    assert t.usable == 3 and t.ic == pytest.approx(
        (1 + np.corrcoef([1, 2, 3], [0, 0, 1])[0, 1] + 1) / 3
    )


def test_no_scored_date_or_no_candidate_value() -> None:
    idx = _idx(2, 3)
    truth = pd.Series([1.0, 2, 3, 4, 5, 6], idx)
    none = date_ics(pd.Series(np.nan, idx), truth, 3)
    assert (none.ic, none.rank_ic, none.scored, none.usable) == (0.0, 0.0, 2, 0)
    assert (none.flat, none.sparse) == (0, 0)
    gappy = truth.copy()
    gappy.iloc[3:5] = np.nan  # the second date: 1 finite value, sparse
    g = date_ics(pd.Series(np.nan, idx), gappy, 3)
    assert (g.ic, g.scored, g.usable, g.flat, g.sparse) == (0.0, 1, 0, 0, 1)
    flat = pd.Series([1.0] * 6, idx)
    d = date_ics(truth, flat, 3)
    assert math.isnan(d.ic) and math.isnan(d.rank_ic)
    assert (d.scored, d.usable, d.flat, d.sparse) == (0, 0, 2, 0)
    assert math.isnan(d.coverage)
    empty = pd.Series([], index=_idx(0, 3), dtype=float)
    e = date_ics(empty, empty, 3)
    assert math.isnan(e.ic) and (e.scored, e.usable, e.flat, e.sparse) == (0, 0, 0, 0)


# -- compare_to_truth: metrics and the report ----------------------------------------------------
def _scaled_with_a_filled_nan() -> tuple[pd.Series, pd.Series]:
    idx = _idx(3, 4)
    truth = pd.Series([1.0, 2, 3, 4, 2, 4, 6, 9, np.nan, 1, 5, 2], idx)
    cand = truth * 2 + 1
    cand.iloc[8] = 0.0  # filled where the truth is NaN
    return cand, truth


def test_metrics_are_exact() -> None:
    cand, truth = _scaled_with_a_filled_nan()
    short = cand.drop(cand.index[[1, 2]])  # two rows missing
    extra = pd.concat(
        [
            short,
            pd.Series(
                [7.0],
                pd.MultiIndex.from_tuples(
                    [(pd.Timestamp("2030-01-01"), "Z")], names=truth.index.names
                ),
            ),
        ]
    )
    m = compare_to_truth(extra, truth, S).metrics
    assert m == {
        "row_ratio": 11 / 12,
        "index_overlap": 10 / 12,
        "finite_coverage": 9 / 11,
        "nan_candidate": 2,
        "nan_truth": 1,
        "nan_match": 0.0,
        "equal_value_ratio": 0.0,
        "ic": m["ic"],
        "rank_ic": m["rank_ic"],
        "ic_dates": 3,
        "ic_dates_usable": 2,
        "ic_date_coverage": 2 / 3,
        "ic_dates_flat": 0,
        "ic_dates_sparse": 0,
        "equal_value_ratio_lag1": 2 / 12,  # both NaN: the 2 missing rows on the first date
        "equal_value_ratio_lead1": 1 / 12,
        "truth_scale": 3.0,  # the median of the truth's finite nonzero |values|
        "equal_value_atol": 1e-6,  # 1e-6 * min(1, 3.0)
        "acceptance_rule": "equal_or_scaled",
        "accepted_by": "",
        "mismatch": "scale",
    }
    assert m["ic"] == pytest.approx(2 / 3) and m["rank_ic"] == pytest.approx(2 / 3)


def test_nan_match_counts_the_filled_rows_exactly() -> None:
    idx = _idx(4, 3)
    truth = pd.Series(np.arange(12.0) % 5 + 1, idx)
    truth.iloc[[0, 4, 8, 11]] = np.nan
    cand = truth.copy()
    cand.iloc[4] = 3.0  # 1 of the 4 NaN rows filled
    c = compare_to_truth(cand, truth, FULL)
    assert c.metrics["nan_match"] == 0.75 and c.metrics["nan_candidate"] == 3
    assert "the candidate has values on 1 of the 4 rows where the truth is NaN" in c.lines[2]
    assert c.lines[2].startswith("[FAIL] NaN pattern") and not c.decision
    assert compare_to_truth(truth, truth, S).metrics["nan_match"] == 1.0


def test_full_report_lines() -> None:
    cand, truth = _scaled_with_a_filled_nan()
    c = compare_to_truth(cand, truth, FULL)
    assert (c.decision, c.accepted_by, c.mismatch) == (False, "", "scale")
    fill = (
        "NaN pattern: the candidate has values on 1 of the 1 rows where the truth is NaN "
        "(suspended days, warm-up); share kept NaN 0.000 (threshold 0.99)"
    )
    eq = "equal values (|diff| <= 1e-06 + 1e-05*|truth|): 0.0000 (threshold 0.99)"
    assert c.lines[:6] == [
        "rows: 12 vs 12 in the ground truth (ratio 1.000); index overlap 1.000",
        "NaN on the ground-truth index: candidate 0, ground truth 1; finite coverage 1.000",
        f"[FAIL] {fill} — were missing values filled?",
        f"[FAIL] {eq}",
        "mean IC 1.0000, mean rank IC 1.0000 over 3 dates "
        "(per-date affine transform when IC >= 0.999999)",
        "IC dates: the candidate is usable on 3 of 3 scored dates (1.000, threshold 0.99); "
        "a date is scored when the truth has >= 3 finite values there, not all equal; it "
        "scores IC 0 when the candidate is constant or has < 3 finite values there; "
        "not scored: 0 flat and 0 sparse truth dates",
    ]
    assert c.lines[6] == "mismatch: scale — the values equal 2 * truth + 1 (a rescaled factor)"
    assert c.lines[7] == "rows that differ (12 in all; datetime, instrument, candidate, truth):"
    assert c.lines[-2:] == ["acceptance rule: equal_or_scaled", "decision: FAIL (scale)"]
    assert c.failures == [fill, eq]
    assert c.rows == c.lines[7:-2] and len(c.rows) == 6


def test_diagnostics_report_lines() -> None:
    cand, truth = _scaled_with_a_filled_nan()
    c = compare_to_truth(cand, truth, S)
    fill = (
        "NaN pattern: share of the truth's NaN rows (suspended days, warm-up) where the "
        "candidate is NaN too [0.0, 0.1) (threshold 0.99)"
    )
    assert c.lines[:6] == [
        "rows: 12; index overlap with the ground truth 1.0 (threshold 0.99)",
        "NaN on the ground-truth index: finite coverage 1.0 (threshold 0.99)",
        f"[FAIL] {fill} — were missing values filled?",
        "[FAIL] equal values (|diff| <= 1e-06*min(1, m) + 1e-05*|truth|; m: median |truth|): "
        "[0.0, 0.1) "
        "(threshold 0.99)",
        "mean IC 1.0, mean rank IC 1.0 (one decimal, rounded down) "
        "(per-date affine transform when IC >= 0.999999)",
        "IC dates: the candidate is usable on a share 1.0 of the scored dates (threshold "
        "0.99); a date is scored when the truth has >= 3 finite values there, not all equal; "
        "it scores IC 0 when the candidate is constant or has < 3 finite values there",
    ]
    assert c.lines[7] == "rows that differ (a sample; datetime, instrument, candidate):"
    assert c.failures[0] == fill


def test_low_overlap_report_and_failures() -> None:
    idx = _idx(4, 5)
    truth = pd.Series(np.random.default_rng(0).normal(size=len(idx)), idx)
    cand = truth * 2
    cand.iloc[[0, 7]] = np.nan  # coverage 18/20, usable on every date (4 values >= 3)
    for settings, low in (
        (FULL, "index overlap 1.000 or finite coverage 0.900 too low"),
        (S, "index overlap 1.0 or finite coverage [0.9, 1.0) too low"),
    ):
        c = compare_to_truth(cand, truth, settings)
        assert not c.decision and c.metrics["ic_date_coverage"] == 1.0
        assert c.lines[1].startswith("[FAIL] NaN on the ground-truth index")
        assert c.lines[1].endswith(" — the candidate is NaN where the truth has values")
        assert c.failures[-1] == low
        assert not c.lines[2].startswith("[FAIL]")  # the truth has no NaN: pattern kept
    ok = compare_to_truth(truth * 2, truth, S)
    assert ok.accepted_by == "correlation" and not ok.lines[1].startswith("[FAIL]")
    assert ok.failures == [] and ok.mismatch == "" and ok.rows == []
    assert ok.lines[-1] == (
        "decision: SUCCESS (correlation: not equal values, accepted by the correlation path)"
    )
    assert "mismatch" not in ok.metrics and ok.metrics["accepted_by"] == "correlation"
    # equal values accept without the IC path; the low-overlap line is then no failure
    same = compare_to_truth(truth, truth, S)
    assert same.accepted_by == "equal_values" and same.lines[-1] == (
        "decision: SUCCESS (equal-value ratio)"
    )


def test_failed_checks_are_marked_and_listed_per_rule() -> None:
    idx = _idx(5, 4)
    truth = pd.Series(np.random.default_rng(1).normal(size=len(idx)), idx)
    noise = pd.Series(np.random.default_rng(2).normal(size=len(idx)), idx)
    for rule, ic_fail in (
        ("equal_or_scaled", True),
        ("equal_or_correlated", True),
        ("equal", False),
    ):
        c = compare_to_truth(noise, truth, S, acceptance=rule)
        assert not c.decision and c.lines[-2] == f"acceptance rule: {rule}"
        assert c.lines[4].startswith("[FAIL] mean IC") == ic_fail
        ic_failed = [f for f in c.failures if f.startswith("mean IC")]
        assert len(ic_failed) == int(ic_fail)
        assert not c.lines[5].startswith("[FAIL]")  # usable on every date
        assert c.failures[0].startswith("equal values")
    constant = truth.where(truth.index.get_level_values("datetime") == idx[0][0], 1.0)
    c = compare_to_truth(constant, truth, CORRELATED)
    assert c.lines[5].startswith("[FAIL] IC dates")
    assert any(f.startswith("IC dates:") for f in c.failures)
    assert (
        not compare_to_truth(constant, truth, S, acceptance="equal").lines[5].startswith("[FAIL]")
    )


@pytest.mark.parametrize(
    ("k", "what"), [(1, "one day late (yesterday's value)"), (-1, "one day early (look-ahead)")]
)
def test_a_shifted_truth_is_rejected_and_named(k: int, what: str) -> None:
    idx = _idx(200, 3)
    truth = pd.Series(np.random.default_rng(3).normal(size=len(idx)), idx)
    cand = truth.groupby(level="instrument").shift(k)  # NaN where the shift has no value
    c = compare_to_truth(cand, truth, S)
    msg = f"dates: the values equal the ground truth shifted {what}; check Ref/shift use"
    assert not c.decision
    assert msg in c.failures and f"[FAIL] {msg}" in c.lines


def test_the_rule_argument_overrides_the_setting_and_unknown_rules_raise() -> None:
    idx = _idx(3, 4)
    truth = pd.Series(np.arange(12.0) % 7, idx)
    assert compare_to_truth(truth * 2, truth, S).decision
    assert not compare_to_truth(truth * 2, truth, S, acceptance="equal").decision
    eq_only = S.model_copy(update={"factor_acceptance": "equal"})
    assert not compare_to_truth(truth * 2, truth, eq_only).decision
    assert compare_to_truth(truth * 2, truth, eq_only, acceptance="equal_or_scaled").decision
    with pytest.raises(InvalidInputError, match=r"acceptance rule 'scaled'; expected one of"):
        compare_to_truth(truth, truth, S, acceptance="scaled")


def test_empty_truth() -> None:
    empty = pd.Series([], index=_idx(0, 3), dtype=float)
    c = compare_to_truth(empty, empty, FULL)
    assert not c.decision
    assert c.metrics["row_ratio"] == math.inf and c.metrics["index_overlap"] == 0.0
    assert c.metrics["equal_value_ratio"] == 0.0 and c.metrics["finite_coverage"] == 0.0
    assert c.lines[0] == "rows: 0 vs 0 in the ground truth (ratio inf); index overlap 0.000"


# -- written against the survivors of the first mutmut run --------------------------------------
def test_a_truth_without_nan_keeps_the_pattern_fully() -> None:
    idx = _idx(3, 4)
    truth = pd.Series(np.arange(12.0) % 5, idx)
    c = compare_to_truth(truth * 2, truth, FULL)
    assert c.metrics["nan_match"] == 1.0
    assert "values on 0 of the 0 rows where the truth is NaN" in c.lines[2]
    assert "share kept NaN 1.000" in c.lines[2]


def test_coverage_of_a_truth_with_one_value() -> None:
    idx = _idx(1, 3)
    truth = pd.Series([np.nan, np.nan, 2.0], idx)
    cand = pd.Series([np.nan, np.nan, 4.0], idx)
    assert compare_to_truth(cand, truth, S).metrics["finite_coverage"] == 1.0
    assert compare_to_truth(cand * np.nan, truth, S).metrics["finite_coverage"] == 0.0


def test_the_date_rule_uses_the_settings_tolerance() -> None:
    idx = _idx(2, 3)
    truth = pd.Series([1.0, 1.25, 1.5, 1, 2, 3], idx)
    cand = truth * 2
    assert compare_to_truth(cand, truth, S).metrics["ic_dates_flat"] == 0
    by_atol = S.model_copy(update={"equal_value_atol": 0.5})
    assert compare_to_truth(cand, truth, by_atol).metrics["ic_dates_flat"] == 1
    by_rtol = S.model_copy(update={"equal_value_rtol": 0.5})
    assert compare_to_truth(cand, truth, by_rtol).metrics["ic_dates_flat"] == 1


def test_a_nearly_constant_candidate_date_is_not_usable() -> None:
    """Constant means a population standard deviation at most 1e-12 of the largest value."""
    idx = _idx(2, 3)
    truth = pd.Series([1.0, 2, 3, 1, 2, 3], idx)
    # deviations -0.5, -0.5, +1 (x 1e-6): std 0.71e-6, under 1e-12 * 1e6 = 1e-6
    flat = pd.Series([1.0, 2, 3, 1e6, 1e6, 1e6 + 1.5e-6], idx)
    assert date_ics(flat, truth, 3).usable == 1
    moving = pd.Series([1.0, 2, 3, 1e6, 1e6, 1e6 + 3e-6], idx)  # std 1.41e-6
    assert date_ics(moving, truth, 3).usable == 2


def test_lines_of_an_accepted_factor() -> None:
    idx = _idx(3, 4)
    truth = pd.Series(np.arange(12.0) % 5, idx)
    same = compare_to_truth(truth, truth, S)
    assert same.decision and not any(line.startswith("[FAIL]") for line in same.lines)
    scaled = compare_to_truth(truth * 2, truth, S)  # only the equal-value line fails
    assert scaled.decision
    assert [ln for ln in scaled.lines if ln.startswith("[FAIL]")] == [
        "[FAIL] equal values (|diff| <= 1e-06*min(1, m) + 1e-05*|truth|; m: median |truth|): "
        "[0.2, 0.3) "
        "(threshold 0.99)"
    ]


def test_the_mismatch_explanation_follows_the_precision() -> None:
    idx = _idx(6, 5)
    truth = pd.Series(np.random.default_rng(4).normal(size=len(idx)), idx)
    cand = truth + np.random.default_rng(5).normal(size=len(idx))
    full = compare_to_truth(cand, truth, FULL)
    ic = full.metrics["ic"]
    assert 0.0 < ic < 0.8
    assert f"(mean IC {ic:.3f})" in full.lines[6] and full.lines[6].startswith("mismatch: values")
    diag = compare_to_truth(cand, truth, S)
    assert f"(mean IC in {band(ic)})" in diag.lines[6]


# -- the absolute tolerance follows the truth's scale (issue 25) -------------------------------
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
    c = compare_to_truth(cand, truth, EQUAL_RULE)
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


def test_report_lines_name_the_scaled_tolerance() -> None:
    idx = _idx(3, 4)
    truth = pd.Series((np.arange(12.0) % 5 + 1) * 1e-10, idx)  # median 2.5e-10
    c = compare_to_truth(-truth, truth, FULL)
    scale = c.metrics["truth_scale"]
    assert scale == pytest.approx(2.5e-10, rel=1e-12)
    assert c.metrics["equal_value_atol"] == 1e-6 * scale
    assert (c.decision, c.mismatch, c.metrics["equal_value_ratio"]) == (False, "sign", 0.0)
    assert c.lines[3] == (
        f"[FAIL] equal values (|diff| <= {1e-6 * scale:g} + 1e-05*|truth|; atol 1e-06 x the "
        f"truth's median |value| {scale:.3g}): 0.0000 (threshold 0.99)"
    )
    diag = compare_to_truth(-truth, truth, S).lines[3]
    assert diag == (
        "[FAIL] equal values (|diff| <= 1e-06*min(1, m) + 1e-05*|truth|; m: median |truth|): "
        "[0.0, 0.1) (threshold 0.99)"
    )
    no_atol = {"equal_value_atol": 0.0}
    full0 = compare_to_truth(-truth, truth, FULL.model_copy(update=no_atol)).lines[3]
    assert full0 == "[FAIL] equal values (|diff| <= 0 + 1e-05*|truth|): 0.0000 (threshold 0.99)"
    diag0 = compare_to_truth(-truth, truth, S.model_copy(update=no_atol)).lines[3]
    assert diag0 == (
        "[FAIL] equal values (|diff| <= 0 + 1e-05*|truth|): [0.0, 0.1) (threshold 0.99)"
    )
    unit = truth * 1e10  # median 2.5: the setting itself, and no note
    assert compare_to_truth(-unit, unit, FULL).lines[3] == (
        "[FAIL] equal values (|diff| <= 1e-06 + 1e-05*|truth|): 0.0000 (threshold 0.99)"
    )
    at_one = pd.Series(np.where(np.arange(12) % 2, 1.0, -1.0), idx)  # median exactly 1: no note
    assert (
        compare_to_truth(at_one * 2, at_one, FULL)
        .lines[3]
        .startswith("[FAIL] equal values (|diff| <= 1e-06 + 1e-05*|truth|): ")
    )
