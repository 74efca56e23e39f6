"""Pure checks of a factor output (no I/O): format checks and the comparison with the truth.

Every check appends one readable line to a report; lines of failed checks start with
``[FAIL]`` so coders (and tests) can spot them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from costeer_lab.evaluate._budget import MAX_DECODED_BYTES, TRUSTED_CPU_S
from costeer_lab.evaluate._factor_compare import (
    Comparison,
    _cross_sectional_ranks,
    _equal_ratio,
    _mean_ic,
    compare_to_truth,
)
from costeer_lab.evaluate._factor_parquet import FactorFileError, read_frame, short

__all__ = ["Comparison", "FormatReport", "compare_to_truth", "read_factor"]
__all__ += ["_cross_sectional_ranks", "_equal_ratio", "_mean_ic"]  # exact-boundary tests

INDEX_NAMES = ("datetime", "instrument")


@dataclass
class FormatReport:
    """Outcome of :func:`read_factor`: the factor series (``None`` when unusable) and lines;
    ``frame`` is the file as decoded, before any format check or fix (``None`` when it could
    not be decoded): what RD-Agent's benchmark measures compare."""

    series: pd.Series | None
    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    frame: pd.DataFrame | None = None

    @property
    def ok(self) -> bool:
        return self.series is not None and not self.failures

    def fail(self, text: str) -> None:
        self.failures.append(text)
        self.lines.append(f"[FAIL] {text}")


def read_factor(
    data: bytes,
    name: str = "result.parquet",
    *,
    max_rows: int = 5_000_000,
    max_bytes: int = MAX_DECODED_BYTES,
    infinite: str = "as_nan",
    cpu_s: float = TRUSTED_CPU_S,
) -> FormatReport:
    """Parse the candidate's output and run the format checks.

    The file is read within the trusted process's budget (see
    :mod:`~costeer_lab.evaluate._factor_parquet`): a footer announcing more than ``max_rows``
    rows or ``max_bytes`` decoded bytes, a schema that is not a few flat columns, or decoding
    that passes ``max_bytes`` or ``cpu_s`` seconds of CPU is refused as a format failure. Any
    error the candidate's data causes in the checks is a format failure too, never an
    exception.

    ``infinite`` (the ``factor_infinite`` setting): ``"as_nan"`` turns +-inf into NaN (they
    count as missing values), ``"exact"`` keeps them; infinities fail no format check. A
    ``datetime`` level of ``datetime.date`` objects (what ``.dt.date`` gives) is converted.

    Example:
        >>> import io
        >>> idx = pd.MultiIndex.from_product([pd.to_datetime(["2020-01-02", "2020-01-03"]),
        ...                                   ["A", "B"]], names=["datetime", "instrument"])
        >>> buf = io.BytesIO(); pd.DataFrame({"f": [1.0, 2, 3, 4]}, idx).to_parquet(buf)
        >>> read_factor(buf.getvalue()).ok
        True
    """
    rep = FormatReport(None)
    try:
        parsed = read_frame(data, name, max_rows=max_rows, max_bytes=max_bytes, cpu_s=cpu_s)
    except FactorFileError as exc:
        rep.fail(str(exc))
        return rep
    rep.frame = parsed.frame
    try:
        return _check_frame(parsed.frame, parsed.notes, name, infinite, rep)
    except FactorFileError as exc:
        rep.fail(str(exc))
    except Exception as exc:  # odd data the checks did not foresee: still the candidate's file
        rep.fail(f"output: {name} could not be checked ({type(exc).__name__})")
    rep.series = None
    return rep


def _check_frame(
    frame: pd.DataFrame, notes: list[str], name: str, infinite: str, rep: FormatReport
) -> FormatReport:
    """The format checks of a parsed frame (see :func:`read_factor`)."""
    if frame.shape[1] != 1:
        cols = [short(c, 40) for c in frame.columns][:8]
        rep.fail(f"columns: {name} has {frame.shape[1]} columns {cols}; expected exactly one")
        return rep
    column = short(frame.columns[0])
    rep.lines.append(f"[ok] output: {name} parsed ({len(frame)} rows, 1 column {column!r})")
    series = frame.iloc[:, 0]
    index = series.index
    names = tuple(index.names)
    if names == INDEX_NAMES[::-1]:
        series = series.reorder_levels([1, 0])
        rep.lines.append("note: index levels were (instrument, datetime); reordered")
    elif names != INDEX_NAMES:
        shown = [None if n is None else short(n, 40) for n in names[:8]]
        rep.fail(
            f"index: index names are {shown}; expected a MultiIndex {list(INDEX_NAMES)} "
            "(was the index reset or dropped?)"
        )
        return rep
    dates = series.index.get_level_values("datetime")
    rep.lines += [n for n in notes if n.startswith("note: the datetime level")]
    insts = series.index.get_level_values("instrument")
    if not pd.api.types.is_datetime64_any_dtype(dates):
        rep.fail(f"index: the datetime level has dtype {dates.dtype}; expected datetime64")
    if not (pd.api.types.is_object_dtype(insts) or pd.api.types.is_string_dtype(insts)):
        rep.fail(f"index: the instrument level has dtype {insts.dtype}; expected strings")
    if rep.failures:
        return rep
    rep.lines.append(
        f"[ok] index: (datetime, instrument) with dtypes {dates.dtype} / {insts.dtype}"
    )
    dup = int(series.index.duplicated().sum())
    if dup:
        rep.fail(f"index: {dup} duplicated (datetime, instrument) pairs")
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        rep.fail(f"values: column {column!r} has dtype {series.dtype}; expected float")
        return rep
    series = series.astype("float64")
    _check_daily(dates, rep)
    values = series.to_numpy()
    n_nan, n_inf = int(np.isnan(values).sum()), int(np.isinf(values).sum())
    share = n_nan / max(len(values), 1)
    text = f"values: NaN {n_nan} of {len(values)} ({share:.1%}), inf {n_inf}"
    if n_inf and infinite == "as_nan":
        text += " (infinite values count as NaN)"
        series = series.replace([np.inf, -np.inf], np.nan)
    if len(values) and n_nan == len(values):
        rep.fail(text + " — every value is NaN")
    else:
        rep.lines.append(f"[ok] {text}")
    rep.series = series.sort_index()
    return rep


def _check_daily(dates: pd.Index, rep: FormatReport) -> None:
    """Daily dates: no time of day, a median gap of 1 to 4 days. Tz-aware dates are checked
    on their wall clock (normalising them could land in a DST gap, which pandas raises on)."""
    unique = pd.DatetimeIndex(dates.unique())
    if unique.tz is not None:
        unique = unique.tz_localize(None)
    unique = unique.dropna().sort_values()
    if len(unique) and not (unique == unique.normalize()).all():
        rep.fail("frequency: datetimes carry a time of day; expected daily dates")
        return
    if len(unique) < 2:
        rep.lines.append(f"[ok] frequency: {len(unique)} distinct date(s)")
        return
    gap = float(np.median(np.diff(unique.to_numpy()).astype("timedelta64[s]").astype(float)))
    days = gap / 86400.0
    if days > 4.0 or days < 1.0:
        rep.fail(f"frequency: median gap between dates is {days:.2f} days; expected daily")
    else:
        rep.lines.append(f"[ok] frequency: daily (median gap {days:.0f} day)")
