"""The days an Alpha158 feature needs before its first value, derived from its formula, match
what its reference implementation computes: one day fewer leaves every value missing."""

from __future__ import annotations

import runpy
from pathlib import Path

import pandas as pd
import pytest

from costeer_lab.suites._alpha158_code import ground_truth_code
from costeer_lab.suites._alpha158_days import first_value_day
from costeer_lab.suites._alpha158_defs import FEATURES, FeatureSpec
from costeer_lab.suites._panel import make_panel


def _has_a_value(spec: FeatureSpec, n_days: int, folder: Path) -> bool:
    """Run the reference on a panel of ``n_days`` days; whether any value is present."""
    run = folder / f"{spec.name}-{n_days}"
    run.mkdir()
    make_panel(5, n_days, seed=0).to_parquet(run / "daily_pv.parquet")
    (run / "main.py").write_text(ground_truth_code(spec), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(run)
        runpy.run_path("main.py", run_name="__main__")
    result = pd.read_parquet(run / "result.parquet")
    return bool(result.iloc[:, 0].notna().any())


def test_each_feature_needs_exactly_the_days_its_formula_says(tmp_path: Path) -> None:
    for spec in FEATURES:
        need = first_value_day(spec.formula)
        assert _has_a_value(spec, max(need, 2), tmp_path), spec.name
        if need > 2:  # a panel has at least 2 days
            assert not _has_a_value(spec, need - 1, tmp_path), spec.name


def test_the_longest_need_is_the_longest_lag_plus_one() -> None:
    needs = {s.name: first_value_day(s.formula) for s in FEATURES}
    assert max(needs.values()) == 61 and needs["ROC60"] == 61
    assert {n for n, d in needs.items() if d > 2} == {
        f"{family}{w}" for family in ("ROC", "CORD", "WVMA") for w in (5, 10, 20, 30, 60)
    }


@pytest.mark.parametrize("n_days", [61, 62, 63])
def test_a_panel_just_long_enough_for_the_longest_window_can_be_made(n_days: int) -> None:
    panel = make_panel(40, n_days, seed=0)  # instruments listed late need n_days // 3 > 20
    assert panel.index.get_level_values("datetime").nunique() == n_days
