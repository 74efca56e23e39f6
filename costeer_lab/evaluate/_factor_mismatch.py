"""What kind of mistake a rejected factor makes, and a few rows that show it (pure, no I/O).

:func:`classify_mismatch` names one class per rejected factor; the evaluator turns the class
(only the class, not numbers) into the attempt's error fingerprint, so the error query can tell
a sign error from a window error:

==============  =====================================================================
class           meaning
==============  =====================================================================
``missing``     the candidate is missing where the truth has values: on most rows, or on
                some rows while equal to the truth where both have a value
``nan_pattern`` values equal where both have one, but the candidate has values where the
                truth is missing (fillna?)
``lag``         the truth of an earlier day (a shift too many)
``lead``        the truth of a later day (look-ahead)
``sign``        the candidate equals minus the truth
``scale``       an affine transform of the truth (``a * truth + b``, a != 1)
``offset``      the truth plus a constant
``window``      tracks the truth closely (IC > 0.8), and a window change explains it: its
                warm-up (leading missing values of an instrument) differs from the truth's,
                or it equals the truth on every instrument's first value (where windows of
                any length with ``min_periods=1`` agree)
``field``       tracks the truth closely (IC > 0.8) with the truth's warm-up but differs
                from an instrument's first value on: the same window on another input
                column (``$open`` for ``$close``)
``values``      different values (another formula, field or grouping)
==============  =====================================================================

The classes are tried in the order of the table: coverage (``missing``, ``nan_pattern``)
before shape, so a candidate equal to the truth but missing on a few rows is ``missing``,
never an ``offset`` of ``2e-16`` (unless the truth shifted by a few days equals it on more
rows: a late factor is missing its first rows too, and is ``lag``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from costeer_lab.settings import EvaluatorSettings

__all__ = [
    "MISMATCH_CLASSES",
    "band",
    "classify_mismatch",
    "effective_atol",
    "equal_mask",
    "mismatch_rows",
    "truth_scale",
]

MISMATCH_CLASSES = (
    "missing",
    "nan_pattern",
    "lag",
    "lead",
    "sign",
    "scale",
    "offset",
    "window",
    "field",
    "values",
)
#: Rows shown in the feedback of a mismatch.
MAX_ROWS = 5
_SHIFTS = (1, 2, 3, 5, -1, -2, -3, -5)


def band(x: float) -> str:
    """A number in one-decimal steps, rounded down: what ``diagnostics`` feedback shows of a
    metric computed against the truth (precise values would be an oracle of the truth).

    Example:
        >>> band(0.99994), band(-0.05), band(1.0), band(float("nan"))
        ('[0.9, 1.0)', '[-0.1, 0.0)', '1.0', 'n/a')
    """
    if not math.isfinite(x):
        return "n/a"
    if x >= 1.0 or x <= -1.0:
        return f"{max(-1.0, min(1.0, x)):.1f}"
    lo = math.floor(x * 10) / 10
    return f"[{lo:.1f}, {lo + 0.1:.1f})"


def truth_scale(t: np.ndarray) -> float:
    """The truth's magnitude that the equal-value test's absolute tolerance follows: the median
    of ``|t|`` over its finite nonzero values (``1.0`` when it has none).

    The median, not the mean or the largest value, so that a few huge values (a division by a
    near-zero market value) cannot lift the scale of a tiny factor back to 1; zeros left out,
    so that a sparse factor (mostly 0) keeps the scale of the values it has. The scale depends
    on the truth only: nothing a candidate writes can loosen its own test.

    Example:
        >>> truth_scale(np.array([0.0, 2e-10, -3e-10, 4e-10, np.nan, np.inf]))
        3e-10
        >>> truth_scale(np.array([0.0, np.nan]))
        1.0
    """
    a = np.abs(t[np.isfinite(t) & (t != 0)])
    return float(np.median(a)) if len(a) else 1.0


def effective_atol(s: EvaluatorSettings, scale: float) -> float:
    """The absolute tolerance of the equal-value test for a truth of magnitude ``scale``
    (:func:`truth_scale`): ``equal_value_atol * min(1, scale)``.

    ``equal_value_atol`` is stated for factors of unit size or more, where it is unchanged;
    for a smaller factor it shrinks with the factor, so that a factor of size 1e-10 (a turnover
    over a market value in raw units) is not equal to its negation, lag or window change.

    Example:
        >>> effective_atol(EvaluatorSettings(), 50.0), effective_atol(EvaluatorSettings(), 1e-4)
        (1e-06, 1e-10)
    """
    return s.equal_value_atol * min(1.0, scale)


def equal_mask(c: np.ndarray, t: np.ndarray, s: EvaluatorSettings, *, scale: float) -> np.ndarray:
    """Rows where the candidate equals the truth: both NaN, infinities of the same sign, or
    ``|c - t| <= atol + rtol * |t|`` with ``atol = effective_atol(s, scale)``.

    ``scale`` is :func:`truth_scale` of the whole truth (not of ``t``, which may be a subset
    of its rows or the truth shifted), so that every test of one comparison uses one tolerance.

    Example:
        >>> equal_mask(np.array([1.0, np.nan, np.inf]), np.array([1.0, np.nan, np.inf]),
        ...            EvaluatorSettings(), scale=1.0).tolist()
        [True, True, True]
        >>> equal_mask(np.array([-2e-10]), np.array([2e-10]), EvaluatorSettings(),
        ...            scale=2e-10).tolist()  # a tiny factor is not its own negation
        [False]
    """
    atol = effective_atol(s, scale)
    with np.errstate(invalid="ignore"):
        close = np.isfinite(t) & (np.abs(c - t) <= atol + s.equal_value_rtol * np.abs(t))
        same_inf = np.isinf(t) & (c == t)
    out: np.ndarray = (np.isnan(c) & np.isnan(t)) | close | same_inf
    return out


def _share(c: np.ndarray, t: np.ndarray, s: EvaluatorSettings, scale: float) -> float:
    """Share of rows where both are finite on which ``c`` equals ``t``."""
    both = np.isfinite(c) & np.isfinite(t)
    if not both.any():
        return 0.0
    return float(equal_mask(c[both], t[both], s, scale=scale).mean())


def _affine(c: np.ndarray, t: np.ndarray) -> tuple[float, float, float]:
    """(slope, intercept, R²) of the pooled least-squares fit ``c ≈ a * t + b``."""
    both = np.isfinite(c) & np.isfinite(t)
    x, y = t[both], c[both]
    if len(x) < 3 or float(np.std(x)) == 0.0:
        return math.nan, math.nan, 0.0
    a, b = np.polyfit(x, y, 1)
    resid = y - (a * x + b)
    total = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / total if total > 0 else 0.0
    return float(a), float(b), r2


def _window_explains(
    c: np.ndarray, t: np.ndarray, truth: pd.Series, s: EvaluatorSettings, scale: float
) -> bool:
    """Whether a window change explains the candidate: on some instrument its first finite
    value comes at another row than the truth's (another warm-up), or on every instrument
    both start at the same row with equal values (windows with ``min_periods=1`` agree until
    the history is longer than the shorter one; another input column differs at once).

    Example:
        >>> idx = pd.MultiIndex.from_product([pd.to_datetime(["2020-01-02", "2020-01-03"]),
        ...                                   ["A"]], names=["datetime", "instrument"])
        >>> t = pd.Series([np.nan, 1.0], idx)
        >>> _window_explains(np.array([0.5, 2.0]), t.to_numpy(), t, EvaluatorSettings(), 1.0)
        True
    """
    inst = truth.index.get_level_values("instrument")
    firsts_equal: list[bool] = []
    for name in pd.unique(inst):
        rows = np.flatnonzero(inst == name)
        fc, ft = np.isfinite(c[rows]), np.isfinite(t[rows])
        if not fc.any() or not ft.any():
            continue
        first_c, first_t = int(fc.argmax()), int(ft.argmax())
        if first_c != first_t:
            return True
        row = rows[first_t : first_t + 1]
        firsts_equal.append(bool(equal_mask(c[row], t[row], s, scale=scale)[0]))
    return bool(firsts_equal) and all(firsts_equal)


def _ic_words(ic: float, precise: bool) -> str:
    """The mean IC in an explanation: 3 decimals when precise, else a one-decimal band."""
    if precise:
        return f"{ic:.3f}"

    return f"in {band(ic)}" if math.isfinite(ic) and abs(ic) < 1 else band(ic)


def classify_mismatch(
    cand: pd.Series,
    truth: pd.Series,
    s: EvaluatorSettings,
    *,
    nan_ok: bool,
    ic: float,
    precise: bool = True,
) -> tuple[str, str]:
    """``(class, explanation)`` of a rejected candidate aligned on the truth's index.

    ``precise=False`` (feedback below ``full``): the explanation shows no count of the truth's
    rows and the mean IC only as a one-decimal band.

    Example:
        >>> idx = pd.MultiIndex.from_product([pd.to_datetime(["2020-01-02", "2020-01-03"]),
        ...                                   ["A", "B", "C"]], names=["datetime", "instrument"])
        >>> t = pd.Series([1.0, 2, 3, 4, 5, 7], idx)
        >>> classify_mismatch(-t, t, EvaluatorSettings(), nan_ok=True, ic=-1.0)[0]
        'sign'
    """
    c, t = cand.to_numpy(float), truth.to_numpy(float)
    thr = s.equal_value_threshold
    finite_t = np.isfinite(t)
    both = finite_t & np.isfinite(c)
    if finite_t.any() and both.sum() < 0.5 * finite_t.sum():
        if not precise:
            return "missing", "the candidate is missing on most rows where the truth has a value"
        return "missing", (
            f"the candidate is missing on {int(finite_t.sum() - both.sum())} of "
            f"{int(finite_t.sum())} rows where the truth has a value"
        )
    scale = truth_scale(t)
    equal = _share(c, t, s, scale)
    by_inst = truth.groupby(level="instrument")
    shifted = {k: _share(c, by_inst.shift(k).to_numpy(float), s, scale) for k in _SHIFTS}
    equal_where_both = equal > thr
    lost = int(finite_t.sum() - both.sum())
    # equal where both have a value: a coverage mistake, unless a shifted truth explains the
    # values better (a late factor is missing its first rows too)
    if equal_where_both and lost and max(shifted.values()) <= equal:
        counted = f"{lost} of {int(finite_t.sum())} rows" if precise else "some rows"
        return "missing", (
            f"the values equal the truth where both exist, but the candidate is missing on "
            f"{counted} where the truth has a value (rows dropped, or a step giving NaN?)"
        )
    if not nan_ok and equal_where_both:
        return "nan_pattern", (
            "the values agree where both exist, but the candidate has values where the truth "
            "is missing (were NaN filled, e.g. with 0, or rows kept that should be NaN?)"
        )
    for k in _SHIFTS:
        if shifted[k] > thr:
            days = f"{abs(k)} day{'s' if abs(k) > 1 else ''}"
            if k > 0:
                return "lag", f"the values equal the truth of {days} earlier (shifted too far)"
            return "lead", f"the values equal the truth of {days} later (look-ahead)"
    if _share(-c, t, s, scale) > thr:
        return "sign", "the values equal minus the truth (sign flipped)"
    a, b, r2 = _affine(c, t)
    if r2 > 1.0 - 1e-9:
        if abs(a - 1.0) <= 1e-6:
            return "offset", f"the values equal the truth plus {b:.6g}"
        return "scale", f"the values equal {a:.6g} * truth + {b:.6g} (a rescaled factor)"
    if math.isfinite(ic) and ic > 0.8:
        if _window_explains(c, t, truth, s, scale):
            return "window", (
                f"the values track the truth (mean IC {_ic_words(ic, precise)}) but differ: a "
                "different window, min_periods, ddof or smoothing?"
            )
        return "field", (
            f"the values track the truth (mean IC {_ic_words(ic, precise)}) with its warm-up, "
            "but differ from each instrument's first value on: the same window on another "
            "input column (e.g. $open for $close)?"
        )
    return "values", (
        f"the values differ from the truth (mean IC {_ic_words(ic, precise)}): another formula, "
        "data field or grouping (rolling across instruments?)"
    )


def mismatch_rows(
    cand: pd.Series, truth: pd.Series, s: EvaluatorSettings, detail: str
) -> list[str]:
    """Up to :data:`MAX_ROWS` lines naming rows where the candidate differs from the truth.

    ``detail`` is the ``feedback_detail`` setting: ``"full"`` shows how many rows differ, and
    the index, the candidate's value and the truth of a few; ``"diagnostics"`` the index and
    the candidate's value of a few (never an expected value, nor the count: it would be the
    equal-value ratio to the row); ``"verdict"`` nothing.
    """
    if detail == "verdict":
        return []
    c, t = cand.to_numpy(float), truth.to_numpy(float)
    bad = np.flatnonzero(~equal_mask(c, t, s, scale=truth_scale(t)))
    if not len(bad):
        return []
    picks = bad[np.linspace(0, len(bad) - 1, min(MAX_ROWS, len(bad))).round().astype(int)]
    if detail == "full":
        out = [f"rows that differ ({len(bad)} in all; datetime, instrument, candidate, truth):"]
    else:
        out = ["rows that differ (a sample; datetime, instrument, candidate):"]
    index = truth.index
    for i in dict.fromkeys(int(p) for p in picks):
        date, inst = index[i]
        stamp = pd.Timestamp(date).date().isoformat()
        row = f"  {stamp} {inst}: candidate {c[i]:.6g}"
        out.append(row + (f", truth {t[i]:.6g}" if detail == "full" else ""))
    return out
