"""The equal-value tolerance follows the factor's own scale (``truth_scale``,
``effective_atol`` in ``costeer_lab/evaluate/_factor_mismatch.py``).

With a fixed absolute tolerance of 1e-6, a factor of size 1e-10 (a turnover over a market
value in raw units) equalled its negation, its lag, its window change and all zeros: a
sign-flipped turnover factor was accepted. Each planted mistake is checked here at three scales
(1e-10, 1e-6, 1e3), with the truth and float-noise rewrites of it accepted at each. The new
branch is pinned exactly in the files mutmut runs (``test_factor_mismatch_exact.py``,
``test_factor_compare_exact.py``: the median, the zeros and non-finite values left out, the
``min(1, scale)`` edge, the date rule, the report's text at both precisions).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from costeer_lab.evaluate import EvaluatorSettings
from costeer_lab.evaluate._factor_compare import compare_to_truth, date_ics

S = EvaluatorSettings()
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
