"""Learning metrics of a memory: hit rate over time, success rates, most used patterns, most
common failures and their fixes — as a dict (:func:`memory_stats`) and as DataFrames.

Definitions:

* a *search* is one recorded call of ``search_patterns`` / ``search_similar_failures``; it *hits*
  when it returned at least one item (at its threshold);
* pattern hit rate over a window = hits / searches among pattern searches whose time lies in the
  window (``window_s`` seconds up to ``now``; all time when ``None``); ``None`` without searches;
* per-pattern success rate = successes / recorded outcomes (``None`` before the first);
* overall success-when-used = all successes / all recorded outcomes.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from costeer_lab.memory._base import SEARCH_KIND
from costeer_lab.memory._failure import FAILURE_KIND
from costeer_lab.memory._pattern import PATTERN_KIND
from costeer_lab.store import BaseStore

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "failure_frame",
    "hit_rate",
    "hit_rate_frame",
    "memory_stats",
    "pattern_frame",
    "search_frame",
]

_PATTERN_COLS = [
    "pattern_id", "problem_type", "description", "usage_count", "successes", "failures",
    "success_rate", "created_at",
]  # fmt: skip
_FAILURE_COLS = [
    "failure_id", "error_type", "fingerprint", "task_id", "iteration", "solved", "solution",
    "t", "solved_at",
]  # fmt: skip
_SEARCH_COLS = ["search_id", "memory", "t", "hits", "hit", "best", "threshold"]


def _pattern_rows(store: BaseStore) -> list[dict[str, Any]]:
    rows = []
    for pid, rec in store.iter_records(PATTERN_KIND):
        wins, losses = int(rec.get("successes", 0)), int(rec.get("failures", 0))
        rows.append(
            {
                "pattern_id": pid,
                "problem_type": rec["problem_type"],
                "description": rec.get("description", ""),
                "usage_count": int(rec.get("usage_count", 0)),
                "successes": wins,
                "failures": losses,
                "success_rate": wins / (wins + losses) if wins + losses else None,
                "created_at": float(rec.get("created_at", 0.0)),
            }
        )
    return rows


def _search_rows(store: BaseStore, memory: str | None = None) -> list[dict[str, Any]]:
    where = None if memory is None else {"memory": memory}
    return [
        {
            "search_id": key,
            "memory": r["memory"],
            "t": float(r["t"]),
            "hits": int(r["hits"]),
            "hit": int(r["hits"]) > 0,
            "best": r.get("best"),
            "threshold": r.get("threshold"),
        }
        for key, r in store.iter_records(SEARCH_KIND, where)
    ]


def hit_rate(
    store: BaseStore, *, window_s: float | None = None, memory: str = "pattern",
    now: float | None = None,
) -> float | None:  # fmt: skip
    """Share of recorded ``memory`` searches in the last ``window_s`` seconds that hit.

    Example:
        >>> from costeer_lab.memory import PatternMemory
        >>> mem = PatternMemory(":memory:", embedder="hashing")
        >>> _ = mem.search_patterns("anything")
        >>> hit_rate(mem.store)
        0.0
    """
    end = time.time() if now is None else now
    rows = [
        r for r in _search_rows(store, memory)
        if window_s is None or end - window_s <= r["t"] <= end
    ]  # fmt: skip
    return sum(r["hit"] for r in rows) / len(rows) if rows else None


def pattern_frame(store: BaseStore) -> pd.DataFrame:
    """One row per pattern: usage, outcomes, success rate; most used first."""
    import pandas as pd

    df = pd.DataFrame(_pattern_rows(store), columns=_PATTERN_COLS)
    return df.sort_values(["usage_count", "pattern_id"], ascending=[False, True]).reset_index(
        drop=True
    )


def failure_frame(store: BaseStore) -> pd.DataFrame:
    """One row per stored failure, oldest first (``solution`` is ``None`` while unsolved)."""
    import pandas as pd

    rows = [
        {"failure_id": key, **{c: r.get(c) for c in _FAILURE_COLS[1:]}}
        for key, r in store.iter_records(FAILURE_KIND)
    ]
    return pd.DataFrame(rows, columns=_FAILURE_COLS)


def search_frame(store: BaseStore) -> pd.DataFrame:
    """One row per recorded search (both memories), in time order."""
    import pandas as pd

    df = pd.DataFrame(_search_rows(store), columns=_SEARCH_COLS)
    return df.sort_values("t", kind="stable").reset_index(drop=True)


def hit_rate_frame(store: BaseStore, *, every: int = 10, memory: str = "pattern") -> pd.DataFrame:
    """Hit rate over time: consecutive blocks of ``every`` searches (the last may be shorter).

    Columns ``block``, ``first_t``, ``searches``, ``hits``, ``hit_rate``, ``cumulative_hit_rate``.
    """
    import pandas as pd

    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        from costeer_lab.errors import InvalidInputError

        raise InvalidInputError(f"every must be an int >= 1, got {every!r}")
    s = search_frame(store)
    s = s[s["memory"] == memory].reset_index(drop=True)
    cols = ["block", "first_t", "searches", "hits", "hit_rate", "cumulative_hit_rate"]
    if s.empty:
        return pd.DataFrame(columns=cols)
    s["block"] = s.index // every
    g = s.groupby("block").agg(first_t=("t", "min"), searches=("hit", "size"), hits=("hit", "sum"))
    g["hit_rate"] = g["hits"] / g["searches"]
    g["cumulative_hit_rate"] = g["hits"].cumsum() / g["searches"].cumsum()
    return g.reset_index()[cols]


def memory_stats(
    store: BaseStore, *, window_s: float | None = None, top: int = 5, now: float | None = None
) -> dict[str, Any]:
    """Learning metrics of the memory in ``store`` as a plain dict (JSON-ready).

    Keys: ``patterns``, ``failures``, ``solved_failures``, ``pattern_searches``,
    ``pattern_hit_rate`` (in the window), ``failure_hit_rate``, ``pattern_uses``, ``outcomes``,
    ``success_when_used``, ``most_used_patterns`` (id, problem type, uses, success rate),
    ``most_common_failures`` (fingerprint, count, solved), ``failures_with_solutions``.

    Example:
        >>> from costeer_lab.memory import PatternMemory
        >>> memory_stats(PatternMemory(":memory:", embedder="hashing").store)["patterns"]
        0
    """
    patterns = _pattern_rows(store)
    failures = [r for _, r in store.iter_records(FAILURE_KIND)]
    wins = sum(p["successes"] for p in patterns)
    done = wins + sum(p["failures"] for p in patterns)
    by_use = sorted(patterns, key=lambda p: (-p["usage_count"], p["pattern_id"]))[:top]
    counts = Counter(str(f["fingerprint"]) for f in failures)
    solved = Counter(str(f["fingerprint"]) for f in failures if f.get("solved"))
    return {
        "patterns": len(patterns),
        "failures": len(failures),
        "solved_failures": sum(1 for f in failures if f.get("solved")),
        "pattern_searches": len(_search_rows(store, "pattern")),
        "pattern_hit_rate": hit_rate(store, window_s=window_s, now=now),
        "failure_hit_rate": hit_rate(store, window_s=window_s, memory="failure", now=now),
        "pattern_uses": sum(p["usage_count"] for p in patterns),
        "outcomes": done,
        "success_when_used": wins / done if done else None,
        "most_used_patterns": [
            {
                "pattern_id": p["pattern_id"],
                "problem_type": p["problem_type"],
                "usage_count": p["usage_count"],
                "success_rate": p["success_rate"],
            }
            for p in by_use
        ],
        "most_common_failures": [
            {"fingerprint": fp, "count": n, "solved": solved[fp]}
            for fp, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        ],
        "failures_with_solutions": [
            {"fingerprint": f["fingerprint"], "task_id": f["task_id"], "solution": f["solution"]}
            for f in failures
            if f.get("solved")
        ][:top],
    }
