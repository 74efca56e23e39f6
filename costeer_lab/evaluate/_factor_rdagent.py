"""RD-Agent's per-implementation factor measures, computed as its benchmark evaluators do.

RD-Agent's factor benchmark scores each implementation by comparing the generated frame
(``gen``) with the ground truth's (``gt``), both sorted by index:

==========================  ===================================================================
``rd_row_ratio``            ``min(len(gen), len(gt)) / max(len(gen), len(gt))``
``rd_index_jaccard``        ``|set(gen.index) & set(gt.index)| / |set(gen.index) | set(gt.index)|``
``rd_equal_value_ratio``    ``gen - gt`` aligned on the union of the indexes (pandas
                            subtraction), cells with ``|gen - gt| < 1e-6`` (NaN, and so a row
                            missing on one side or ``inf - inf``, is never equal) over the
                            aligned size
``rd_corr``                 ``gen`` and ``gt`` concatenated side by side (outer join on the
                            index), ``Series.corr`` per ``datetime`` (pandas' Pearson on the
                            pairwise-complete values; a date with an ``inf`` gives NaN), dates
                            with a NaN correlation dropped, mean over the rest (NaN if none)
==========================  ===================================================================

A measure RD-Agent's own code would raise on (an empty pair of frames, an index the
concatenation refuses, no ``datetime`` level) is NaN, as RD-Agent records an evaluator's
exception. The candidate's frame is the one it *wrote* (the decoded file before the project's
format checks and fixes: no level reordering, infinities kept); the truth is the reference's
output as the project parses it, infinities kept (a float series on (datetime, instrument)).

Two deliberate differences, both where RD-Agent's numbers depend on labels rather than values:
the comparison is of the single value column whatever its name (RD-Agent subtracts frames, so
differently named columns compare as all-NaN), and an output with several columns gets NaN for
the two value measures (RD-Agent subtracts or concatenates all of them).

These numbers are computed against the hidden truth: they live in ``SingleFeedback.details``
(the trusted results), never in a feedback text a coder reads.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

__all__ = ["RD_MEASURES", "rdagent_measures"]

#: The keys :func:`rdagent_measures` returns (and the results columns of the same names).
RD_MEASURES = ("rd_row_ratio", "rd_index_jaccard", "rd_equal_value_ratio", "rd_corr")
#: RD-Agent's equal-value tolerance (absolute).
_TOLERANCE = 1e-6


def _sorted(x: pd.Series | pd.DataFrame, name: str) -> pd.DataFrame:
    frame = x.to_frame(name) if isinstance(x, pd.Series) else x
    return frame.sort_index()


def _row_ratio(gen: pd.DataFrame, gt: pd.DataFrame) -> float:
    longest = max(len(gen), len(gt))
    return min(len(gen), len(gt)) / longest if longest else math.nan


def _jaccard(gen: pd.DataFrame, gt: pd.DataFrame) -> float:
    """Set arithmetic on the index labels (pandas' set operations: the same sets as Python's
    ``set(index)``, without building a tuple per row)."""
    try:
        a, b = gen.index.unique(), gt.index.unique()
        union = len(a.union(b))
        inter = len(a.intersection(b))
    except Exception:  # labels pandas cannot combine: Python's sets
        sa, sb = set(gen.index), set(gt.index)
        union, inter = len(sa | sb), len(sa & sb)
    return inter / union if union else math.nan


def _equal_ratio(g: pd.Series, t: pd.Series) -> float:
    close = g.sub(t).abs().lt(_TOLERANCE)
    return float(close.astype(int).sum() / close.size) if close.size else math.nan


def _corr(g: pd.Series, t: pd.Series) -> float:
    both = pd.concat([g, t], axis=1)
    both.columns = ["source", "gt"]
    per_date = both.groupby(level="datetime").apply(lambda d: d["source"].corr(d["gt"]))
    return float(per_date.dropna().mean())


def _safe(f: Callable[..., float], *args: pd.Series | pd.DataFrame) -> float:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = f(*args)
    except Exception:  # RD-Agent records the evaluator's exception: NaN
        return math.nan
    return float(value)


def rdagent_measures(
    gen: pd.Series | pd.DataFrame, gt: pd.Series | pd.DataFrame
) -> dict[str, float]:
    """RD-Agent's four measures of a generated factor against the truth (module docstring).

    Args:
        gen: the candidate's output as it wrote it (a frame or a series).
        gt: the ground truth's output.

    Returns:
        ``{"rd_row_ratio", "rd_index_jaccard", "rd_equal_value_ratio", "rd_corr"}`` (NaN where
        RD-Agent's evaluator would raise).

    Example:
        >>> idx = pd.MultiIndex.from_product([pd.to_datetime(["2020-01-02", "2020-01-03"]),
        ...                                   ["A", "B", "C"]], names=["datetime", "instrument"])
        >>> gt = pd.Series([1.0, 2, 3, 4, 5, 7], idx)
        >>> m = rdagent_measures(gt.iloc[:5] * 2, gt)  # a row missing, values doubled
        >>> m["rd_row_ratio"], m["rd_index_jaccard"], m["rd_equal_value_ratio"], m["rd_corr"]
        (0.8333333333333334, 0.8333333333333334, 0.0, 1.0)
    """
    out = dict.fromkeys(RD_MEASURES, math.nan)
    try:
        g, t = _sorted(gen, "source_factor"), _sorted(gt, "gt_factor")
    except Exception:  # an index pandas cannot sort: every RD-Agent evaluator raises
        return out
    out["rd_row_ratio"] = _row_ratio(g, t)
    out["rd_index_jaccard"] = _safe(_jaccard, g, t)
    if g.shape[1] == 1 and t.shape[1] == 1:
        gs, ts = g.iloc[:, 0], t.iloc[:, 0]
        out["rd_equal_value_ratio"] = _safe(_equal_ratio, gs, ts)
        out["rd_corr"] = _safe(_corr, gs, ts)
    return out
