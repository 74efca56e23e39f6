"""The input table of RD-Agent's factor benchmark, ``daily_pv``, built from the synthetic panel.

RD-Agent's published factor tasks read ``daily_pv.h5`` (``pd.read_hdf(path, key="data")``): a
DataFrame indexed by (``datetime``, ``instrument``) with float columns ``$open``, ``$close``,
``$high``, ``$low``, ``$volume`` and ``$factor`` (the price adjustment factor). This module
writes that table from :func:`~costeer_lab.suites.make_panel` (same days, instruments and
suspended days):

* ``"synthetic"`` — the panel's float prices, ``$factor`` 1.0;
* ``"synthetic_tick"`` — prices scaled to a few currency units and rounded to a 0.01 tick, so
  that bars with ``$high == $low`` occur (as on real exchanges; a division by the range is then
  infinite).

:func:`convert_daily_pv` rewrites a user's own Parquet/HDF5 table in the same layout.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from costeer_lab._fs import atomic_write_bytes
from costeer_lab.errors import InvalidInputError
from costeer_lab.suites._panel import PANEL_VERSION, make_panel

__all__ = ["DAILY_PV_COLUMNS", "DATA_SOURCES", "daily_pv_frame", "ensure_daily_pv"]

DAILY_PV_COLUMNS = ("$open", "$close", "$high", "$low", "$volume", "$factor")
DATA_SOURCES = ("synthetic", "synthetic_tick")
#: Tick size and price scale of ``synthetic_tick``.
TICK, TICK_SCALE = 0.01, 0.2


def daily_pv_frame(
    source: str = "synthetic", n_instruments: int = 30, n_days: int = 250, seed: int = 0
) -> pd.DataFrame:
    """The ``daily_pv`` table of a synthetic ``source`` (see the module docstring).

    Example:
        >>> df = daily_pv_frame("synthetic_tick", 3, 20)
        >>> list(df.columns), list(df.index.names)
        (['$open', '$close', '$high', '$low', '$volume', '$factor'], ['datetime', 'instrument'])
        >>> bool(((df["$close"] * 100).round(6) % 1 == 0).all() or df["$close"].isna().any())
        True
    """
    if source not in DATA_SOURCES:
        raise InvalidInputError(f"daily_pv source {source!r}; expected one of {DATA_SOURCES}")
    panel = make_panel(n_instruments, n_days, seed)
    out = pd.DataFrame(index=panel.index)
    prices = ["open", "close", "high", "low"]
    for col in prices:
        values = panel[col]
        if source == "synthetic_tick":
            values = (values * TICK_SCALE / TICK).round() * TICK
        out[f"${col}"] = values.astype("float64")
    if source == "synthetic_tick":  # keep high >= open, close >= low after rounding
        out["$high"] = out[["$high", "$open", "$close"]].max(axis=1, skipna=False)
        out["$low"] = out[["$low", "$open", "$close"]].min(axis=1, skipna=False)
    out["$volume"] = panel["volume"].astype("float64")
    out["$factor"] = np.where(panel["close"].isna(), np.nan, 1.0)
    return out


def _to_hdf_bytes(frame: pd.DataFrame) -> bytes:
    with tempfile.TemporaryDirectory(prefix="costeer_pv_") as tmp:
        path = Path(tmp) / "daily_pv.h5"
        frame.to_hdf(path, key="data", mode="w", format="fixed")
        return path.read_bytes()


def ensure_daily_pv(
    cache_dir: str | os.PathLike[str],
    source: str = "synthetic",
    n_instruments: int = 30,
    n_days: int = 250,
    seed: int = 0,
) -> Path:
    """Path of the cached ``daily_pv.h5`` of ``source``, written (atomically) on first use.

    ``source`` is ``"synthetic"``, ``"synthetic_tick"`` or the path of the user's own table
    (``.parquet`` or ``.h5``, converted once with :func:`convert_daily_pv`).

    Example:
        >>> import tempfile
        >>> ensure_daily_pv(tempfile.mkdtemp(), "synthetic", 3, 10).name
        'daily_pv_synthetic_3x10_s0_v1.h5'
    """
    folder = Path(cache_dir) / "suites" / "rdagent"
    if source in DATA_SOURCES:
        path = folder / f"daily_pv_{source}_{n_instruments}x{n_days}_s{seed}_v{PANEL_VERSION}.h5"
        if not path.is_file():
            frame = daily_pv_frame(source, n_instruments, n_days, seed)
            folder.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, _to_hdf_bytes(frame))
        return path
    return convert_daily_pv(source, folder)


def convert_daily_pv(source: str | os.PathLike[str], folder: Path) -> Path:
    """The user's table ``source`` (Parquet or HDF5, trusted: it is the user's own data) as a
    cached ``daily_pv.h5``; an ``.h5`` file is used as it is after a check of its layout."""
    src = Path(source)
    if not src.is_file():
        raise InvalidInputError(
            f"daily_pv data {str(src)!r}: expected 'synthetic', 'synthetic_tick' or the path of "
            "a .parquet/.h5 file"
        )
    if src.suffix.lower() in (".h5", ".hdf5", ".hdf"):
        frame = pd.read_hdf(src)
    elif src.suffix.lower() == ".parquet":
        frame = pd.read_parquet(src)
    else:
        raise InvalidInputError(f"daily_pv data {str(src)!r}: expected a .parquet or .h5 file")
    if not isinstance(frame, pd.DataFrame) or list(frame.index.names) != [
        "datetime",
        "instrument",
    ]:
        raise InvalidInputError(
            f"daily_pv data {str(src)!r}: expected a DataFrame indexed by (datetime, instrument)"
        )
    missing = [c for c in DAILY_PV_COLUMNS[:5] if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"daily_pv data {str(src)!r}: missing columns {missing} (expected {DAILY_PV_COLUMNS})"
        )
    if src.suffix.lower() != ".parquet":
        return src.resolve()
    st = src.stat()
    path = folder / f"daily_pv_user_{src.stem}_{st.st_size}_{st.st_mtime_ns}.h5"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, _to_hdf_bytes(frame))
    return path
