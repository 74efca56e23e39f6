"""The input table of RD-Agent's factor benchmark, ``daily_pv``, built from the synthetic panel.

RD-Agent's published factor tasks read ``daily_pv.h5`` (``pd.read_hdf(path, key="data")``): a
DataFrame indexed by (``datetime``, ``instrument``) with float columns ``$open``, ``$close``,
``$high``, ``$low``, ``$volume``, ``$factor`` (the price adjustment factor) and ``$money``
(the traded value, ``$close * $volume`` here). This module
writes that table from :func:`~costeer_lab.suites.make_panel` (same days, instruments and
suspended days):

* ``"synthetic"`` — the panel's float prices, ``$factor`` 1.0;
* ``"synthetic_tick"`` — prices scaled to a few currency units and rounded to a 0.01 tick, so
  that bars with ``$high == $low`` occur (as on real exchanges; a division by the range is then
  infinite).

:func:`convert_daily_pv` rewrites a user's own Parquet/HDF5 table in the same layout.
:func:`ensure_daily_f` and :func:`ensure_high_freq` write the fundamentals and the minute bars
built from a ``daily_pv.h5`` (see :mod:`._rdagent_fundamentals`, :mod:`._rdagent_highfreq`), or
check the user's own files; every file is cached under a name made of its content parameters
and written atomically.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from costeer_lab._fs import atomic_write_bytes
from costeer_lab.errors import ConfigurationError, InvalidInputError
from costeer_lab.suites._panel import PANEL_VERSION, make_panel

__all__ = [
    "DAILY_PV_COLUMNS",
    "DATA_SOURCES",
    "check_table",
    "daily_pv_frame",
    "ensure_daily_f",
    "ensure_daily_pv",
    "ensure_derived",
    "ensure_high_freq",
    "require_hdf5",
]

DAILY_PV_COLUMNS = ("$open", "$close", "$high", "$low", "$volume", "$factor", "$money")
#: Bump when a generator of this module (or its helpers) changes: cached files are renamed.
DATA_VERSION = 2
HDF5_HINT = "pip install 'costeer-lab[hdf5]'"
DATA_SOURCES = ("synthetic", "synthetic_tick")
#: Tick size and price scale of ``synthetic_tick``.
TICK, TICK_SCALE = 0.01, 0.2


def daily_pv_frame(
    source: str = "synthetic", n_instruments: int = 30, n_days: int = 250, seed: int = 0
) -> pd.DataFrame:
    """The ``daily_pv`` table of a synthetic ``source`` (see the module docstring).

    Example:
        >>> df = daily_pv_frame("synthetic_tick", 3, 20)
        >>> list(df.columns)
        ['$open', '$close', '$high', '$low', '$volume', '$factor', '$money']
        >>> list(df.index.names)
        ['datetime', 'instrument']
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
    out["$money"] = out["$close"] * out["$volume"]
    return out


def require_hdf5() -> None:
    """Raise :class:`ConfigurationError` (one line naming the extra) without PyTables.

    Example:
        >>> require_hdf5()  # the hdf5 extra is installed here
    """
    try:
        import tables  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        raise ConfigurationError(
            "RD-Agent benchmark files read and write HDF5 tables, which needs PyTables: "
            + HDF5_HINT
        ) from None


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
        'daily_pv_synthetic_3x10_s0_v1.2.h5'
    """
    folder = Path(cache_dir) / "suites" / "rdagent"
    if source in DATA_SOURCES:
        version = f"v{PANEL_VERSION}.{DATA_VERSION}"
        path = folder / f"daily_pv_{source}_{n_instruments}x{n_days}_s{seed}_{version}.h5"
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


def _read_table(path: Path) -> pd.DataFrame | pd.Series:
    if path.suffix.lower() == ".parquet":
        return pd.read_parquet(path)
    with pd.HDFStore(path, mode="r") as store:
        keys = store.keys()
        if len(keys) != 1:
            raise InvalidInputError(
                f"{str(path)!r} holds {len(keys)} keys {keys[:5]}; expected exactly one "
                '(RD-Agent\'s tasks read it with pd.read_hdf(path) or key="data")'
            )
        obj = store[keys[0]]
    if not isinstance(obj, pd.DataFrame | pd.Series):
        raise InvalidInputError(f"{str(path)!r}: expected a pandas DataFrame")
    return obj


def check_table(path: str | os.PathLike[str], what: str, needed: Sequence[str]) -> Path:
    """The resolved path of the user's own ``what`` table (``daily_f.h5``, ...) after a check
    of its layout: one key, a DataFrame indexed by (datetime, instrument), the ``needed``
    columns.

    Raises:
        InvalidInputError: naming the file, what it lacks and what is expected.
    """
    src = Path(path)
    if not src.is_file():
        raise InvalidInputError(f"{what} file {str(src)!r} does not exist")
    if src.suffix.lower() not in (".h5", ".hdf5", ".hdf"):
        raise InvalidInputError(f"{what} file {str(src)!r}: expected an HDF5 file (.h5)")
    frame = _read_table(src)
    if not isinstance(frame, pd.DataFrame) or list(frame.index.names) != [
        "datetime",
        "instrument",
    ]:
        raise InvalidInputError(
            f"{what} file {str(src)!r}: expected a DataFrame indexed by (datetime, instrument)"
        )
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"{what} file {str(src)!r}: missing columns {missing} that the references read "
            f"(it has {[str(c) for c in frame.columns][:20]})"
        )
    return src.resolve()


def _cached(folder: Path, stem: str, params: str, build: Any) -> Path:
    """``folder/<stem>_<hash of params>.h5``, built by ``build()`` (a DataFrame) when absent."""
    digest = hashlib.sha256(f"{params}|v{DATA_VERSION}".encode()).hexdigest()[:16]
    path = folder / f"{stem}_{digest}.h5"
    if not path.is_file():
        frame = build()
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, _to_hdf_bytes(frame))
    return path


def _identity(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"


def _pv(path: Path) -> pd.DataFrame:
    frame = pd.read_hdf(path)
    assert isinstance(frame, pd.DataFrame)
    return frame


def ensure_daily_f(
    cache_dir: str | os.PathLike[str], daily_pv: Path, extra: Iterable[str] = (), seed: int = 0
) -> Path:
    """Path of the cached synthetic ``daily_f.h5`` of the ``daily_pv.h5`` at ``daily_pv``, with
    the base columns plus ``extra`` (see :mod:`._rdagent_fundamentals`).

    Example:
        >>> import tempfile
        >>> tmp = tempfile.mkdtemp()
        >>> pv = ensure_daily_pv(tmp, "synthetic", 3, 10)
        >>> f = pd.read_hdf(ensure_daily_f(tmp, pv, ["PE"]))
        >>> f.index.equals(pd.read_hdf(pv).index), "PE" in f.columns
        (True, True)
    """
    from costeer_lab.suites._rdagent_fundamentals import daily_f_from_pv

    cols = sorted(set(extra))
    return _cached(
        Path(cache_dir) / "suites" / "rdagent",
        "daily_f",
        f"{_identity(daily_pv)}|{cols}|{seed}",
        lambda: daily_f_from_pv(_pv(daily_pv), cols, seed),
    )


def ensure_high_freq(
    cache_dir: str | os.PathLike[str],
    daily_pv: Path,
    n_days: int = 10,
    minutes_per_day: int = 240,
    seed: int = 0,
    tick: float | None = None,
) -> Path:
    """Path of the cached synthetic ``high_freq.h5`` (1-minute bars of the last ``n_days`` days)
    of the ``daily_pv.h5`` at ``daily_pv`` (see :mod:`._rdagent_highfreq`).

    Example:
        >>> import tempfile
        >>> tmp = tempfile.mkdtemp()
        >>> pv = ensure_daily_pv(tmp, "synthetic", 3, 10)
        >>> len(pd.read_hdf(ensure_high_freq(tmp, pv, n_days=2, minutes_per_day=4)))
        24
    """
    from costeer_lab.suites._rdagent_highfreq import high_freq_from_pv

    return _cached(
        Path(cache_dir) / "suites" / "rdagent",
        "high_freq",
        f"{_identity(daily_pv)}|{n_days}|{minutes_per_day}|{seed}|{tick}",
        lambda: high_freq_from_pv(_pv(daily_pv), n_days, minutes_per_day, seed, tick),
    )


def ensure_derived(
    cache_dir: str | os.PathLike[str],
    table: Path,
    extra: Sequence[str],
    seed: int = 0,
    stem: str = "daily_pv_plus",
) -> Path:
    """Path of a cached copy of the table at ``table`` (``daily_pv.h5``, ``high_freq.h5``) with
    the ``extra`` columns that references read, synthesized by name (see
    :func:`~costeer_lab.suites._rdagent_fundamentals.synthesize_column`).

    Example:
        >>> import tempfile
        >>> tmp = tempfile.mkdtemp()
        >>> pv = ensure_daily_pv(tmp, "synthetic", 3, 10)
        >>> list(pd.read_hdf(ensure_derived(tmp, pv, ["$vwap"])).columns)[-1]
        '$vwap'
    """
    from costeer_lab.suites._rdagent_fundamentals import synthesize_column

    def build() -> pd.DataFrame:
        frame = _pv(table)
        for name in extra:
            frame[name] = synthesize_column(name, frame, seed)
        return frame

    cols = sorted(set(extra))
    return _cached(
        Path(cache_dir) / "suites" / "rdagent",
        stem,
        f"{_identity(table)}|{cols}|{seed}",
        build,
    )
