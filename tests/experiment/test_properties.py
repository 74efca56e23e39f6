"""Property-based checks: random valid tables round-trip and satisfy metric invariants."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costeer_lab.experiment import (
    QUERY_KINDS,
    first_try_success,
    hit_rate,
    load_results,
    save_results,
    success_curve,
    summary_table,
    task_outcomes,
    validate_results,
)
from costeer_lab.testing import make_row

_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12)
_retrieved = st.dictionaries(
    st.sampled_from(QUERY_KINDS),
    st.lists(st.tuples(st.sampled_from(["k1", "k2", "e1"]), st.floats(-1.0, 1.0)), max_size=3),
    max_size=4,
)


@st.composite
def tables(draw: st.DrawFn) -> pd.DataFrame:
    rows = []
    last = draw(st.integers(1, 4))
    for arm in draw(
        st.lists(st.sampled_from(["a", "b", "no_knowledge"]), min_size=1, unique=True)
    ):
        for seed in draw(st.lists(st.integers(0, 3), min_size=1, max_size=3, unique=True)):
            for t in range(draw(st.integers(1, 4))):
                solved = draw(st.one_of(st.none(), st.integers(1, last)))
                for attempt in range(1, (solved or last) + 1):
                    rows.append(
                        make_row(
                            arm, seed, f"t{t}", attempt, attempt == solved,
                            retrieved=draw(_retrieved), used=draw(st.lists(st.just("k1"))),
                            kb_nodes=draw(st.integers(0, 50)), code_feedback=draw(_text),
                            cost_usd=draw(st.floats(0, 1)),
                        )
                    )  # fmt: skip
    return pd.DataFrame(rows)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.sampled_from(["parquet", "csv"]))
def test_round_trip(df: pd.DataFrame, fmt: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = save_results(df, Path(tmp), format=fmt)  # type: ignore[arg-type]
        pd.testing.assert_frame_equal(load_results(path), validate_results(df))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_metric_invariants(df: pd.DataFrame) -> None:
    curve = success_curve(df, n_boot=30, seed=1)
    for _, g in curve.groupby("arm"):
        rate = g["success_rate"].to_numpy()
        assert np.all(np.diff(rate) >= -1e-12) and np.all((rate >= 0) & (rate <= 1))
        assert np.all(g["ci_low"] <= g["success_rate"]) and np.all(
            g["success_rate"] <= g["ci_high"]
        )
    first = first_try_success(df).set_index("arm")["first_try_success"]
    final = curve.groupby("arm")["success_rate"].last()
    assert (first <= final + 1e-12).all()
    out = task_outcomes(df)
    solved_share = out["solved_at"].notna().groupby([out["arm"], out["seed"]]).mean()
    assert np.allclose(final.sort_index(), solved_share.groupby(level="arm").mean().sort_index())
    hits = hit_rate(df, threshold=0.0)
    assert (hits["n_hits"] <= hits["n_queries"]).all()
    s = summary_table(df, n_boot=20)
    assert list(s["arm"]) == sorted(df["arm"].unique())
