"""The comparison of a formatted factor with the truth (pure, no I/O).

Checks, each one report line (``[FAIL]`` when failed): rows and index overlap, the NaN pattern
(the candidate is missing where the truth is: suspended days are NaN, not 0), the equal-value
ratio, the mean per-date IC / rank IC, the dates the IC scores and the one-day shift. The
*acceptance rule* (per task, default ``EvaluatorSettings.factor_acceptance``) says which of them
can accept:

* ``equal`` — equal values only;
* ``equal_or_scaled`` — equal values, or a per-date affine transform of the truth (mean IC at
  least ``scaled_ic_threshold``, mean rank IC above ``ic_threshold``; reported as accepted by
  correlation);
* ``equal_or_correlated`` — equal values, or mean IC and rank IC above ``ic_threshold``.

The correlation path also needs the index overlap and finite coverage (``>=
index_overlap_threshold``) and the candidate on (nearly) every date (:class:`DateICs`): a date
is *scored* when the truth has at least ``min_ic_instruments`` finite values there that are not
all equal; the means run over every scored date, a date where the candidate is constant or has
too few finite values counting as IC 0, and the share of scored dates where the candidate is
usable must be ``>= ic_date_coverage_threshold``. (A factor right on one date and constant on
the others used to pass: constant dates were dropped from the mean.) Dates where the truth is
flat (a warm-up) or sparse have no cross-section to correlate and are not scored.

Every rule requires the NaN pattern and rejects a factor that equals the truth shifted by a day
(only when the shifted truth explains it better than the truth itself: a slowly changing factor
equals its own lag too). A failed comparison is classified (:mod:`._factor_mismatch`).

The report's precision follows ``feedback_detail``: ``full`` shows every metric precisely;
below, each metric computed against the truth is a one-decimal band (:func:`band`) and counts
that depend on the truth are left out, so that the text is no oracle of the truth's values (an
adaptive coder could otherwise climb a 4-decimal IC). ``Comparison.metrics`` stay precise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from costeer_lab.errors import InvalidInputError
from costeer_lab.evaluate._factor_mismatch import (
    band,
    classify_mismatch,
    effective_atol,
    equal_mask,
    mismatch_rows,
    truth_scale,
)
from costeer_lab.settings import EvaluatorSettings

__all__ = ["ACCEPTANCE_RULES", "Comparison", "DateICs", "band", "compare_to_truth", "date_ics"]

ACCEPTANCE_RULES = ("equal", "equal_or_scaled", "equal_or_correlated")
#: A candidate's cross-section is constant on a date when its standard deviation there is at
#: most this share of its largest absolute value (floating-point noise, not a signal).
_CONSTANT_RTOL = 1e-12


@dataclass
class Comparison:
    """Outcome of :func:`compare_to_truth`: decision, report lines and metrics.

    ``accepted_by`` is ``"equal_values"``, ``"correlation"`` or ``""`` (rejected);
    ``mismatch`` the class of a rejected factor (``"sign"``, ``"lag"``, ``"nan_pattern"``, …).
    """

    decision: bool
    lines: list[str]
    metrics: dict[str, Any]
    failures: list[str]
    accepted_by: str = ""
    mismatch: str = ""
    rows: list[str] = field(default_factory=list)


def _equal_ratio(cand: pd.Series, truth: pd.Series, s: EvaluatorSettings, scale: float) -> float:
    """Share of the truth's rows where ``cand`` equals it (``scale``: of the whole truth)."""
    if not len(truth):
        return 0.0
    return float(equal_mask(cand.to_numpy(float), truth.to_numpy(float), s, scale=scale).mean())


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


@dataclass(frozen=True)
class DateICs:
    """The per-date correlation of a candidate with the truth, summarised over dates.

    A date is *scored* when the truth has at least ``min_n`` finite values there and they are
    not all equal (within the equal-value tolerance); on a scored date the candidate is
    *usable* when it has at least ``min_n`` finite values paired with the truth's and they are
    not constant. ``ic`` and ``rank_ic`` are means over every scored date, an unusable date
    counting as IC 0 (never dropped). Dates where the truth is flat or has fewer than
    ``min_n`` finite values carry no cross-section to correlate: they are not scored.

    Attributes:
        ic: mean Pearson IC over the scored dates (NaN when none is scored).
        rank_ic: mean Spearman rank IC over the scored dates (NaN when none is scored).
        scored: dates scored.
        usable: scored dates where the candidate is usable.
        flat: dates not scored because the truth's values there are all equal.
        sparse: dates not scored because the truth has fewer than ``min_n`` finite values.
    """

    ic: float
    rank_ic: float
    scored: int
    usable: int
    flat: int
    sparse: int

    @property
    def coverage(self) -> float:
        """Share of the scored dates where the candidate is usable (NaN when none is scored)."""
        return self.usable / self.scored if self.scored else math.nan


def _date_codes(index: pd.Index) -> tuple[np.ndarray, np.ndarray | None]:
    """(date code of each row, instrument code of each row or ``None`` when not unique)."""
    if isinstance(index, pd.MultiIndex) and index.is_unique:
        codes = np.asarray(index.codes[index.names.index("datetime")], dtype=np.int64)
        insts = np.asarray(index.codes[index.names.index("instrument")], dtype=np.int64)
        return codes, insts
    return pd.factorize(index.get_level_values("datetime"))[0].astype(np.int64), None


def _group_extremes(x: np.ndarray, codes: np.ndarray, size: int) -> tuple[np.ndarray, ...]:
    """Per-date (min, max, max |x|) of ``x`` (NaN-free); dates without values give 0."""
    lo, hi = np.full(size, np.inf), np.full(size, -np.inf)
    np.minimum.at(lo, codes, x)
    np.maximum.at(hi, codes, x)
    lo[np.isinf(lo)] = 0.0
    hi[np.isinf(hi)] = 0.0
    return lo, hi, np.maximum(np.abs(lo), np.abs(hi))


def _truth_dates(
    t: np.ndarray, codes: np.ndarray, size: int, min_n: int, atol: float, rtol: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-date masks (scored, flat, sparse) of the truth (see :class:`DateICs`)."""
    finite = np.isfinite(t)
    n = np.bincount(codes[finite], minlength=size)
    lo, hi, top = _group_extremes(t[finite], codes[finite], size)
    enough = n >= min_n
    flat = enough & (hi - lo <= atol + rtol * top)
    return enough & ~flat, flat, ~enough


def _per_date_corr(
    c: np.ndarray, t: np.ndarray, codes: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """(per-date Pearson correlation, per-date candidate-not-constant mask) of paired values;
    the correlation is 0 where either side is constant (no correlation defined)."""
    n = np.bincount(codes, minlength=size).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        dc = c - (np.bincount(codes, c, size) / n)[codes]
        dt = t - (np.bincount(codes, t, size) / n)[codes]
        sct = np.bincount(codes, dc * dt, size)
        scc = np.bincount(codes, dc * dc, size)
        stt = np.bincount(codes, dt * dt, size)
        top_c = _group_extremes(c, codes, size)[2]
        moves = np.sqrt(scc / np.maximum(n, 1.0)) > _CONSTANT_RTOL * top_c
        defined = moves & (stt > 0) & (scc > 0)
        corr = np.where(defined, sct / np.sqrt(scc * stt), 0.0)
    return corr, moves


def date_ics(
    cand: pd.Series,
    truth: pd.Series,
    min_n: int,
    *,
    atol: float = 1e-6,
    rtol: float = 1e-5,
) -> DateICs:
    """Mean per-date IC and rank IC of a candidate aligned on the truth (see :class:`DateICs`).

    ``atol`` and ``rtol`` are the equal-value tolerance: a date whose truth values all lie
    within ``atol * min(1, scale) + rtol * max|truth|`` of one another is flat (not scored),
    ``scale`` being the truth's median nonzero magnitude (:func:`truth_scale`): a factor of size
    1e-10 is not flat on every date.

    Example:
        >>> idx = pd.MultiIndex.from_product([pd.to_datetime(["2020-01-02", "2020-01-03"]),
        ...                                   ["A", "B", "C"]], names=["datetime", "instrument"])
        >>> truth = pd.Series([1.0, 2, 3, 4, 5, 7], idx)
        >>> one_date = pd.Series([0.0, 0, 0, 4, 5, 7], idx)  # right on the last date only
        >>> d = date_ics(one_date, truth, 3)
        >>> d.ic, d.scored, d.usable, d.coverage
        (0.5, 2, 1, 0.5)
    """
    c, t = cand.to_numpy(dtype=float), truth.to_numpy(dtype=float)
    codes, insts = _date_codes(truth.index)
    if not len(t):
        return DateICs(math.nan, math.nan, 0, 0, 0, 0)
    size = int(codes.max()) + 1
    atol = atol * min(1.0, truth_scale(t))
    scored, flat, sparse = _truth_dates(t, codes, size, min_n, atol, rtol)
    keep = np.isfinite(c) & np.isfinite(t)
    n_scored = int(scored.sum())
    if not n_scored or not keep.any():  # no date to score, or nothing to score it with
        ic = math.nan if not n_scored else 0.0
        return DateICs(ic, ic, n_scored, 0, int(flat.sum()), int(sparse.sum()))
    c, t, codes = c[keep], t[keep], codes[keep]
    pairs = np.bincount(codes, minlength=size)
    ic_d, moves = _per_date_corr(c, t, codes, size)
    ranked_insts = None if insts is None else insts[keep]
    ric_d, _ = _per_date_corr(
        _cross_sectional_ranks(c, codes, ranked_insts),
        _cross_sectional_ranks(t, codes, ranked_insts),
        codes,
        size,
    )
    usable = scored & (pairs >= min_n) & moves
    ic = float(np.where(usable, ic_d, 0.0)[scored].mean())
    ric = float(np.where(usable, ric_d, 0.0)[scored].mean())
    return DateICs(ic, ric, n_scored, int(usable.sum()), int(flat.sum()), int(sparse.sum()))


def _mean_ic(cand: pd.Series, truth: pd.Series, min_n: int, rank: bool) -> tuple[float, int]:
    """(mean IC or rank IC, dates scored) of :func:`date_ics` at the default tolerance."""
    d = date_ics(cand, truth, min_n)
    return (d.rank_ic if rank else d.ic), d.scored


def _nan_match(cand: np.ndarray, truth: np.ndarray) -> tuple[float, int, int]:
    """(share of the truth's NaN rows where the candidate is NaN too, filled, truth NaN)."""
    truth_nan = np.isnan(truth)
    filled = int((truth_nan & ~np.isnan(cand)).sum())
    n = int(truth_nan.sum())
    return (1.0 - filled / n if n else 1.0), filled, n


@dataclass(frozen=True)
class _Text:
    """Formats numbers of the report: precise at ``full``, :func:`band` below (see
    ``EvaluatorSettings.feedback_detail``)."""

    precise: bool

    def share(self, x: float) -> str:
        return f"{x:.3f}" if self.precise else band(x)

    def ic(self, x: float) -> str:
        return f"{x:.4f}" if self.precise else band(x)


@dataclass(frozen=True)
class _Metrics:
    """Every number the comparison decides on (all precise)."""

    n_c: int
    n_t: int
    overlap: float
    coverage: float
    nan_c: int
    nan_t: int
    nan_match: float
    filled: int
    truth_nan: int
    equal: float
    dates: DateICs
    lag: dict[int, float]
    #: :func:`truth_scale` of the truth (the absolute tolerance follows it below 1).
    scale: float = 1.0


def _measure(
    aligned: pd.Series, cand: pd.Series, truth: pd.Series, s: EvaluatorSettings
) -> _Metrics:
    """Compute the comparison's metrics (candidate already aligned on the truth's index)."""
    n_t = len(truth)
    c_arr, t_arr = aligned.to_numpy(float), truth.to_numpy(float)
    finite_t, finite_c = np.isfinite(t_arr), np.isfinite(c_arr)
    nan_match, filled, truth_nan = _nan_match(c_arr, t_arr)
    by_inst = truth.groupby(level="instrument")
    scale = truth_scale(t_arr)
    return _Metrics(
        n_c=len(cand),
        n_t=n_t,
        overlap=float(truth.index.isin(cand.index).mean()) if n_t else 0.0,
        coverage=float((finite_c & finite_t).sum() / max(finite_t.sum(), 1)),
        nan_c=int((~finite_c).sum()),
        nan_t=int((~finite_t).sum()),
        nan_match=nan_match,
        filled=filled,
        truth_nan=truth_nan,
        equal=_equal_ratio(aligned, truth, s, scale),
        dates=date_ics(
            aligned, truth, s.min_ic_instruments, atol=s.equal_value_atol, rtol=s.equal_value_rtol
        ),
        lag={k: _equal_ratio(aligned, by_inst.shift(k), s, scale) for k in (1, -1)},
        scale=scale,
    )


def _correlation_ok(m: _Metrics, rule: str, s: EvaluatorSettings) -> tuple[bool, str]:
    """(the IC conditions of ``rule`` hold, the rule's words for the report)."""
    ic, ric = m.dates.ic, m.dates.rank_ic
    if rule == "equal_or_correlated":
        return ic > s.ic_threshold and ric > s.ic_threshold, f"threshold {s.ic_threshold}"
    if rule == "equal_or_scaled":
        ok = ic >= s.scaled_ic_threshold and ric > s.ic_threshold  # NaN compares False
        return ok, f"per-date affine transform when IC >= {s.scaled_ic_threshold}"
    return False, "not an acceptance path under this rule"


def _dates_ok(m: _Metrics, s: EvaluatorSettings) -> bool:
    """Whether the candidate is usable on enough of the dates the IC scores."""
    return m.dates.scored > 0 and m.dates.coverage >= s.ic_date_coverage_threshold


def _ic_lines(m: _Metrics, s: EvaluatorSettings, fmt: _Text, corr_text: str) -> tuple[str, str]:
    """(the IC line, the IC-dates line, which states the date rule)."""
    d, n = m.dates, s.min_ic_instruments
    rule = (
        f"a date is scored when the truth has >= {n} finite values there, not all equal; "
        f"it scores IC 0 when the candidate is constant or has < {n} finite values there"
    )
    thr = f"threshold {s.ic_date_coverage_threshold}"
    if fmt.precise:
        ic = f"mean IC {fmt.ic(d.ic)}, mean rank IC {fmt.ic(d.rank_ic)} over {d.scored} dates"
        usable = f"usable on {d.usable} of {d.scored} scored dates ({d.coverage:.3f}, {thr})"
        skipped = f"; not scored: {d.flat} flat and {d.sparse} sparse truth dates"
    else:
        ic = f"mean IC {band(d.ic)}, mean rank IC {band(d.rank_ic)} (one decimal, rounded down)"
        usable = f"usable on a share {band(d.coverage)} of the scored dates ({thr})"
        skipped = ""
    return f"{ic} ({corr_text})", f"IC dates: the candidate is {usable}; {rule}{skipped}"


def _tolerance_text(scale: float, s: EvaluatorSettings, fmt: _Text) -> str:
    """The equal-value test in the report. At ``full``, its numbers (and the truth's scale when
    it shrinks the absolute tolerance); below, the formula only when the settings' ``atol`` is
    not zero: whether the truth's magnitude is below 1 would be a hint of the hidden values."""
    atol, rtol = s.equal_value_atol, s.equal_value_rtol
    if fmt.precise:
        text = f"|diff| <= {effective_atol(s, scale):g} + {rtol:g}*|truth|"
        if scale < 1.0 and atol:
            text += f"; atol {atol:g} x the truth's median |value| {scale:.3g}"
        return text
    if not atol:
        return f"|diff| <= 0 + {rtol:g}*|truth|"
    return f"|diff| <= {atol:g}*min(1, m) + {rtol:g}*|truth|; m: median |truth|"


def _report_lines(
    m: _Metrics, s: EvaluatorSettings, fmt: _Text
) -> tuple[list[str], str, str, str]:
    """(the row and NaN lines, the NaN-pattern line, the equal-value line, the overlap failure)
    of the report, each at the precision ``fmt`` allows."""
    thr = f"threshold {s.index_overlap_threshold}"
    if fmt.precise:
        ratio = m.n_c / m.n_t if m.n_t else math.inf
        rows = (
            f"rows: {m.n_c} vs {m.n_t} in the ground truth (ratio {ratio:.3f}); "
            f"index overlap {m.overlap:.3f}"
        )
        nan = (
            f"NaN on the ground-truth index: candidate {m.nan_c}, ground truth {m.nan_t}; "
            f"finite coverage {m.coverage:.3f}"
        )
        fill = (
            f"NaN pattern: the candidate has values on {m.filled} of the {m.truth_nan} rows where "
            f"the truth is NaN (suspended days, warm-up); share kept NaN {m.nan_match:.3f} "
            f"(threshold {s.nan_match_threshold})"
        )
    else:
        rows = f"rows: {m.n_c}; index overlap with the ground truth {band(m.overlap)} ({thr})"
        nan = f"NaN on the ground-truth index: finite coverage {band(m.coverage)} ({thr})"
        fill = (
            "NaN pattern: share of the truth's NaN rows (suspended days, warm-up) where the "
            f"candidate is NaN too {band(m.nan_match)} (threshold {s.nan_match_threshold})"
        )
    tol = _tolerance_text(m.scale, s, fmt)
    shown = f"{m.equal:.4f}" if fmt.precise else band(m.equal)
    eq = f"equal values ({tol}): {shown} (threshold {s.equal_value_threshold})"
    low = f"index overlap {fmt.share(m.overlap)} or finite coverage {fmt.share(m.coverage)}"
    low += " too low"
    return [rows, nan], fill, eq, low


def _metrics_dict(
    m: _Metrics, s: EvaluatorSettings, rule: str, accepted_by: str
) -> dict[str, Any]:
    """The precise metrics for the trusted results (``SingleFeedback.details``)."""
    return {
        "row_ratio": m.n_c / m.n_t if m.n_t else math.inf,
        "index_overlap": m.overlap,
        "finite_coverage": m.coverage,
        "nan_candidate": m.nan_c,
        "nan_truth": m.nan_t,
        "nan_match": m.nan_match,
        "equal_value_ratio": m.equal,
        "ic": m.dates.ic,
        "rank_ic": m.dates.rank_ic,
        "ic_dates": m.dates.scored,
        "ic_dates_usable": m.dates.usable,
        "ic_date_coverage": m.dates.coverage,
        "ic_dates_flat": m.dates.flat,
        "ic_dates_sparse": m.dates.sparse,
        "equal_value_ratio_lag1": m.lag[1],
        "equal_value_ratio_lead1": m.lag[-1],
        "truth_scale": m.scale,
        "equal_value_atol": effective_atol(s, m.scale),
        "acceptance_rule": rule,
        "accepted_by": accepted_by,
    }


@dataclass(frozen=True)
class _Checks:
    """Which checks of the report passed, and what the acceptance rule makes of them."""

    rule: str
    nan_ok: bool
    eq_ok: bool
    corr_ok: bool
    corr_text: str
    dates_ok: bool
    ic_path: bool
    shift: int  # 1: equals the truth one day late, -1: one day early, 0: neither

    @property
    def accepted_by(self) -> str:
        """``"equal_values"``, ``"correlation"`` or ``""`` (rejected)."""
        if not self.nan_ok or self.shift:
            return ""
        if self.eq_ok:
            return "equal_values"
        return "correlation" if self.corr_ok and self.dates_ok and self.ic_path else ""


def _check(m: _Metrics, rule: str, s: EvaluatorSettings) -> _Checks:
    """Apply the thresholds of ``s`` and the acceptance rule to the metrics."""
    corr_ok, corr_text = _correlation_ok(m, rule, s)
    best_lag = max(m.lag.values())
    shifted = best_lag > s.equal_value_threshold and best_lag > m.equal
    return _Checks(
        rule=rule,
        nan_ok=m.nan_match >= s.nan_match_threshold,
        eq_ok=m.equal > s.equal_value_threshold,
        corr_ok=corr_ok,
        corr_text=corr_text,
        dates_ok=_dates_ok(m, s),
        ic_path=m.overlap >= s.index_overlap_threshold and m.coverage >= s.index_overlap_threshold,
        shift=(1 if m.lag[1] >= m.lag[-1] else -1) if shifted else 0,
    )


def _check_lines(
    m: _Metrics, k: _Checks, s: EvaluatorSettings, fmt: _Text
) -> tuple[list[str], list[str]]:
    """(the report's check lines, ``[FAIL]`` on failed ones; the failures of a rejection)."""
    lines, fill_line, eq_line, low_line = _report_lines(m, s, fmt)
    ic_line, dates_line = _ic_lines(m, s, fmt, k.corr_text)
    if m.coverage < s.index_overlap_threshold:
        lines[1] = f"[FAIL] {lines[1]} — the candidate is NaN where the truth has values"
    lines.append(fill_line if k.nan_ok else f"[FAIL] {fill_line} — were missing values filled?")
    info_only = k.rule == "equal"  # the IC lines are information only, never [FAIL]
    lines.append(eq_line if k.eq_ok else f"[FAIL] {eq_line}")
    lines.append(ic_line if k.corr_ok or info_only else f"[FAIL] {ic_line}")
    lines.append(dates_line if k.dates_ok or info_only else f"[FAIL] {dates_line}")
    failures: list[str] = []
    if k.shift:
        what = "one day late (yesterday's value)" if k.shift == 1 else "one day early (look-ahead)"
        msg = f"dates: the values equal the ground truth shifted {what}; check Ref/shift use"
        failures.append(msg)
        lines.append(f"[FAIL] {msg}")
    if not k.accepted_by:
        failed = [
            (not k.nan_ok, fill_line),
            (not k.eq_ok, eq_line),
            (not k.corr_ok and not info_only, ic_line),
            (not k.dates_ok and not info_only, dates_line),
            (not k.ic_path and not k.eq_ok, low_line),
        ]
        failures += [text for bad, text in failed if bad]
    return lines, failures


def compare_to_truth(
    cand: pd.Series,
    truth: pd.Series,
    s: EvaluatorSettings,
    *,
    acceptance: str | None = None,
) -> Comparison:
    """Compare a formatted candidate factor with the truth (both indexed like the panel).

    Args:
        cand: the candidate factor (``read_factor``'s series).
        truth: the ground-truth factor.
        s: thresholds and ``feedback_detail``: at ``"full"`` the lines show every metric
            precisely and the rows that differ with the values of both; below, metrics computed
            against the truth are shown in one-decimal bands (:func:`band`), counts that depend
            on the truth are left out and rows show only the candidate's value. The metrics
            (``Comparison.metrics``) are always precise.
        acceptance: the task's acceptance rule (default ``s.factor_acceptance``).

    Example:
        >>> idx = pd.MultiIndex.from_product([pd.to_datetime(["2020-01-02", "2020-01-03"]),
        ...                                   ["A", "B", "C"]], names=["datetime", "instrument"])
        >>> truth = pd.Series([1.0, 2, 3, 4, 5, 7], idx)
        >>> c = compare_to_truth(truth * 10, truth, EvaluatorSettings())
        >>> c.decision, c.accepted_by
        (True, 'correlation')
    """
    rule = acceptance or s.factor_acceptance
    if rule not in ACCEPTANCE_RULES:
        raise InvalidInputError(f"acceptance rule {rule!r}; expected one of {ACCEPTANCE_RULES}")
    aligned = cand.reindex(truth.index)
    m = _measure(aligned, cand, truth, s)
    k = _check(m, rule, s)
    fmt = _Text(precise=s.feedback_detail == "full")
    lines, failures = _check_lines(m, k, s, fmt)
    metrics = _metrics_dict(m, s, rule, k.accepted_by)
    mismatch, rows = "", []
    if not k.accepted_by:
        mismatch, why = classify_mismatch(
            aligned, truth, s, nan_ok=k.nan_ok, ic=m.dates.ic, precise=fmt.precise
        )
        metrics["mismatch"] = mismatch
        rows = mismatch_rows(aligned, truth, s, s.feedback_detail)
        lines += [f"mismatch: {mismatch} — {why}", *rows]
        verdict = f"FAIL ({mismatch})"
    elif k.accepted_by == "correlation":
        verdict = "SUCCESS (correlation: not equal values, accepted by the correlation path)"
    else:
        verdict = "SUCCESS (equal-value ratio)"
    lines += [f"acceptance rule: {rule}", f"decision: {verdict}"]
    return Comparison(bool(k.accepted_by), lines, metrics, failures, k.accepted_by, mismatch, rows)
