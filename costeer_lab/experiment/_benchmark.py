"""RD-Agent's factor benchmark metrics, next to the project's own success and retrieval metrics.

Every results row also carries (as extra columns, after :data:`RESULT_COLUMNS`) what the coder
did and what the factor checks found — :data:`BENCHMARK_COLUMNS`:

- ``coder_strategy`` / ``coder_notes``: how the coder made the code and why (``adapted`` from
  which task with which mapping, ``known_fix``, ``generic``, ``llm``);
- ``category`` / ``difficulty``: the task's (RD-Agent's ``Category`` / ``Difficulty``);
- ``ran``: the code ran to completion; ``format_ok``: its output passed the format checks;
- ``equal_value_ratio``, ``ic`` (mean per-date correlation with the truth; NaN when not
  compared), ``accepted_by`` (``equal_values``, ``correlation`` or ``""``) and ``mismatch`` (the
  class of a rejected factor).

:func:`benchmark_metrics` aggregates them per arm and category / difficulty as RD-Agent reports
its factor benchmark: execution success rate, format success rate, mean and max correlation and
accuracy at equal-value thresholds, with the project's success rate beside them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from costeer_lab.errors import InvalidInputError
from costeer_lab.records import SingleFeedback, Task

__all__ = [
    "BENCHMARK_COLUMNS",
    "EQUAL_VALUE_THRESHOLDS",
    "add_task_columns",
    "benchmark_metrics",
    "coder_and_check_columns",
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
}
#: Equal-value ratios at which the accuracy columns are reported (``accuracy@0.99``, ...).
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
    }


def add_task_columns(rows: Iterable[dict[str, Any]], tasks: Sequence[Task]) -> None:
    """Fill ``category`` and ``difficulty`` of results rows from their tasks (in place)."""
    by_id = {t.id: t for t in tasks}
    for row in rows:
        task = by_id.get(str(row.get("task_id")))
        if task is not None:
            row["category"], row["difficulty"] = task.category, task.difficulty


def benchmark_metrics(results: pd.DataFrame, by: str = "category") -> pd.DataFrame:
    """RD-Agent's factor benchmark metrics per arm and ``by`` (``category`` or ``difficulty``).

    One row per (arm, group) plus an ``all`` group; over every attempt of every seed:
    ``attempts``, ``exec_success`` (share that ran), ``format_success`` (share whose output
    passed the format checks), ``corr_mean`` / ``corr_max`` (mean and max correlation with the
    truth over the compared attempts), ``accuracy@t`` (share of attempts whose equal-value ratio
    is at least ``t``), and the project's own ``task_success`` (share of (seed, task) pairs
    solved by the last attempt).

    Example:
        >>> df = pd.DataFrame({"arm": ["a", "a"], "seed": [0, 0], "task_id": ["t", "t"],
        ...     "attempt": [1, 2], "success": [False, True], "category": ["M", "M"],
        ...     "difficulty": ["Easy"] * 2, "ran": [True, True], "format_ok": [False, True],
        ...     "equal_value_ratio": [float("nan"), 1.0], "ic": [float("nan"), 1.0]})
        >>> m = benchmark_metrics(df).set_index("category")
        >>> float(m.loc["M", "format_success"]), float(m.loc["M", "accuracy@0.99"])
        (0.5, 0.5)
    """
    if by not in ("category", "difficulty"):
        raise InvalidInputError(
            f"benchmark metrics by {by!r}; expected 'category' or 'difficulty'"
        )
    needed = [
        "arm",
        "seed",
        "task_id",
        "success",
        by,
        "ran",
        "format_ok",
        "equal_value_ratio",
        "ic",
    ]
    missing = [c for c in needed if c not in results.columns]
    if missing:
        raise InvalidInputError(
            f"results lack the benchmark columns {missing} (written by run_experiment since "
            "factor benchmark support; rerun the experiment)"
        )
    frame = results.copy()
    frame[by] = frame[by].replace("", "(none)")
    parts = [frame, frame.assign(**{by: "all"})]
    rows = []
    for (arm, group), g in pd.concat(parts).groupby(["arm", by], sort=True):
        eq = g["equal_value_ratio"].to_numpy(float)
        ic = g["ic"].to_numpy(float)
        ic = ic[np.isfinite(ic)]
        solved = g.groupby(["seed", "task_id"])["success"].any()
        row = {
            "arm": arm,
            by: group,
            "attempts": len(g),
            "exec_success": float(g["ran"].mean()),
            "format_success": float(g["format_ok"].mean()),
            "corr_mean": float(ic.mean()) if len(ic) else math.nan,
            "corr_max": float(ic.max()) if len(ic) else math.nan,
        }
        for t in EQUAL_VALUE_THRESHOLDS:
            row[f"accuracy@{t:g}"] = float(np.nan_to_num(eq, nan=-1.0).__ge__(t).mean())
        row["task_success"] = float(solved.mean())
        rows.append(row)
    return pd.DataFrame(rows)
