"""Mismatch classes of rejected factors (property-based over random panels)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from costeer_lab.evaluate import EvaluatorSettings
from costeer_lab.evaluate._factor_compare import compare_to_truth
from costeer_lab.evaluate._factor_mismatch import MISMATCH_CLASSES, mismatch_rows

S = EvaluatorSettings()


def truth_of(seed: int, days: int = 30, n: int = 6) -> pd.Series:
    idx = pd.MultiIndex.from_product(
        [pd.bdate_range("2022-01-03", periods=days), [f"S{i}" for i in range(n)]],
        names=["datetime", "instrument"],
    )
    values = np.random.default_rng(seed).normal(size=len(idx))
    return pd.Series(values, idx)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**31),
    st.sampled_from(["sign", "scale", "offset", "lag", "lead", "nan_pattern", "values"]),
    st.floats(1.5, 50.0),
    st.integers(1, 3),
)
def test_each_kind_of_mistake_gets_its_class(seed: int, kind: str, a: float, k: int) -> None:
    truth = truth_of(seed)
    by = truth.groupby(level="instrument")
    equal = EvaluatorSettings(factor_acceptance="equal", index_overlap_threshold=0.5)
    cand = {
        "sign": -truth,
        "scale": truth * a + 1.0,
        "offset": truth + a,
        "lag": by.shift(k),
        "lead": by.shift(-k),
        "nan_pattern": truth.where(truth.index.get_level_values(0) != truth.index[6][0], np.nan),
        "values": truth_of(seed + 1),
    }[kind]
    if kind == "nan_pattern":  # the truth is missing on one day; the candidate filled it
        truth, cand = cand, truth.copy()
        cand.iloc[6:12] = 0.0
    c = compare_to_truth(cand, truth, equal)
    assert not c.decision
    assert c.mismatch == kind and c.mismatch in MISMATCH_CLASSES
    assert c.lines[-1] == f"decision: FAIL ({kind})"


def test_rows_show_the_truth_only_at_full_detail() -> None:
    truth = truth_of(1, days=5, n=3)
    cand = truth.copy()
    cand.iloc[[2, 7]] = 99.0
    full = mismatch_rows(cand, truth, S, "full")
    assert full[0] == "rows that differ (2 in all; datetime, instrument, candidate, truth):"
    assert full[1] == f"  2022-01-03 S2: candidate 99, truth {truth.iloc[2]:.6g}"
    diag = mismatch_rows(cand, truth, S, "diagnostics")
    assert diag[1] == "  2022-01-03 S2: candidate 99" and len(diag) == 3
    assert mismatch_rows(cand, truth, S, "verdict") == []
    assert mismatch_rows(truth, truth, S, "full") == []
