"""The synthetic daily panel: determinism, invariants, atomic cached file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.suites import make_panel
from costeer_lab.suites._panel import ensure_panel


def test_same_seed_same_panel_other_seed_differs() -> None:
    a, b = make_panel(6, 90, seed=3), make_panel(6, 90, seed=3)
    pd.testing.assert_frame_equal(a, b)
    c = make_panel(6, 90, seed=4)
    assert not np.allclose(
        a["close"].dropna().to_numpy()[:50], c["close"].dropna().to_numpy()[:50]
    )


def test_schema_and_price_invariants() -> None:
    df = make_panel(30, 200, seed=1)
    assert df.index.names == ["datetime", "instrument"]
    assert list(df.columns) == ["open", "high", "low", "close", "volume", "vwap"]
    assert df.index.is_monotonic_increasing and not df.index.duplicated().any()
    assert pd.api.types.is_datetime64_any_dtype(df.index.get_level_values("datetime"))
    assert all(df.dtypes == "float64")
    ok = df.dropna()
    assert (ok[["open", "high", "low", "close", "vwap"]] > 0).all().all()
    assert (ok["high"] >= ok[["open", "close"]].max(axis=1)).all()
    assert (ok["low"] <= ok[["open", "close"]].min(axis=1)).all()
    assert ((ok["vwap"] >= ok["low"]) & (ok["vwap"] <= ok["high"])).all()
    assert (ok["volume"] > 0).all() and (ok["volume"] % 100 == 0).all()


def test_suspended_days_are_whole_rows_of_nan_and_some_instruments_list_late() -> None:
    df = make_panel(40, 300, seed=2)
    nan_rows = df.isna()
    assert (nan_rows.any(axis=1) == nan_rows.all(axis=1)).all()
    share = nan_rows.all(axis=1).mean()
    assert 0.001 < share < 0.05
    rows_per_instrument = df.groupby(level="instrument").size()
    assert rows_per_instrument.max() == 300
    assert rows_per_instrument.min() < 300  # late listings


def test_ensure_panel_writes_once_atomically(tmp_path: Path) -> None:
    path = ensure_panel(tmp_path, 4, 30, seed=5)
    assert path.is_file() and path.name == "daily_pv_4x30_s5_v1.parquet"
    first = path.stat().st_mtime_ns
    assert ensure_panel(tmp_path, 4, 30, seed=5) == path
    assert path.stat().st_mtime_ns == first
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]
    pd.testing.assert_frame_equal(
        pd.read_parquet(path), make_panel(4, 30, seed=5), check_index_type=False
    )


@pytest.mark.parametrize(("n", "days"), [(0, 10), (3, 1)])
def test_bad_sizes_are_refused(n: int, days: int) -> None:
    with pytest.raises(InvalidInputError, match="n_instruments"):
        make_panel(n, days)
