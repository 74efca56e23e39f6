"""Pure checks of a factor output (no I/O): format checks and the comparison with the truth.

Every check appends one readable line to a report; lines of failed checks start with
``[FAIL]`` so coders (and tests) can spot them.
"""

from __future__ import annotations

import datetime as _dt
import io
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from costeer_lab.evaluate._factor_compare import (
    Comparison,
    _cross_sectional_ranks,
    _equal_ratio,
    _mean_ic,
    compare_to_truth,
)

__all__ = ["Comparison", "FormatReport", "compare_to_truth", "read_factor"]
__all__ += ["_cross_sectional_ranks", "_equal_ratio", "_mean_ic"]  # exact-boundary tests

INDEX_NAMES = ("datetime", "instrument")


@dataclass
class FormatReport:
    """Outcome of :func:`read_factor`: the factor series (``None`` when unusable) and lines."""

    series: pd.Series | None
    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.series is not None and not self.failures

    def fail(self, text: str) -> None:
        self.failures.append(text)
        self.lines.append(f"[FAIL] {text}")


def _too_large(data: bytes, name: str, max_rows: int, max_bytes: int) -> str | None:
    """Why the Parquet file is refused before decoding (its footer states the rows and the
    uncompressed size: a few kilobytes of constant columns can decode to gigabytes in the
    trusted process), or ``None``. Unreadable footers are left to the parser's error."""
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(io.BytesIO(data)).metadata
    except Exception:
        return None
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if meta.num_rows > max_rows:
        return f"output: {name} has {meta.num_rows} rows; at most {max_rows} are read"
    if size > max_bytes:
        return f"output: {name} decodes to {size} bytes; at most {max_bytes} are read"
    return None


def read_factor(
    data: bytes,
    name: str = "result.parquet",
    *,
    max_rows: int = 5_000_000,
    max_bytes: int = 512 * 1024 * 1024,
    infinite: str = "as_nan",
) -> FormatReport:
    """Parse the candidate's output and run the format checks. Files whose footer announces
    more than ``max_rows`` rows or ``max_bytes`` uncompressed bytes are refused unread.

    ``infinite`` (the ``factor_infinite`` setting): ``"as_nan"`` turns +-inf into NaN (they
    count as missing values), ``"exact"`` keeps them; infinities fail no format check. A
    ``datetime`` level of ``datetime.date`` objects (what ``.dt.date`` gives) is converted.

    Example:
        >>> idx = pd.MultiIndex.from_product([pd.to_datetime(["2020-01-02", "2020-01-03"]),
        ...                                   ["A", "B"]], names=["datetime", "instrument"])
        >>> buf = io.BytesIO(); pd.DataFrame({"f": [1.0, 2, 3, 4]}, idx).to_parquet(buf)
        >>> read_factor(buf.getvalue()).ok
        True
    """
    rep = FormatReport(None)
    refused = _too_large(data, name, max_rows, max_bytes)
    if refused is not None:
        rep.fail(refused)
        return rep
    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except Exception as exc:  # any parse error is feedback
        rep.fail(f"output: {name} could not be read as parquet ({type(exc).__name__}: {exc})")
        return rep
    if frame.shape[1] != 1:
        cols = [str(c) for c in frame.columns][:8]
        rep.fail(f"columns: {name} has {frame.shape[1]} columns {cols}; expected exactly one")
        return rep
    column = str(frame.columns[0])
    rep.lines.append(f"[ok] output: {name} parsed ({len(frame)} rows, 1 column {column!r})")
    series = frame.iloc[:, 0]
    index = series.index
    names = tuple(index.names)
    if names == INDEX_NAMES[::-1]:
        series = series.reorder_levels([1, 0])
        rep.lines.append("note: index levels were (instrument, datetime); reordered")
    elif names != INDEX_NAMES:
        rep.fail(
            f"index: index names are {list(names)}; expected a MultiIndex {list(INDEX_NAMES)} "
            "(was the index reset or dropped?)"
        )
        return rep
    dates = series.index.get_level_values("datetime")
    if _holds_dates(dates):
        series.index = pd.MultiIndex.from_arrays(
            [pd.to_datetime(dates), series.index.get_level_values("instrument")],
            names=list(INDEX_NAMES),
        )
        dates = series.index.get_level_values("datetime")
        rep.lines.append("note: the datetime level held datetime.date objects; converted")
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


def _holds_dates(level: pd.Index) -> bool:
    """Whether an object level holds ``datetime.date`` values (not ``datetime.datetime``)."""
    if not pd.api.types.is_object_dtype(level) or not len(level):
        return False
    first = level[0]
    return isinstance(first, _dt.date) and not isinstance(first, _dt.datetime)


def _check_daily(dates: pd.Index, rep: FormatReport) -> None:
    unique = pd.DatetimeIndex(dates.unique()).sort_values()
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
