"""Boundaries of the factor checks (``costeer_lab/evaluate/_factor_checks.py``): tolerances,
thresholds, the shifted-output guard and every format check, each pinned exactly.

Kept outside ``tests/evaluate/`` while another branch owns that folder; written against the
surviving mutants of ``make mutation`` (see docs/testing.md).
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from costeer_lab.evaluate import EvaluatorSettings
from costeer_lab.evaluate._factor_checks import (
    _cross_sectional_ranks,
    _equal_ratio,
    _mean_ic,
    compare_to_truth,
    read_factor,
)

S = EvaluatorSettings()
FULL = EvaluatorSettings(feedback_detail="full")  # the researcher's precise report lines


def _index(days: int = 20, n: int = 6) -> pd.MultiIndex:
    return pd.MultiIndex.from_product(
        [pd.bdate_range("2021-01-04", periods=days), [f"I{i}" for i in range(n)]],
        names=["datetime", "instrument"],
    )


def _truth(days: int = 20, n: int = 6, seed: int = 0) -> pd.Series:
    idx = _index(days, n)
    return pd.Series(np.random.default_rng(seed).normal(1.0, 0.5, len(idx)), idx, name="f")


def _bytes(obj: pd.DataFrame | pd.Series) -> bytes:
    frame = obj.to_frame() if isinstance(obj, pd.Series) else obj
    buf = io.BytesIO()
    frame.to_parquet(buf)
    return buf.getvalue()


# -- tolerances and thresholds ---------------------------------------------------------------
def test_equal_value_tolerance_is_atol_plus_rtol_times_truth() -> None:
    truth = pd.Series([100.0, 0.0, np.nan, 1.0])
    within = pd.Series([100.0 + 0.9e-3, 0.9e-6, np.nan, 1.0])  # 1e-6 + 1e-5 * 100 = 1.001e-3
    assert _equal_ratio(within, truth, S, 1.0) == 1.0
    outside = pd.Series([100.0 + 1.1e-3, 1.1e-6, 0.0, 1.0 + 2e-5])
    assert _equal_ratio(outside, truth, S, 1.0) == 0.0
    assert _equal_ratio(pd.Series([], dtype=float), pd.Series([], dtype=float), S, 1.0) == 0.0


def test_five_times_looser_tolerance_would_accept_a_wrong_factor() -> None:
    """A candidate 2e-5 (relative) off everywhere is not "equal" at the default tolerance."""
    truth = _truth()
    cand = truth * (1 + 2e-5)
    c = compare_to_truth(cand, truth, S)
    assert c.metrics["equal_value_ratio"] == 0.0
    loose = EvaluatorSettings(equal_value_rtol=5e-5)
    assert compare_to_truth(cand, truth, loose).metrics["equal_value_ratio"] == 1.0


def test_equal_value_threshold_is_strict() -> None:
    truth = _truth(days=20, n=5)  # 100 rows
    cand = truth.copy()
    cand.iloc[:1] += 1.0  # 99 of 100 equal: ratio 0.99, not > 0.99
    c = compare_to_truth(cand, truth, EvaluatorSettings(ic_threshold=1.0))
    assert c.metrics["equal_value_ratio"] == pytest.approx(0.99)
    assert not c.decision and c.lines[-1].startswith("decision: FAIL (")
    ok = compare_to_truth(cand, truth, EvaluatorSettings(equal_value_threshold=0.98))
    assert ok.decision and "equal-value ratio" in ok.lines[-1]


def test_ic_path_succeeds_for_a_scaled_factor_and_needs_both_ics() -> None:
    truth = _truth()
    c = compare_to_truth(truth * 3 + 1, truth, S)
    assert c.decision and c.metrics["equal_value_ratio"] == 0.0
    assert c.metrics["ic"] == pytest.approx(1.0) and c.metrics["rank_ic"] == pytest.approx(1.0)
    assert c.accepted_by == "correlation" and c.lines[-1].startswith("decision: SUCCESS (corr")
    # a monotone but non-linear transform: rank IC 1, Pearson IC below 1
    bent = compare_to_truth(np.exp(truth * 4), truth, S)
    assert bent.metrics["rank_ic"] == pytest.approx(1.0) and bent.metrics["ic"] < 0.99
    assert not bent.decision
    at = EvaluatorSettings(  # strictly greater needed
        ic_threshold=float(bent.metrics["ic"]), factor_acceptance="equal_or_correlated"
    )
    assert not compare_to_truth(np.exp(truth * 4), truth, at).decision


def test_ic_path_needs_overlap_and_coverage() -> None:
    truth = _truth(days=20, n=6)
    scaled = truth * 2
    gaps = np.arange(6) * 7  # one row on each of 6 dates: every date keeps 5 instruments
    short = scaled.drop(scaled.index[gaps])  # overlap 0.95
    c = compare_to_truth(short, truth, FULL)
    assert c.metrics["index_overlap"] == pytest.approx(0.95) and not c.decision
    assert c.metrics["ic_date_coverage"] == 1.0
    assert any("index overlap 0.950 or finite coverage" in f for f in c.failures)
    lenient = EvaluatorSettings(index_overlap_threshold=0.95, feedback_detail="full")
    assert compare_to_truth(short, truth, lenient).decision  # >= threshold
    holes = scaled.copy()
    holes.iloc[gaps] = np.nan  # present but NaN: coverage 0.95
    c = compare_to_truth(holes, truth, FULL)
    assert c.metrics["finite_coverage"] == pytest.approx(0.95) and not c.decision
    assert any(line.startswith("[FAIL] NaN on the ground-truth index") for line in c.lines)
    at_threshold = compare_to_truth(holes, truth, lenient)  # coverage == threshold passes
    assert at_threshold.decision and not at_threshold.failures
    assert at_threshold.lines[1].startswith("NaN on the ground-truth index: candidate 6")
    diagnostics = compare_to_truth(short, truth, S)  # the same failure, in bands
    assert any("index overlap [0.9, 1.0) or finite coverage" in f for f in diagnostics.failures)


def test_a_failed_comparison_lists_each_failed_check_once() -> None:
    truth = _truth()
    noise = pd.Series(np.random.default_rng(9).normal(size=len(truth)), truth.index)
    c = compare_to_truth(noise, truth, S)
    assert not c.decision and c.lines[-1] == "decision: FAIL (values)"
    fails = [line.removeprefix("[FAIL] ") for line in c.lines if line.startswith("[FAIL] ")]
    assert (
        len(fails) == 2 and fails[0].startswith("equal values") and fails[1].startswith("mean IC")
    )
    assert c.failures == fails  # overlap and coverage are fine: only the two value checks
    assert c.mismatch == "values" and any(ln.startswith("mismatch: values") for ln in c.lines)


def test_shifted_outputs_fail_and_say_which_way() -> None:
    truth = _truth()
    by = truth.groupby(level="instrument")
    late = compare_to_truth(by.shift(1), truth, EvaluatorSettings(index_overlap_threshold=0.5))
    assert not late.decision
    assert any("one day late" in f for f in late.failures)
    assert late.metrics["equal_value_ratio_lag1"] == pytest.approx(1.0)
    early = compare_to_truth(by.shift(-1), truth, EvaluatorSettings(index_overlap_threshold=0.5))
    assert any("one day early (look-ahead)" in f for f in early.failures)
    assert early.metrics["equal_value_ratio_lead1"] == pytest.approx(1.0)
    exact = compare_to_truth(truth.copy(), truth, S)
    assert exact.decision and not exact.failures
    assert exact.metrics["equal_value_ratio_lag1"] < 0.5


def test_comparison_metrics_and_lines() -> None:
    truth = _truth(days=10, n=4)
    cand = pd.concat([truth.iloc[4:], truth.iloc[:2] * 0 + 5.0])  # 38 of 40 rows, 2 wrong
    c = compare_to_truth(cand, truth, FULL)
    m = c.metrics
    assert (m["row_ratio"], m["index_overlap"]) == (pytest.approx(0.95), pytest.approx(0.95))
    assert (m["nan_candidate"], m["nan_truth"]) == (2, 0)
    assert m["finite_coverage"] == pytest.approx(0.95)
    assert m["equal_value_ratio"] == pytest.approx(36 / 40)
    assert c.lines[0] == "rows: 38 vs 40 in the ground truth (ratio 0.950); index overlap 0.950"
    scale = float(truth.abs().median())  # below 1: the absolute tolerance shrinks with it
    assert c.lines[3].startswith(
        f"[FAIL] equal values (|diff| <= {1e-6 * scale:g} + 1e-05*|truth|; atol 1e-06 x the "
        f"truth's median |value| {scale:.3g}): 0.9000"
    )
    empty = compare_to_truth(truth.iloc[:0], truth.iloc[:0], S)
    assert empty.metrics["row_ratio"] == math.inf and empty.metrics["index_overlap"] == 0.0


# -- IC helpers ------------------------------------------------------------------------------
def test_mean_ic_counts_dates_with_too_few_candidate_values_as_zero() -> None:
    """Issue 22: a date where the candidate has too few values scores 0; it is not dropped."""
    truth = _truth(days=4, n=3)
    cand = truth.copy()
    cand.iloc[0] = np.nan  # the first date keeps 2 finite pairs: below min 3
    ic, dates = _mean_ic(cand, truth, 3, rank=False)
    assert ic == pytest.approx(0.75) and dates == 4
    two_ic, two_dates = _mean_ic(cand, truth, 2, rank=False)
    assert two_ic == pytest.approx(1.0) and two_dates == 4
    none_ic, none_dates = _mean_ic(cand * np.nan, truth, 3, rank=False)
    assert none_ic == 0.0 and none_dates == 4  # nothing usable: IC 0 on every scored date
    flat = truth * 0 + 1.0  # constant within each date: IC 0 on every date
    assert _mean_ic(flat, truth, 3, rank=False) == (0.0, 4)
    sparse_truth = truth.copy()
    sparse_truth.iloc[:2] = np.nan  # the truth itself has 1 value on the first date
    sparse_ic, sparse_dates = _mean_ic(truth, sparse_truth, 3, rank=False)
    assert sparse_ic == pytest.approx(1.0) and sparse_dates == 3
    assert math.isnan(_mean_ic(truth, truth * np.nan, 3, rank=False)[0])  # no date scored


def test_mean_ic_of_a_negated_factor_and_ranks() -> None:
    truth = _truth(days=6, n=5)
    ic, n = _mean_ic(-truth, truth, 3, rank=False)
    ric, _ = _mean_ic(-truth, truth, 3, rank=True)
    assert ic == pytest.approx(-1.0) and ric == pytest.approx(-1.0) and n == 6
    values = np.array([3.0, 1.0, 2.0, 2.0, 5.0, 5.0])
    dates = np.array([0, 0, 0, 1, 1, 1])
    want = [3.0, 1.0, 2.0, 1.0, 2.5, 2.5]
    assert _cross_sectional_ranks(values, dates, None).tolist() == want
    insts = np.array([0, 1, 2, 0, 1, 2])
    assert _cross_sectional_ranks(values, dates, insts).tolist() == want


def test_mean_ic_on_a_non_unique_index_uses_the_group_by_path() -> None:
    truth = _truth(days=5, n=4)
    dup = pd.concat([truth, truth])
    ic, n = _mean_ic(dup * 2, dup, 3, rank=True)
    assert ic == pytest.approx(1.0) and n == 5


# -- format checks ---------------------------------------------------------------------------
def test_read_factor_reports_exact_lines() -> None:
    rep = read_factor(_bytes(_truth(days=3, n=2)), "result.parquet")
    assert rep.ok and len(rep.lines) == 4
    assert rep.lines[0] == "[ok] output: result.parquet parsed (6 rows, 1 column 'f')"
    assert rep.lines[1].startswith("[ok] index: (datetime, instrument) with dtypes datetime64")
    assert rep.lines[2:] == [
        "[ok] frequency: daily (median gap 1 day)",
        "[ok] values: NaN 0 of 6 (0.0%), inf 0",
    ]


def test_reversed_index_levels_are_reordered() -> None:
    s = _truth(days=3, n=2).reorder_levels([1, 0])
    rep = read_factor(_bytes(s))
    assert rep.ok and "note: index levels were (instrument, datetime); reordered" in rep.lines
    assert rep.series is not None
    assert list(rep.series.index.names) == ["datetime", "instrument"]
    assert rep.series.index.is_monotonic_increasing


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s.to_frame().assign(g=1.0), "has 2 columns"),
        (lambda s: s.reset_index(drop=True), "index names are [None]"),
        (
            lambda s: s.rename_axis(["date", "instrument"]),
            "index names are ['date', 'instrument']",
        ),
        (lambda s: pd.concat([s, s.iloc[:2]]), "2 duplicated (datetime, instrument) pairs"),
        (lambda s: s.astype(str), "; expected float"),
        (lambda s: s * np.nan, "every value is NaN"),
    ],
)
def test_format_failures(mutate: object, message: str) -> None:
    rep = read_factor(_bytes(mutate(_truth(days=3, n=2))))  # type: ignore[operator]
    assert not rep.ok
    assert any(message in f for f in rep.failures), rep.failures
    assert any(line.startswith("[FAIL]") and message in line for line in rep.lines)


def test_unreadable_output_and_level_dtypes() -> None:
    rep = read_factor(b"not parquet", "out.parquet")
    assert rep.series is None and rep.failures[0].startswith("output: out.parquet could not be")
    s = _truth(days=3, n=2)
    s.index = pd.MultiIndex.from_product(
        [["a", "b", "c"], [1, 2]], names=["datetime", "instrument"]
    )
    rep = read_factor(_bytes(s))
    assert any("datetime level has dtype" in f for f in rep.failures)
    assert any("instrument level has dtype int64" in f for f in rep.failures)


@pytest.mark.parametrize(
    ("dates", "ok", "text"),
    [
        (pd.date_range("2021-01-04", periods=4, freq="D"), True, "daily (median gap 1 day)"),
        (pd.date_range("2021-01-04", periods=4, freq="4D"), True, "daily (median gap 4 day)"),
        (pd.date_range("2021-01-04", periods=4, freq="5D"), False, "median gap between dates"),
        (pd.date_range("2021-01-04", periods=4, freq="12h"), False, "time of day"),
        (pd.DatetimeIndex(["2021-01-04"]), True, "1 distinct date(s)"),
    ],
)
def test_frequency_check(dates: pd.DatetimeIndex, ok: bool, text: str) -> None:
    idx = pd.MultiIndex.from_product([dates, ["A", "B"]], names=["datetime", "instrument"])
    rep = read_factor(_bytes(pd.Series(np.arange(len(idx), dtype=float), idx, name="f")))
    assert rep.ok is ok
    assert any(text in line for line in rep.lines), rep.lines


# -- read_factor's limits, fail-closed paths and exact report texts (issue 23 survivors) ------
def test_default_row_limit_is_five_million() -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table({"f": pa.array(np.zeros(5_000_001, dtype=np.int8))}), buf)
    rep = read_factor(buf.getvalue())  # refused from the footer, before decoding
    assert rep.failures == ["output: result.parquet has 5000001 rows; at most 5000000 are read"]
    assert rep.series is None


def test_the_cpu_budget_is_passed_to_the_reader() -> None:
    data = _bytes(_truth(days=3, n=2))
    assert read_factor(data).ok
    rep = read_factor(data, cpu_s=0.0)
    assert rep.series is None
    assert rep.failures == [
        "output: decoding result.parquet took more than 0 s of CPU; "
        "a factor file decodes in milliseconds"
    ]


def test_errors_inside_the_checks_are_format_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the candidate's data makes the checks raise fails the output, never escapes."""
    from costeer_lab.evaluate import _factor_checks
    from costeer_lab.evaluate._factor_parquet import FactorFileError

    data = _bytes(_truth(days=3, n=2))

    def refuse(text: object, limit: int = 80) -> str:
        raise FactorFileError("output: out.parquet is odd")

    monkeypatch.setattr(_factor_checks, "short", refuse)
    rep = read_factor(data, "out.parquet")
    assert rep.series is None and not rep.ok
    assert rep.failures == ["output: out.parquet is odd"]
    assert rep.lines == ["[FAIL] output: out.parquet is odd"]

    def crash(text: object, limit: int = 80) -> str:
        raise OverflowError("deep inside pandas")

    monkeypatch.setattr(_factor_checks, "short", crash)
    rep = read_factor(data, "out.parquet")
    assert rep.series is None and not rep.ok
    assert rep.failures == ["output: out.parquet could not be checked (OverflowError)"]


def test_too_many_columns_shows_eight_names_of_at_most_40_characters() -> None:
    truth = _truth(days=3, n=2)
    long = "c" * 50
    frame = pd.DataFrame({long: truth} | {f"g{i}": truth for i in range(9)})
    rep = read_factor(_bytes(frame))
    shown = ["c" * 37 + "...", *[f"g{i}" for i in range(7)]]
    assert rep.failures == [
        f"columns: result.parquet has 10 columns {shown}; expected exactly one"
    ]
    assert rep.series is None


def test_wrong_index_names_are_shown_bounded() -> None:
    s = _truth(days=3, n=2).rename_axis(["d" * 50, None])
    rep = read_factor(_bytes(s))
    assert rep.failures == [
        f"index: index names are [{'d' * 37 + '...'!r}, None]; expected a MultiIndex "
        "['datetime', 'instrument'] (was the index reset or dropped?)"
    ]
    # at most 8 level names are shown
    frame = _truth(days=3, n=2).to_frame().reset_index()
    for i in range(8):
        frame[f"l{i}"] = frame["instrument"] + str(i)
    frame = frame.set_index(["datetime", *[f"l{i}" for i in range(8)], "instrument"])
    rep = read_factor(_bytes(frame))
    assert rep.failures == [
        "index: index names are ['datetime', 'l0', 'l1', 'l2', 'l3', 'l4', 'l5', 'l6']; "
        "expected a MultiIndex ['datetime', 'instrument'] (was the index reset or dropped?)"
    ]


def test_nan_share_and_every_value_nan_texts() -> None:
    s = _truth(days=2, n=2)
    s.iloc[0] = np.nan
    rep = read_factor(_bytes(s))
    assert rep.ok and rep.lines[-1] == "[ok] values: NaN 1 of 4 (25.0%), inf 0"
    one = s.iloc[:1]  # a single row, NaN
    rep = read_factor(_bytes(one))
    assert rep.series is not None  # the frame parsed; the values fail
    assert rep.failures == ["values: NaN 1 of 1 (100.0%), inf 0 — every value is NaN"]


def test_infinite_values_count_as_nan_by_default() -> None:
    s = _truth(days=2, n=2)
    s.iloc[0], s.iloc[1] = np.inf, -np.inf
    rep = read_factor(_bytes(s))
    assert rep.ok
    assert rep.lines[-1] == (
        "[ok] values: NaN 0 of 4 (0.0%), inf 2 (infinite values count as NaN)"
    )
    assert rep.series is not None and rep.series.dtype == np.float64
    assert rep.series.isna().tolist() == [True, True, False, False]
    exact = read_factor(_bytes(s), infinite="exact")
    assert exact.ok and exact.lines[-1] == "[ok] values: NaN 0 of 4 (0.0%), inf 2"
    assert exact.series is not None
    assert exact.series.tolist()[:2] == [np.inf, -np.inf]
    every = read_factor(_bytes(s * np.inf))  # +-inf everywhere: no NaN yet, not "every NaN"
    assert every.ok


def test_values_are_converted_to_float64() -> None:
    s = _truth(days=2, n=2)
    for values in (np.array([1, 2, 3, 4], dtype=np.int32), np.array([True, False, True, True])):
        rep = read_factor(_bytes(pd.Series(values, s.index, name="f")))
        assert rep.ok and rep.series is not None
        assert rep.series.dtype == np.float64
        assert rep.series.tolist() == [float(v) for v in values]


def test_two_dates_are_checked_for_their_gap() -> None:
    for gap, ok in ((1, True), (3, True), (10, False)):
        dates = pd.DatetimeIndex(
            ["2021-01-04", pd.Timestamp("2021-01-04") + pd.Timedelta(gap, "D")]
        )
        idx = pd.MultiIndex.from_product([dates, ["A", "B"]], names=["datetime", "instrument"])
        rep = read_factor(_bytes(pd.Series(np.arange(4.0), idx, name="f")))
        assert rep.ok is ok, rep.lines
    assert rep.failures == ["frequency: median gap between dates is 10.00 days; expected daily"]
