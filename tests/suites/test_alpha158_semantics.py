"""The Alpha158 ground truths compute what their formulas say (checked by brute force)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from costeer_lab.evaluate import InProcessRunner
from costeer_lab.records import Workspace
from costeer_lab.suites import Suite


def run_code(code: str, panel: Path) -> pd.Series:
    out = InProcessRunner().run(
        Workspace({"main.py": code}),
        inputs={"daily_pv.parquet": panel},
        collect=["result.parquet"],
    )
    assert out.ok, out.stderr
    frame = pd.read_parquet(io.BytesIO(out.outputs["result.parquet"]))
    assert frame.shape[1] == 1
    return frame.iloc[:, 0]


@pytest.fixture(scope="module")
def panel(small_alpha: Suite) -> pd.DataFrame:
    return pd.read_parquet(small_alpha.inputs["daily_pv.parquet"])


@pytest.fixture(scope="module")
def clean(panel: pd.DataFrame) -> pd.DataFrame:
    """One instrument with every day present and no suspension."""
    for _, rows in panel.groupby(level="instrument"):
        if len(rows) == 120 and not rows.isna().any().any():
            return rows.droplevel("instrument")
    raise AssertionError("the test panel has no clean instrument")


def _rank_pct(w: np.ndarray) -> float:
    last = w[-1]
    return float(((w < last).sum() + ((w == last).sum() + 1) / 2) / len(w))


def _fit(w: np.ndarray) -> tuple[float, float, float]:
    x = np.arange(len(w), dtype=float)
    slope, intercept = np.polyfit(x, w, 1)
    r2 = np.corrcoef(x, w)[0, 1] ** 2
    return float(slope), float(r2), float(w[-1] - (intercept + slope * x[-1]))


def brute_force(name: str, rows: pd.DataFrame, t: int) -> float:
    c, o, h, lo, v = (rows[k].to_numpy() for k in ("close", "open", "high", "low", "volume"))
    fam = name if name.startswith("K") else name.rstrip("0123456789")
    d = 0 if name.startswith("K") else int(name[len(fam) :])
    s = slice(max(0, t - d + 1), t + 1)
    w = c[s]
    prev = np.concatenate([[np.nan], c[:-1]])
    up = np.where(np.isnan(prev), 0.0, (c > prev).astype(float))
    change = c - prev
    vprev = np.concatenate([[np.nan], v[:-1]])
    table: dict[str, Callable[[], float]] = {
        "KMID": lambda: (c[t] - o[t]) / o[t],
        "KUP2": lambda: (h[t] - max(o[t], c[t])) / (h[t] - lo[t] + 1e-12),
        "ROC": lambda: c[t - d] / c[t],
        "MA": lambda: w.mean() / c[t],
        "STD": lambda: w.std(ddof=1) / c[t],
        "BETA": lambda: _fit(w)[0] / c[t],
        "RSQR": lambda: _fit(w)[1],
        "RESI": lambda: _fit(w)[2] / c[t],
        "QTLU": lambda: np.quantile(w, 0.8) / c[t],
        "RANK": lambda: _rank_pct(w),
        "RSV": lambda: (c[t] - lo[s].min()) / (h[s].max() - lo[s].min() + 1e-12),
        "IMAX": lambda: (np.argmax(h[s]) + 1) / d,
        "IMIN": lambda: (np.argmin(lo[s]) + 1) / d,
        "IMXD": lambda: (np.argmax(h[s]) - np.argmin(lo[s])) / d,
        "CORR": lambda: np.corrcoef(w, np.log(v[s] + 1))[0, 1],
        "CNTP": lambda: up[s].mean(),
        "SUMP": lambda: (
            np.nansum(np.maximum(change[s], 0)) / (np.nansum(np.abs(change[s])) + 1e-12)
        ),
        "VSTD": lambda: v[s].std(ddof=1) / (v[t] + 1e-12),
        "WVMA": lambda: _wvma(c, prev, v, s),
        "VSUMD": lambda: _vsumd(v, vprev, s),
    }
    return float(table[fam]())


def _wvma(c: np.ndarray, prev: np.ndarray, v: np.ndarray, s: slice) -> float:
    x = (np.abs(c / prev - 1) * v)[s]
    x = x[~np.isnan(x)]
    return float(x.std(ddof=1) / (x.mean() + 1e-12))


def _vsumd(v: np.ndarray, vprev: np.ndarray, s: slice) -> float:
    ch = (v - vprev)[s]
    return float(
        (np.nansum(np.maximum(ch, 0)) - np.nansum(np.maximum(-ch, 0)))
        / (np.nansum(np.abs(ch)) + 1e-12)
    )


NAMES = [
    "KMID", "KUP2", "ROC10", "MA5", "STD20", "BETA5", "RSQR10", "RESI20", "QTLU30", "RANK5",
    "RSV10", "IMAX20", "IMIN5", "IMXD10", "CORR20", "CNTP10", "SUMP5", "VSTD5", "WVMA10",
    "VSUMD20",
]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_ground_truth_matches_brute_force(
    small_alpha: Suite, clean: pd.DataFrame, name: str
) -> None:
    series = run_code(
        small_alpha.ground_truth(f"alpha158/{name}").code, small_alpha.inputs["daily_pv.parquet"]
    )
    inst = None
    for candidate, group in series.groupby(level="instrument"):
        if len(group) == len(clean):
            inst = candidate
    assert inst is not None
    panel = pd.read_parquet(small_alpha.inputs["daily_pv.parquet"])
    rows = pd.DataFrame(panel.xs(inst, level="instrument"))
    if rows.isna().any().any():
        pytest.skip("picked instrument has suspensions")  # pragma: no cover
    got = series.xs(inst, level="instrument").to_numpy()
    for t in (3, 70, 119):  # partial window at the start, middle, last day
        if name.startswith("ROC") and t < 10:
            assert np.isnan(got[t])
            continue
        want = brute_force(name, rows, t)
        assert got[t] == pytest.approx(want, rel=1e-7, abs=1e-9), (name, t)


def test_suspended_days_are_nan_and_instruments_do_not_leak(
    small_alpha: Suite, tmp_path: Path
) -> None:
    path = small_alpha.inputs["daily_pv.parquet"]
    full = run_code(small_alpha.ground_truth("alpha158/MA20").code, path)
    panel = pd.read_parquet(path)
    assert full[panel["close"].isna()].isna().all()
    one = panel.xs(
        panel.index.get_level_values("instrument")[0], level="instrument", drop_level=False
    )
    alone_path = tmp_path / "one.parquet"
    one.to_parquet(alone_path)
    alone = run_code(small_alpha.ground_truth("alpha158/MA20").code, alone_path)
    pd.testing.assert_series_equal(alone, full.loc[alone.index], check_index_type=False)
