"""The input tables of an RD-Agent benchmark file: which each task reads, generated or checked.

:func:`prepare_inputs` looks at every reference (``gt_code``): the tables it reads
(:func:`~._rdagent_columns.files_read`; a reference naming none reads ``daily_pv.h5``) and
their columns (:func:`~._rdagent_columns.columns_read`). ``daily_pv.h5`` is always provided (the
other tables are built from it); ``daily_f.h5`` and ``high_freq.h5`` only when some reference
reads them: synthetic ones with every column the references read (the base set plus columns
synthesized by name, see :func:`~._rdagent_fundamentals.synthesize_column`), or the user's own
files (``daily_f=``, ``high_freq=``), checked for layout and for those columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from costeer_lab.suites._rdagent_columns import INPUT_FILES, columns_read, files_read
from costeer_lab.suites._rdagent_data import (
    DAILY_PV_COLUMNS,
    DATA_SOURCES,
    TICK,
    check_table,
    ensure_daily_f,
    ensure_daily_pv,
    ensure_derived,
    ensure_high_freq,
    require_hdf5,
)
from costeer_lab.suites._rdagent_fundamentals import DAILY_F_COLUMNS
from costeer_lab.suites._rdagent_highfreq import HIGH_FREQ_COLUMNS

__all__ = ["InputOptions", "PreparedInputs", "prepare_inputs"]

BASE_COLUMNS = {
    "daily_pv.h5": DAILY_PV_COLUMNS,
    "daily_f.h5": DAILY_F_COLUMNS,
    "high_freq.h5": HIGH_FREQ_COLUMNS,
}


@dataclass(frozen=True)
class InputOptions:
    """Where the tables come from (see :func:`~costeer_lab.suites.rdagent_suite`)."""

    data: str = "synthetic"
    daily_f: str | None = None
    high_freq: str | None = None
    n_instruments: int = 30
    n_days: int = 250
    seed: int = 0
    hf_days: int = 10
    hf_minutes: int = 240


@dataclass
class PreparedInputs:
    """The tables (name → path), their columns, and the tables each task reads."""

    paths: dict[str, Path] = field(default_factory=dict)
    columns: dict[str, list[str]] = field(default_factory=dict)
    reads: dict[str, list[str]] = field(default_factory=dict)


def _user_pv_columns(path: Path) -> list[str]:
    frame = pd.read_hdf(path)
    return [str(c) for c in getattr(frame, "columns", [])]


def prepare_inputs(
    codes: Mapping[str, str], options: InputOptions, cache_dir: str | Path
) -> PreparedInputs:
    """Generate (cached) or check the tables the references ``codes`` (task → gt_code) read.

    Raises:
        ConfigurationError: PyTables (the ``hdf5`` extra) is missing.
        InvalidInputError: a user's table is missing, malformed or lacks a column a reference
            reads (named).

    Example:
        >>> import tempfile
        >>> code = "import pandas as pd\\nf = pd.read_hdf('daily_f.h5')['ROE_TTM']"
        >>> got = prepare_inputs({"t": code}, InputOptions(n_instruments=3, n_days=10),
        ...                      tempfile.mkdtemp())
        >>> sorted(got.paths), got.reads["t"], "ROE_TTM" in got.columns["daily_f.h5"]
        (['daily_f.h5', 'daily_pv.h5'], ['daily_f.h5'], True)
    """
    require_hdf5()
    out = PreparedInputs()
    needed: dict[str, set[str]] = {f: set() for f in INPUT_FILES}
    for task, code in codes.items():
        out.reads[task] = files_read(code) or ["daily_pv.h5"]
        for f, cols in columns_read(code, BASE_COLUMNS).items():
            needed[f].update(cols)
    read = {f for files in out.reads.values() for f in files}
    o = options
    pv = ensure_daily_pv(cache_dir, o.data, o.n_instruments, o.n_days, o.seed)
    if o.data in DATA_SOURCES:
        missing = sorted(needed["daily_pv.h5"] - set(DAILY_PV_COLUMNS))
        if missing:  # synthesize them into a derived table
            pv = ensure_derived(cache_dir, pv, missing, o.seed, "daily_pv_plus")
        out.columns["daily_pv.h5"] = [*DAILY_PV_COLUMNS, *missing]
    else:
        check_table(pv, "daily_pv", sorted(needed["daily_pv.h5"]))
        out.columns["daily_pv.h5"] = _user_pv_columns(pv)
    out.paths["daily_pv.h5"] = pv
    if "daily_f.h5" in read:
        cols = sorted(needed["daily_f.h5"])
        if o.daily_f is not None:
            out.paths["daily_f.h5"] = check_table(o.daily_f, "daily_f", cols)
            out.columns["daily_f.h5"] = _user_pv_columns(out.paths["daily_f.h5"])
        else:
            extra = [c for c in cols if c not in DAILY_F_COLUMNS]
            out.paths["daily_f.h5"] = ensure_daily_f(cache_dir, pv, extra, o.seed)
            out.columns["daily_f.h5"] = [*DAILY_F_COLUMNS, *extra]
    if "high_freq.h5" in read:
        cols = sorted(needed["high_freq.h5"] | set(HIGH_FREQ_COLUMNS))
        if o.high_freq is not None:
            out.paths["high_freq.h5"] = check_table(o.high_freq, "high_freq", cols)
            out.columns["high_freq.h5"] = _user_pv_columns(out.paths["high_freq.h5"])
        else:
            unknown = [c for c in cols if c not in HIGH_FREQ_COLUMNS]
            tick = TICK if o.data == "synthetic_tick" else None
            hf = ensure_high_freq(cache_dir, pv, o.hf_days, o.hf_minutes, o.seed, tick)
            if unknown:
                hf = ensure_derived(cache_dir, hf, unknown, o.seed, "high_freq_plus")
            out.paths["high_freq.h5"] = hf
            out.columns["high_freq.h5"] = [*HIGH_FREQ_COLUMNS, *unknown]
    return out
