"""Pure checks of a factor output (no I/O): format checks and the comparison with the truth.

Every check appends one readable line to a report; lines of failed checks start with
``[FAIL]`` so coders (and tests) can spot them.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from costeer_lab.settings import EvaluatorSettings

__all__ = ["Comparison", "FormatReport", "compare_to_truth", "read_factor"]

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
) -> FormatReport:
    """Parse the candidate's output and run the format checks. Files whose footer announces
    more than ``max_rows`` rows or ``max_bytes`` uncompressed bytes are refused unread.

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
    if n_inf:
        rep.fail(text + " — replace or avoid infinite values")
    elif len(values) and n_nan == len(values):
        rep.fail(text + " — every value is NaN")
    else:
        rep.lines.append(f"[ok] {text}")
    rep.series = series.sort_index()
    return rep


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


@dataclass
class Comparison:
    """Outcome of :func:`compare_to_truth`: decision, report lines and metrics."""

    decision: bool
    lines: list[str]
    metrics: dict[str, Any]
    failures: list[str]


def _equal_ratio(cand: pd.Series, truth: pd.Series, s: EvaluatorSettings) -> float:
    c, t = cand.to_numpy(dtype=float), truth.to_numpy(dtype=float)
    both_nan = np.isnan(c) & np.isnan(t)
    with np.errstate(invalid="ignore"):
        close = np.abs(c - t) <= s.equal_value_atol + s.equal_value_rtol * np.abs(t)
    return float((both_nan | close).mean()) if len(t) else 0.0


def _cross_sectional_ranks(
    values: np.ndarray, dates: np.ndarray, insts: np.ndarray | None
) -> np.ndarray:
    """Average ranks (1-based, ties share the mean rank) of ``values`` within each date.

    With instrument codes (a unique index) the values are laid out as a dates × instruments
    matrix and ranked row-wise, about four times faster than a group-by rank, which is the
    fallback.
    """
    if insts is None:
        return pd.Series(values).groupby(dates).rank().to_numpy()
    matrix = np.full((int(dates.max()) + 1, int(insts.max()) + 1), np.nan)
    matrix[dates, insts] = values
    ranked: np.ndarray = pd.DataFrame(matrix).rank(axis=1).to_numpy()
    out: np.ndarray = ranked[dates, insts]
    return out


def _mean_ic(cand: pd.Series, truth: pd.Series, min_n: int, rank: bool) -> tuple[float, int]:
    """Mean over dates of the cross-sectional Pearson (or Spearman) correlation."""
    c, t = cand.to_numpy(dtype=float), truth.to_numpy(dtype=float)
    index = truth.index
    insts: np.ndarray | None = None
    codes: np.ndarray
    if isinstance(index, pd.MultiIndex) and index.is_unique:
        codes = np.asarray(index.codes[index.names.index("datetime")], dtype=np.int64)
        insts = np.asarray(index.codes[index.names.index("instrument")], dtype=np.int64)
    else:
        codes = pd.factorize(index.get_level_values("datetime"))[0].astype(np.int64)
    keep = np.isfinite(c) & np.isfinite(t)
    c, t, codes = c[keep], t[keep], codes[keep]
    if not len(c):
        return math.nan, 0
    if rank:
        insts = None if insts is None else insts[keep]
        c = _cross_sectional_ranks(c, codes, insts)
        t = _cross_sectional_ranks(t, codes, insts)
    size = int(codes.max()) + 1
    n = np.bincount(codes, minlength=size).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        dc = c - (np.bincount(codes, c, size) / n)[codes]
        dt = t - (np.bincount(codes, t, size) / n)[codes]
        sct = np.bincount(codes, dc * dt, size)
        scc = np.bincount(codes, dc * dc, size)
        stt = np.bincount(codes, dt * dt, size)
        scale = np.sqrt(scc * stt)
        usable = (n >= min_n) & (scale > 1e-12 * (1.0 + stt))
        if not usable.any():
            return math.nan, 0
        ic = sct[usable] / scale[usable]
    return float(ic.mean()), int(usable.sum())


def compare_to_truth(cand: pd.Series, truth: pd.Series, s: EvaluatorSettings) -> Comparison:
    """Compare a formatted candidate factor with the ground truth (both indexed like the panel)."""
    lines: list[str] = []
    failures: list[str] = []
    n_c, n_t = len(cand), len(truth)
    overlap = float(truth.index.isin(cand.index).mean()) if n_t else 0.0
    ratio = n_c / n_t if n_t else math.inf
    lines.append(
        f"rows: {n_c} vs {n_t} in the ground truth (ratio {ratio:.3f}); "
        f"index overlap {overlap:.3f}"
    )
    aligned = cand.reindex(truth.index)
    finite_t = np.isfinite(truth.to_numpy())
    finite_c = np.isfinite(aligned.to_numpy())
    coverage = float((finite_c & finite_t).sum() / max(finite_t.sum(), 1))
    nan_c, nan_t = int((~finite_c).sum()), int((~finite_t).sum())
    nan_line = (
        f"NaN on the ground-truth index: candidate {nan_c}, ground truth {nan_t}; "
        f"finite coverage {coverage:.3f}"
    )
    if coverage < s.index_overlap_threshold:
        failures.append(nan_line)
        lines.append(f"[FAIL] {nan_line} — the candidate is NaN where the truth has values")
    else:
        lines.append(nan_line)
    equal = _equal_ratio(aligned, truth, s)
    tol = f"|diff| <= {s.equal_value_atol:g} + {s.equal_value_rtol:g}*|truth|"
    ic, n_ic = _mean_ic(aligned, truth, s.min_ic_instruments, rank=False)
    ric, _ = _mean_ic(aligned, truth, s.min_ic_instruments, rank=True)
    by_inst = truth.groupby(level="instrument")
    lag = {k: _equal_ratio(aligned, by_inst.shift(k), s) for k in (1, -1)}
    metrics: dict[str, Any] = {
        "row_ratio": ratio,
        "index_overlap": overlap,
        "finite_coverage": coverage,
        "nan_candidate": nan_c,
        "nan_truth": nan_t,
        "equal_value_ratio": equal,
        "ic": ic,
        "rank_ic": ric,
        "ic_dates": n_ic,
        "equal_value_ratio_lag1": lag[1],
        "equal_value_ratio_lead1": lag[-1],
    }
    eq_ok = equal > s.equal_value_threshold
    ic_ok = ic > s.ic_threshold and ric > s.ic_threshold  # NaN compares False
    ic_path = overlap >= s.index_overlap_threshold and coverage >= s.index_overlap_threshold
    shifted = max(lag.values()) > s.equal_value_threshold
    eq_line = f"equal values ({tol}): {equal:.4f} (threshold {s.equal_value_threshold})"
    lines.append(eq_line if eq_ok else f"[FAIL] {eq_line}")
    ic_line = (
        f"mean IC {ic:.4f}, mean rank IC {ric:.4f} over {n_ic} dates (threshold {s.ic_threshold})"
    )
    lines.append(ic_line if ic_ok else f"[FAIL] {ic_line}")
    if shifted:
        k = 1 if lag[1] >= lag[-1] else -1
        what = "one day late (yesterday's value)" if k == 1 else "one day early (look-ahead)"
        msg = f"dates: the values equal the ground truth shifted {what}; check Ref/shift use"
        failures.append(msg)
        lines.append(f"[FAIL] {msg}")
    if not ic_path and not eq_ok:
        failures.append(f"index overlap {overlap:.3f} or finite coverage {coverage:.3f} too low")
    decision = (eq_ok or (ic_path and ic_ok)) and not shifted
    if not decision:
        if not eq_ok:
            failures.append(eq_line)
        if not ic_ok:
            failures.append(ic_line)
    why = "equal-value ratio" if eq_ok else "IC path" if decision else "checks failed"
    lines.append(f"decision: {'SUCCESS' if decision else 'FAIL'} ({why})")
    return Comparison(decision, lines, metrics, failures)
