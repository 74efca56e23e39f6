"""The comparison of a formatted factor with the truth (pure, no I/O).

Checks, each one report line (``[FAIL]`` when failed): rows and index overlap, the NaN pattern
(the candidate is missing where the truth is: suspended days are NaN, not 0), the equal-value
ratio, the mean per-date IC / rank IC and the one-day shift. The *acceptance rule* (per task,
default ``EvaluatorSettings.factor_acceptance``) says which of them can accept:

* ``equal`` — equal values only;
* ``equal_or_scaled`` — equal values, or a per-date affine transform of the truth (mean IC at
  least ``scaled_ic_threshold``; reported as accepted by correlation);
* ``equal_or_correlated`` — equal values, or mean IC and rank IC above ``ic_threshold``.

Every rule requires the NaN pattern and rejects a factor that equals the truth shifted by a day
(only when the shifted truth explains it better than the truth itself: a slowly changing factor
equals its own lag too). A failed comparison is classified (:mod:`._factor_mismatch`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from costeer_lab.errors import InvalidInputError
from costeer_lab.evaluate._factor_mismatch import classify_mismatch, equal_mask, mismatch_rows
from costeer_lab.settings import EvaluatorSettings

__all__ = ["ACCEPTANCE_RULES", "Comparison", "compare_to_truth"]

ACCEPTANCE_RULES = ("equal", "equal_or_scaled", "equal_or_correlated")


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


def _equal_ratio(cand: pd.Series, truth: pd.Series, s: EvaluatorSettings) -> float:
    if not len(truth):
        return 0.0
    return float(equal_mask(cand.to_numpy(float), truth.to_numpy(float), s).mean())


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


def _nan_match(cand: np.ndarray, truth: np.ndarray) -> tuple[float, int, int]:
    """(share of the truth's NaN rows where the candidate is NaN too, filled, truth NaN)."""
    truth_nan = np.isnan(truth)
    filled = int((truth_nan & ~np.isnan(cand)).sum())
    n = int(truth_nan.sum())
    return (1.0 - filled / n if n else 1.0), filled, n


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
        s: thresholds and ``feedback_detail`` (rows shown with the values of both at
            ``"full"``, only the candidate's at ``"diagnostics"``).
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
    c_arr, t_arr = aligned.to_numpy(float), truth.to_numpy(float)
    finite_t, finite_c = np.isfinite(t_arr), np.isfinite(c_arr)
    coverage = float((finite_c & finite_t).sum() / max(finite_t.sum(), 1))
    nan_c, nan_t = int((~finite_c).sum()), int((~finite_t).sum())
    nan_line = (
        f"NaN on the ground-truth index: candidate {nan_c}, ground truth {nan_t}; "
        f"finite coverage {coverage:.3f}"
    )
    nan_match, filled, truth_nan = _nan_match(c_arr, t_arr)
    nan_ok = nan_match >= s.nan_match_threshold
    if coverage < s.index_overlap_threshold:
        lines.append(f"[FAIL] {nan_line} — the candidate is NaN where the truth has values")
    else:
        lines.append(nan_line)
    fill_line = (
        f"NaN pattern: the candidate has values on {filled} of the {truth_nan} rows where the "
        f"truth is NaN (suspended days, warm-up); share kept NaN {nan_match:.3f} "
        f"(threshold {s.nan_match_threshold})"
    )
    lines.append(fill_line if nan_ok else f"[FAIL] {fill_line} — were missing values filled?")
    equal = _equal_ratio(aligned, truth, s)
    tol = f"|diff| <= {s.equal_value_atol:g} + {s.equal_value_rtol:g}*|truth|"
    ic, n_ic = _mean_ic(aligned, truth, s.min_ic_instruments, rank=False)
    ric, _ = _mean_ic(aligned, truth, s.min_ic_instruments, rank=True)
    by_inst = truth.groupby(level="instrument")
    lag = {k: _equal_ratio(aligned, by_inst.shift(k), s) for k in (1, -1)}
    eq_ok = equal > s.equal_value_threshold
    ic_path = overlap >= s.index_overlap_threshold and coverage >= s.index_overlap_threshold
    if rule == "equal_or_correlated":
        corr_ok = ic > s.ic_threshold and ric > s.ic_threshold  # NaN compares False
        corr_text = f"threshold {s.ic_threshold}"
    elif rule == "equal_or_scaled":
        corr_ok = ic >= s.scaled_ic_threshold and ric > s.ic_threshold
        corr_text = f"per-date affine transform when IC >= {s.scaled_ic_threshold}"
    else:
        corr_ok, corr_text = False, "not an acceptance path under this rule"
    best_lag = max(lag.values())
    shifted = best_lag > s.equal_value_threshold and best_lag > equal
    eq_line = f"equal values ({tol}): {equal:.4f} (threshold {s.equal_value_threshold})"
    lines.append(eq_line if eq_ok else f"[FAIL] {eq_line}")
    ic_line = f"mean IC {ic:.4f}, mean rank IC {ric:.4f} over {n_ic} dates ({corr_text})"
    lines.append(ic_line if corr_ok or rule == "equal" else f"[FAIL] {ic_line}")
    if shifted:
        k = 1 if lag[1] >= lag[-1] else -1
        what = "one day late (yesterday's value)" if k == 1 else "one day early (look-ahead)"
        msg = f"dates: the values equal the ground truth shifted {what}; check Ref/shift use"
        failures.append(msg)
        lines.append(f"[FAIL] {msg}")
    accepted_by = ""
    if nan_ok and not shifted:
        if eq_ok:
            accepted_by = "equal_values"
        elif corr_ok and ic_path:
            accepted_by = "correlation"
    decision = bool(accepted_by)
    metrics: dict[str, Any] = {
        "row_ratio": ratio,
        "index_overlap": overlap,
        "finite_coverage": coverage,
        "nan_candidate": nan_c,
        "nan_truth": nan_t,
        "nan_match": nan_match,
        "equal_value_ratio": equal,
        "ic": ic,
        "rank_ic": ric,
        "ic_dates": n_ic,
        "equal_value_ratio_lag1": lag[1],
        "equal_value_ratio_lead1": lag[-1],
        "acceptance_rule": rule,
        "accepted_by": accepted_by,
    }
    mismatch, rows = "", []
    if not decision:
        if not nan_ok:
            failures.append(fill_line)
        if not eq_ok:
            failures.append(eq_line)
        if not corr_ok and rule != "equal":
            failures.append(ic_line)
        if not ic_path and not eq_ok:
            failures.append(
                f"index overlap {overlap:.3f} or finite coverage {coverage:.3f} too low"
            )
        mismatch, why = classify_mismatch(aligned, truth, s, nan_ok=nan_ok, ic=ic)
        metrics["mismatch"] = mismatch
        lines.append(f"mismatch: {mismatch} — {why}")
        rows = mismatch_rows(aligned, truth, s, s.feedback_detail)
        lines += rows
        verdict = f"FAIL ({mismatch})"
    elif accepted_by == "correlation":
        verdict = "SUCCESS (correlation: not equal values, accepted by the correlation path)"
    else:
        verdict = "SUCCESS (equal-value ratio)"
    lines.append(f"acceptance rule: {rule}")
    lines.append(f"decision: {verdict}")
    return Comparison(decision, lines, metrics, failures, accepted_by, mismatch, rows)
