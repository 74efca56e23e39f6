"""A deterministic synthetic daily price/volume panel (the input of the Alpha158 suite).

Schema of ``daily_pv.parquet`` (also in ``data/README.md``):

* index: ``MultiIndex`` (``datetime``: ``datetime64``, business days from 2020-01-02;
  ``instrument``: string like ``"SH600000"``), sorted by (datetime, instrument);
* columns (``float64``): ``open``, ``high``, ``low``, ``close``, ``volume`` (shares, multiples
  of 100), ``vwap``;
* invariants: prices > 0, ``high >= max(open, close)``, ``low <= min(open, close)``,
  ``low <= vwap <= high``; about 1 % of rows are *suspended days* (row present, all six values
  NaN, sometimes several days in a row); about 10 % of instruments are *listed late* (no rows
  before their listing date).

Prices follow a geometric random walk with a common market factor (per-instrument beta and
volatility); opens gap from the previous close; volume is log-normal, autocorrelated and
larger on big moves. The same (instruments, days, seed) always gives the same values.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from costeer_lab._fs import atomic_writer
from costeer_lab.errors import InvalidInputError

__all__ = ["PANEL_COLUMNS", "PANEL_VERSION", "ensure_panel", "make_panel"]

PANEL_COLUMNS = ("open", "high", "low", "close", "volume", "vwap")
#: Bump when the generator changes, so cached files are regenerated.
PANEL_VERSION = 1


def make_panel(n_instruments: int = 50, n_days: int = 500, seed: int = 0) -> pd.DataFrame:
    """Generate the synthetic panel in memory (see the module docstring for the schema).

    Example:
        >>> df = make_panel(3, 10, seed=1)
        >>> list(df.columns), list(df.index.names)
        (['open', 'high', 'low', 'close', 'volume', 'vwap'], ['datetime', 'instrument'])
    """
    if n_instruments < 1 or n_days < 2:
        raise InvalidInputError(
            f"panel needs n_instruments >= 1 and n_days >= 2, got {n_instruments}, {n_days}"
        )
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range("2020-01-02", periods=n_days)
    names = [f"SH{600000 + i}" for i in range(n_instruments)]
    market = rng.normal(0.0003, 0.011, n_days)
    frames = []
    for name in names:
        frames.append(_one_instrument(rng, name, dates, market))
    panel = pd.concat(frames).sort_index()
    return panel


def _one_instrument(
    rng: np.random.Generator, name: str, dates: pd.DatetimeIndex, market: np.ndarray
) -> pd.DataFrame:
    n = len(dates)
    beta = rng.uniform(0.5, 1.5)
    vol = rng.uniform(0.01, 0.03)
    ret = beta * market + rng.normal(rng.normal(0.0, 0.0004), vol, n)
    close = np.exp(rng.normal(3.0, 0.6)) * np.exp(np.cumsum(ret))
    prev_close = np.concatenate([[close[0] * np.exp(-ret[0])], close[:-1]])
    open_ = prev_close * np.exp(rng.normal(0.0, 0.35 * vol, n))
    top, bottom = np.maximum(open_, close), np.minimum(open_, close)
    high = top * np.exp(np.abs(rng.normal(0.0, 0.6 * vol, n)))
    low = bottom * np.exp(-np.abs(rng.normal(0.0, 0.6 * vol, n)))
    mid = (open_ + close + high + low) / 4.0
    vwap = np.clip(mid * np.exp(rng.normal(0.0, 0.2 * vol, n)), low, high)
    log_v = np.empty(n)
    level, ar = rng.normal(13.0, 0.8), 0.0
    for t in range(n):
        ar = 0.7 * ar + rng.normal(0.0, 0.3)
        log_v[t] = level + ar + 12.0 * abs(ret[t])
    volume = np.maximum(np.round(np.exp(log_v) / 100.0), 1.0) * 100.0
    frame = pd.DataFrame(
        {"open": open_, "high": high, "low": low, "close": close, "volume": volume, "vwap": vwap},
        index=pd.MultiIndex.from_arrays(
            [dates, pd.Index([name] * n, dtype=object)], names=["datetime", "instrument"]
        ),
    )
    suspended = rng.random(n) < 0.006
    if rng.random() < 0.3:  # a multi-day suspension spell
        start = int(rng.integers(1, max(2, n - 5)))
        suspended[start : start + int(rng.integers(2, 6))] = True
    frame.loc[suspended, list(PANEL_COLUMNS)] = np.nan
    if rng.random() < 0.1 and n // 3 > 20:  # listed late (n of 61 or 62 left no range)
        frame = frame.iloc[int(rng.integers(20, n // 3)) :]
    return frame


def ensure_panel(
    cache_dir: str | os.PathLike[str], n_instruments: int = 50, n_days: int = 500, seed: int = 0
) -> Path:
    """Return the path of the cached panel parquet file, generating it on first use.

    The file is replaced atomically (:func:`costeer_lab._fs.atomic_writer`), so concurrent
    callers (several worker processes) never see a partial file.

    Example:
        >>> import tempfile
        >>> ensure_panel(tempfile.mkdtemp(), 3, 10).name
        'daily_pv_3x10_s0_v1.parquet'
    """
    folder = Path(cache_dir) / "suites" / "alpha158"
    path = folder / f"daily_pv_{n_instruments}x{n_days}_s{seed}_v{PANEL_VERSION}.parquet"
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    panel = make_panel(n_instruments, n_days, seed)
    with atomic_writer(path) as fh:
        panel.to_parquet(fh)
    return path
