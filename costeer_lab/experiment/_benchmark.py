"""Factor benchmark metrics: RD-Agent's, computed as its benchmark code does, and the project's.

Every results row also carries (as extra columns, after :data:`RESULT_COLUMNS`) what the coder
did and what the factor checks found — :data:`BENCHMARK_COLUMNS`:

- ``coder_strategy`` / ``coder_notes``: how the coder made the code and why (``adapted`` from
  which task with which mapping, ``known_fix``, ``generic``, ``llm``);
- ``category`` / ``difficulty``: the task's (RD-Agent's ``Category`` / ``Difficulty``);
- ``evaluated``: ``False`` when the attempt was not evaluated (the evaluation infrastructure
  failed, e.g. a reference that could not run: ``infra_error`` says why); such a row says
  nothing about the code and is excluded from every metric below, only counted
  (``not_evaluated``);
- ``ran``: the code ran to completion; ``format_ok``: its output passed the project's format
  checks; ``equal_value_ratio``, ``ic`` (the project's comparison: mean per-date correlation
  with the truth; NaN when not compared), ``accepted_by`` (``equal_values``, ``correlation`` or
  ``""``) and ``mismatch`` (the class of a rejected factor);
- ``rd_run_ok``, ``rd_row_ratio``, ``rd_index_jaccard``, ``rd_equal_value_ratio``, ``rd_corr``:
  RD-Agent's per-implementation measures (see
  :mod:`costeer_lab.evaluate._factor_rdagent`); ``rd_run_ok`` is the code ran and wrote an
  output that could be decoded, the four measures are NaN when it did not.

**RD-Agent's metrics** (:func:`rdagent_metrics`; the column labels are RD-Agent's). RD-Agent
scores the final implementation of each *round* (one independent run); here a round is one
(arm, seed), so each (arm, seed, task)'s last attempt is scored. Per round,
``format = mean(rd_row_ratio.fillna(0), rd_index_jaccard.fillna(0))`` (a number in [0, 1]).

==================  =====================================================================
``Avg Run SR``      per factor: mean over its rounds of ``rd_run_ok``
``Avg Format SR``   per factor: mean of ``format``
``Avg Correlation`` per factor: mean of ``rd_corr.fillna(0)`` (a failed round counts 0)
``Max Correlation`` per factor: max of ``rd_corr.fillna(0)``
``Max Accuracy``    per factor: max of ``rd_equal_value_ratio`` (NaN skipped)
``Avg Accuracy``    per factor: mean of ``rd_equal_value_ratio * format`` (NaN skipped)
==================  =====================================================================

A category or difficulty row is the pandas mean over the factors of the group (NaN skipped);
the ``Average`` row fills NaN with 0 and takes the mean over every factor (RD-Agent's last
row). RD-Agent's default ``only_correct_format=False`` is the one reproduced.

**The project's metrics** (:func:`benchmark_metrics`, over every evaluated attempt of every
seed, not only the final ones; its own names, not comparable with RD-Agent's figures):

==========================  ==============================================================
``attempts``                evaluated attempts
``attempt_run_rate``        share of them whose code ran to completion (``ran``)
``attempt_format_rate``     share whose output passed the project's format checks
``ic_mean_compared``        mean ``ic`` over the attempts compared with the truth
``ic_max_compared``         max ``ic`` over the attempts compared with the truth
``attempt_accuracy@t``      share of attempts whose ``equal_value_ratio`` is at least ``t``
``task_success``            share of (seed, task) pairs that some attempt solved
==========================  ==============================================================
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from costeer_lab.errors import InvalidInputError
from costeer_lab.evaluate import RD_MEASURES
from costeer_lab.records import SingleFeedback, Task

__all__ = [
    "BENCHMARK_COLUMNS",
    "EQUAL_VALUE_THRESHOLDS",
    "RDAGENT_METRICS",
    "add_task_columns",
    "benchmark_metrics",
    "coder_and_check_columns",
    "final_rounds",
    "rdagent_metrics",
]

BENCHMARK_COLUMNS: dict[str, str] = {
    "coder_strategy": "str",
    "coder_notes": "str",
    "category": "str",
    "difficulty": "str",
    "ran": "bool",
    "format_ok": "bool",
    "equal_value_ratio": "float64",
    "ic": "float64",
    "accepted_by": "str",
    "mismatch": "str",
    "evaluated": "bool",
    "rd_run_ok": "bool",
    "rd_row_ratio": "float64",
    "rd_index_jaccard": "float64",
    "rd_equal_value_ratio": "float64",
    "rd_corr": "float64",
}
#: RD-Agent's factor benchmark columns, in its order and with its labels.
RDAGENT_METRICS = (
    "Avg Run SR",
    "Avg Format SR",
    "Avg Correlation",
    "Max Correlation",
    "Max Accuracy",
    "Avg Accuracy",
)
#: Equal-value ratios of the ``attempt_accuracy@t`` columns (``attempt_accuracy@0.99``, ...).
EQUAL_VALUE_THRESHOLDS = (0.5, 0.9, 0.99)


def _number(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return math.nan


def coder_and_check_columns(outcome: Mapping[str, Any], fb: SingleFeedback) -> dict[str, Any]:
    """The :data:`BENCHMARK_COLUMNS` of one attempt (``category``/``difficulty`` empty: see
    :func:`add_task_columns`) from its step-record outcome and feedback.

    Example:
        >>> fb = SingleFeedback(execution="Executed successfully.", final_decision=True,
        ...                     details={"ran": True, "format_ok": True, "ic": 1.0})
        >>> coder_and_check_columns({"strategy": "adapted"}, fb)["ic"]
        1.0
    """
    d = fb.details
    return {
        "coder_strategy": str(outcome.get("strategy", "")),
        "coder_notes": str(outcome.get("notes", "")),
        "category": "",
        "difficulty": "",
        "ran": bool(d.get("ran", False)),
        "format_ok": bool(d.get("format_ok", False)),
        "equal_value_ratio": _number(d.get("equal_value_ratio")),
        "ic": _number(d.get("ic")),
        "accepted_by": str(d.get("accepted_by", "")),
        "mismatch": str(d.get("mismatch", "")),
        "evaluated": "infrastructure_error" not in d,
        "rd_run_ok": bool(d.get("rd_run_ok", False)),
        **{k: _number(d.get(k)) for k in RD_MEASURES},
    }


def add_task_columns(rows: Iterable[dict[str, Any]], tasks: Sequence[Task]) -> None:
    """Fill ``category`` and ``difficulty`` of results rows from their tasks (in place)."""
    by_id = {t.id: t for t in tasks}
    for row in rows:
        task = by_id.get(str(row.get("task_id")))
        if task is not None:
            row["category"], row["difficulty"] = task.category, task.difficulty


def _require(results: pd.DataFrame, needed: Sequence[str], what: str) -> None:
    missing = [c for c in needed if c not in results.columns]
    if "evaluated" not in results.columns and "infra_error" not in results.columns:
        missing.append("evaluated")
    if missing:
        raise InvalidInputError(
            f"results lack the {what} columns {missing} (written by run_experiment since "
            "that metric family exists; rerun the experiment)"
        )


def _evaluated(results: pd.DataFrame) -> pd.Series:
    """Whether each attempt was evaluated: the ``evaluated`` column, or for results written
    before it, an empty ``infra_error``."""
    if "evaluated" in results.columns:
        return results["evaluated"].astype(bool)
    return results["infra_error"].fillna("").astype(str).eq("")


def _floats(s: pd.Series) -> pd.Series:
    return pd.to_numeric(s, errors="coerce").astype("float64")


def _check_by(by: str, allowed: tuple[str, ...]) -> None:
    if by not in allowed:
        expected = " or ".join(repr(a) for a in allowed)
        raise InvalidInputError(f"benchmark metrics by {by!r}; expected {expected}")


def benchmark_metrics(results: pd.DataFrame, by: str = "category") -> pd.DataFrame:
    """The project's own factor metrics per arm and ``by`` (``category`` or ``difficulty``).

    One row per (arm, group) plus an ``all`` group, over every *evaluated* attempt of every
    seed (module docstring): ``attempts``, ``not_evaluated`` (attempts left out: the
    infrastructure failed), ``attempt_run_rate``, ``attempt_format_rate``,
    ``ic_mean_compared``, ``ic_max_compared``, ``attempt_accuracy@t`` and ``task_success``.
    These are not RD-Agent's metrics (see :func:`rdagent_metrics`).

    Example:
        >>> df = pd.DataFrame({"arm": ["a", "a"], "seed": [0, 0], "task_id": ["t", "t"],
        ...     "attempt": [1, 2], "success": [False, True], "category": ["M", "M"],
        ...     "difficulty": ["Easy"] * 2, "ran": [True, True], "format_ok": [False, True],
        ...     "equal_value_ratio": [float("nan"), 1.0], "ic": [float("nan"), 1.0],
        ...     "evaluated": [True, True]})
        >>> m = benchmark_metrics(df).set_index("category")
        >>> float(m.loc["M", "attempt_format_rate"]), float(m.loc["M", "attempt_accuracy@0.99"])
        (0.5, 0.5)
    """
    _check_by(by, ("category", "difficulty"))
    needed = ["arm", "seed", "task_id", "success", by, "ran", "format_ok"]
    _require(results, [*needed, "equal_value_ratio", "ic"], "benchmark")
    frame = results.assign(_evaluated=_evaluated(results))
    frame[by] = frame[by].replace("", "(none)")
    parts = [frame, frame.assign(**{by: "all"})]
    rows = []
    for (arm, group), every in pd.concat(parts).groupby(["arm", by], sort=True):
        g = every[every["_evaluated"]]
        eq = _floats(g["equal_value_ratio"]).to_numpy()
        ic = _floats(g["ic"]).to_numpy()
        ic = ic[np.isfinite(ic)]
        solved = g.groupby(["seed", "task_id"])["success"].any()
        row: dict[str, Any] = {
            "arm": arm,
            by: group,
            "attempts": len(g),
            "not_evaluated": int(len(every) - len(g)),
            "attempt_run_rate": float(g["ran"].astype(bool).mean()) if len(g) else math.nan,
            "attempt_format_rate": (
                float(g["format_ok"].astype(bool).mean()) if len(g) else math.nan
            ),
            "ic_mean_compared": float(ic.mean()) if len(ic) else math.nan,
            "ic_max_compared": float(ic.max()) if len(ic) else math.nan,
        }
        for t in EQUAL_VALUE_THRESHOLDS:
            share = np.nan_to_num(eq, nan=-1.0).__ge__(t).mean() if len(eq) else math.nan
            row[f"attempt_accuracy@{t:g}"] = float(share)
        row["task_success"] = float(solved.mean()) if len(solved) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def final_rounds(results: pd.DataFrame) -> pd.DataFrame:
    """The last attempt of each (arm, seed, task): RD-Agent's final implementation of a round
    (a round being one (arm, seed) here), with an ``evaluated`` column.

    Example:
        >>> df = pd.DataFrame({"arm": ["a"] * 3, "seed": [0, 0, 1], "task_id": ["t"] * 3,
        ...                    "attempt": [1, 2, 1], "evaluated": [True, False, True]})
        >>> final_rounds(df)[["seed", "attempt", "evaluated"]].values.tolist()
        [[0, 2, False], [1, 1, True]]
    """
    frame = results.assign(evaluated=_evaluated(results))
    frame = frame.sort_values(["arm", "seed", "task_id", "attempt"], kind="stable")
    return frame.groupby(["arm", "seed", "task_id"], sort=False).tail(1).reset_index(drop=True)


def _factor_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """RD-Agent's six metrics per factor (``task_id``) over its evaluated rounds."""
    ok = rounds[rounds["evaluated"]]
    rr, ij = _floats(ok["rd_row_ratio"]), _floats(ok["rd_index_jaccard"])
    fmt = pd.concat([rr, ij], axis=1).fillna(0.0).mean(axis=1)
    corr = _floats(ok["rd_corr"]).fillna(0.0)
    evr = _floats(ok["rd_equal_value_ratio"])
    key = ok["task_id"]
    table = pd.DataFrame(
        {
            "Avg Run SR": ok["rd_run_ok"].astype(bool).groupby(key).mean(),
            "Avg Format SR": fmt.groupby(key).mean(),
            "Avg Correlation": corr.groupby(key).mean(),
            "Max Correlation": corr.groupby(key).max(),
            "Max Accuracy": evr.groupby(key).max(),
            "Avg Accuracy": (evr * fmt).groupby(key).mean(),
        }
    )
    info = rounds.groupby("task_id", sort=True).agg(
        category=("category", "first"),
        difficulty=("difficulty", "first"),
        rounds=("evaluated", "sum"),
        not_evaluated=("evaluated", lambda e: int((~e.astype(bool)).sum())),
    )
    table = info.join(table).astype({"rounds": int, "not_evaluated": int})
    return table.rename_axis("factor").reset_index()


def _group_rows(factors: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per-group means over the factors that have an evaluated round (NaN skipped)."""
    scored = factors[factors["rounds"] > 0]
    means = scored.groupby(by, sort=True)[list(RDAGENT_METRICS)].mean()
    counts = factors.groupby(by, sort=True).agg(
        factors=("rounds", lambda r: int((r > 0).sum())),
        rounds=("rounds", "sum"),
        not_evaluated=("not_evaluated", "sum"),
    )
    return counts.join(means).reset_index()


def _average_row(factors: pd.DataFrame, by: str) -> dict[str, Any]:
    """RD-Agent's ``Average`` row: NaN filled with 0, mean over the scored factors."""
    scored = factors[factors["rounds"] > 0]
    means = scored[list(RDAGENT_METRICS)].fillna(0.0).mean()
    row: dict[str, Any] = {by: "Average"}
    if by == "factor":
        row.update(category="-", difficulty="-")
    else:
        row["factors"] = len(scored)
    row.update(
        rounds=int(factors["rounds"].sum()), not_evaluated=int(factors["not_evaluated"].sum())
    )
    row.update({k: float(means[k]) for k in RDAGENT_METRICS})
    return row


def rdagent_metrics(results: pd.DataFrame, by: str = "category") -> pd.DataFrame:
    """RD-Agent's factor benchmark metrics per arm, as its benchmark code computes them.

    Each (arm, seed, task)'s last attempt is the round's final implementation (module
    docstring for the definitions). ``by="factor"``: one row per (arm, factor) with its
    ``category``, ``difficulty``, ``rounds`` (evaluated final attempts) and ``not_evaluated``
    (final attempts left out: the infrastructure failed; a factor with no evaluated round has
    NaN metrics), then the ``Average`` row; ``by="category"`` / ``"difficulty"``: one row per
    (arm, group) with ``factors`` (with an evaluated round), ``rounds``, ``not_evaluated`` and
    the pandas mean over its factors, then the ``Average`` row (NaN as 0, over every scored
    factor of the arm).

    Raises:
        InvalidInputError: ``by`` is not one of the three, or the results lack a column
            (older results have no ``rd_*`` columns: rerun the experiment).

    Example:
        >>> df = pd.DataFrame({"arm": ["a"] * 2, "seed": [0, 1], "task_id": ["t"] * 2,
        ...     "attempt": [1, 1], "category": ["M"] * 2, "difficulty": ["Easy"] * 2,
        ...     "evaluated": [True, True], "rd_run_ok": [True, False],
        ...     "rd_row_ratio": [1.0, float("nan")], "rd_index_jaccard": [0.5, float("nan")],
        ...     "rd_equal_value_ratio": [0.5, float("nan")], "rd_corr": [0.8, float("nan")]})
        >>> average = rdagent_metrics(df).iloc[-1]
        >>> [float(average[k]) for k in ("Avg Run SR", "Avg Format SR", "Avg Correlation",
        ...                                  "Avg Accuracy")]
        [0.5, 0.375, 0.4, 0.375]
    """
    _check_by(by, ("category", "difficulty", "factor"))
    needed = ["arm", "seed", "task_id", "attempt", "category", "difficulty", "rd_run_ok"]
    _require(results, [*needed, *RD_MEASURES], "RD-Agent metric")
    rounds = final_rounds(results)
    for col in ("category", "difficulty"):
        rounds[col] = rounds[col].replace("", "(none)")
    parts = []
    for arm, arm_rounds in rounds.groupby("arm", sort=True):
        factors = _factor_table(arm_rounds)
        body = factors if by == "factor" else _group_rows(factors, by)
        table = pd.concat([body, pd.DataFrame([_average_row(factors, by)])], ignore_index=True)
        parts.append(table.assign(arm=arm))
    if by == "factor":
        columns = ["arm", "factor", "category", "difficulty", "rounds", "not_evaluated"]
    else:
        columns = ["arm", by, "factors", "rounds", "not_evaluated"]
    if not parts:
        return pd.DataFrame(columns=[*columns, *RDAGENT_METRICS])
    return pd.concat(parts, ignore_index=True)[[*columns, *RDAGENT_METRICS]]
