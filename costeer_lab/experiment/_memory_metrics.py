"""Pattern-memory metrics of a results table: hit rate and success when used, per arm.

Over the attempts of an arm that queried the pattern memory (``memory_queried``):

- ``hit_rate`` = attempts whose memory search returned a pattern / attempts;
- ``success_when_hit`` / ``success_when_missed``: success rate of attempts with / without a hit;
- ``success_when_used`` / ``success_when_not_used``: success rate of attempts whose coder did /
  did not use a memory pattern or failure fix (NaN when there are none).

Example:
    >>> from costeer_lab.testing import example_results
    >>> memory_metrics(example_results()).empty  # no arm queried the memory
    True
"""

from __future__ import annotations

import json

import pandas as pd

from costeer_lab.experiment._results import validate_results

__all__ = ["MEMORY_METRIC_COLUMNS", "memory_metrics"]

MEMORY_METRIC_COLUMNS = [
    "arm", "attempts", "hits", "hit_rate", "used", "success_when_hit", "success_when_missed",
    "success_when_used", "success_when_not_used",
]  # fmt: skip


def _rate(success: pd.Series, mask: pd.Series) -> float:
    return float(success[mask].mean()) if bool(mask.any()) else float("nan")


def memory_metrics(results: pd.DataFrame) -> pd.DataFrame:
    """One row per arm that queried the pattern memory (columns :data:`MEMORY_METRIC_COLUMNS`)."""
    r = validate_results(results)
    r = r[r["memory_queried"]]
    rows = []
    for arm, g in r.groupby("arm", sort=True):
        hit = g["memory_patterns"].map(lambda t: len(json.loads(t)) > 0)
        used = g["memory_used"]
        rows.append(
            {
                "arm": arm,
                "attempts": len(g),
                "hits": int(hit.sum()),
                "hit_rate": float(hit.mean()),
                "used": int(used.sum()),
                "success_when_hit": _rate(g["success"], hit),
                "success_when_missed": _rate(g["success"], ~hit),
                "success_when_used": _rate(g["success"], used),
                "success_when_not_used": _rate(g["success"], ~used),
            }
        )
    return pd.DataFrame(rows, columns=MEMORY_METRIC_COLUMNS)
