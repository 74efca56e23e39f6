"""Pure factor checks: parsing, format failures, metrics of the comparison."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costeer_lab.evaluate import EvaluatorSettings
from costeer_lab.evaluate._factor_checks import _mean_ic, compare_to_truth, read_factor


def frame(values: np.ndarray | None = None, days: int = 30, n: int = 8) -> pd.DataFrame:
    idx = pd.MultiIndex.from_product(
        [pd.bdate_range("2021-01-04", periods=days), [f"I{i}" for i in range(n)]],
        names=["datetime", "instrument"],
    )
    vals = np.random.default_rng(0).normal(size=len(idx)) if values is None else values
    return pd.DataFrame({"f": vals}, index=idx)


def to_bytes(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf)
    return buf.getvalue()


def test_good_frame_passes() -> None:
    rep = read_factor(to_bytes(frame()))
    assert rep.ok and rep.series is not None and len(rep.series) == 240
    assert all(line.startswith("[ok]") for line in rep.lines)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: b"not parquet", "could not be read as parquet"),
        (lambda: to_bytes(frame().assign(f=["x"] * 240)), "expected float"),
        (lambda: to_bytes(pd.concat([frame(), frame()])), "240 duplicated"),
        (lambda: to_bytes(frame().rename_axis(["date", "code"])), "['date', 'code']"),
        (
            lambda: to_bytes(
                frame().set_axis(
                    frame().index.set_levels(  # type: ignore[attr-defined]
                        frame().index.levels[0]  # type: ignore[attr-defined]
                        + pd.Timedelta(hours=15),
                        level=0,
                    )
                )
            ),
            "time of day",
        ),
        (
            lambda: to_bytes(
                frame().set_axis(
                    frame().index.set_levels(range(30), level=0)  # type: ignore[attr-defined]
                )
            ),
            "the datetime level has dtype int64",
        ),
    ],
)
def test_format_failures_are_named(make, message: str) -> None:  # type: ignore[no-untyped-def]
    rep = read_factor(make())
    assert not rep.ok
    assert any(message in f for f in rep.failures), rep.lines


def _series(df: pd.DataFrame) -> pd.Series:
    rep = read_factor(to_bytes(df))
    assert rep.series is not None
    return rep.series


def test_metrics_of_identical_negated_and_partial_candidates() -> None:
    s = EvaluatorSettings()
    truth = _series(frame())
    same = compare_to_truth(truth, truth, s)
    assert same.decision and same.metrics["ic"] == pytest.approx(1.0)
    assert same.metrics["equal_value_ratio"] == 1.0 and same.metrics["index_overlap"] == 1.0
    neg = compare_to_truth(-truth, truth, s)
    assert not neg.decision and neg.metrics["ic"] == pytest.approx(-1.0)
    assert neg.metrics["rank_ic"] == pytest.approx(-1.0)
    half = compare_to_truth(truth.iloc[: len(truth) // 2], truth, s)
    assert half.metrics["row_ratio"] == 0.5 and half.metrics["index_overlap"] == 0.5
    assert not half.decision
    scaled = compare_to_truth(truth * 2 + 1, truth, s)  # same ranking, other values
    assert scaled.decision and scaled.accepted_by == "correlation"


def _reference_ic(cand: pd.Series, truth: pd.Series, rank: bool) -> tuple[float, int]:
    """Per-date pandas correlations under the date rule of ``date_ics``: a date is scored when
    the truth has >= 3 finite values there that are not all equal (within the equal-value
    tolerance); it scores 0 when fewer than 3 pairs are finite or the candidate is constant."""
    ics = []
    for _, g in pd.DataFrame({"c": cand, "t": truth}).groupby(level="datetime"):
        t_all = g["t"].dropna()
        if len(t_all) < 3 or np.ptp(t_all) <= 1e-6 + 1e-5 * t_all.abs().max():
            continue  # not scored
        both = g.dropna()
        c, t = both["c"], both["t"]
        if rank:
            c, t = c.rank(), t.rank()
        flat = len(both) < 3 or both["c"].std(ddof=0) <= 1e-12 * both["c"].abs().max()
        ics.append(0.0 if flat or t.std() == 0 else float(c.corr(t)))
    return (float(np.mean(ics)) if ics else float("nan")), len(ics)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(3, 9),
    st.integers(2, 12),
    st.integers(0, 2**31),
    st.floats(0.0, 0.4),
    st.booleans(),
    st.booleans(),
)
def test_mean_ic_matches_a_pandas_reference(
    n: int, days: int, seed: int, nan_share: float, ties: bool, shuffled: bool
) -> None:
    """Both the dates × instruments layout (unique index) and the group-by fallback
    (duplicated rows) against per-date pandas correlations, with and without ties; dates where
    the candidate has too few values or is constant count as 0, not dropped (issue 22)."""
    rng = np.random.default_rng(seed)
    truth = frame(rng.normal(size=n * days), days=days, n=n)["f"]
    cand = truth + rng.normal(scale=rng.uniform(0.01, 3.0), size=len(truth))
    if ties:
        truth, cand = truth.round(0), cand.round(0)
    if shuffled:  # rows out of order, one duplicated: the group-by fallback
        order = rng.permutation(len(truth))
        order = np.append(order, order[0])
        truth, cand = truth.iloc[order], cand.iloc[order]
    cand[rng.random(len(cand)) < nan_share] = np.nan
    truth[rng.random(len(truth)) < nan_share / 2] = np.nan
    for rank in (False, True):
        got, scored = _mean_ic(cand, truth, 3, rank=rank)
        want, want_scored = _reference_ic(cand, truth, rank)
        assert scored == want_scored
        if want_scored == 0:
            assert np.isnan(got)
        else:
            assert got == pytest.approx(want, abs=1e-9)


def test_outputs_announcing_too_many_rows_are_refused_unread() -> None:
    """The footer is checked before decoding: a decompression bomb never reaches pandas."""
    idx = pd.MultiIndex.from_product(
        [pd.to_datetime(["2020-01-02", "2020-01-03"]), ["A", "B"]],
        names=["datetime", "instrument"],
    )
    buf = io.BytesIO()
    pd.DataFrame({"f": [1.0, 2, 3, 4]}, idx).to_parquet(buf)
    assert read_factor(buf.getvalue(), max_rows=4).ok
    rep = read_factor(buf.getvalue(), max_rows=3)
    assert not rep.ok and rep.failures == ["output: result.parquet has 4 rows; at most 3 are read"]
    rep = read_factor(buf.getvalue(), max_bytes=10)
    assert not rep.ok and "decodes to" in rep.failures[0]
