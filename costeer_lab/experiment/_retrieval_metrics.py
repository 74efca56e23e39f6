"""Retrieval and knowledge-use metrics over a results table (see :mod:`._results`).

Definitions (``θ`` is the score ``threshold``):

- a *query* of kind ``q`` is a row whose ``retrieved`` object has the key ``q`` (the query ran);
  it *hits* when it returned at least one item with ``score >= θ``;
- hit rate of (arm, q) ``= hits / queries``;
- an *attempt* (row) hits when any of its queries hit; attempts with no query are left out of
  the hit-vs-miss comparison; ``difference = success_rate_hit - success_rate_miss``;
- usage of a knowledge item = number of rows that retrieved and/or used it (counted once per row);
  success-when-used = share of those rows that succeeded.

Example:
    >>> from costeer_lab.experiment import hit_rate
    >>> from costeer_lab.testing import example_results
    >>> hit_rate(example_results(), threshold=0.5)[["query_kind", "hit_rate"]].values.tolist()
    [['similar', 0.5], ['error', 0.0]]
"""

from __future__ import annotations

import json
from typing import Literal

import pandas as pd

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment._results import QUERY_KINDS, validate_results

__all__ = ["hit_rate", "knowledge_usage", "query_table", "retrieval_success"]

_QUERY_COLS = ["row", "arm", "seed", "task_id", "attempt", "success", "query_kind"]


def query_table(results: pd.DataFrame) -> pd.DataFrame:
    """One row per query that ran: the result row it served and what it returned.

    Returns:
        Columns ``row`` (index in the validated results), ``arm``, ``seed``, ``task_id``,
        ``attempt``, ``success``, ``query_kind``, ``n_items``, ``max_score`` (NaN when empty),
        ``ids`` (tuple of returned ids, best first).

    Example:
        >>> from costeer_lab.testing import example_results
        >>> query_table(example_results())["n_items"].tolist()
        [1, 1, 0]
    """
    return _query_table(validate_results(results))


def _query_table(r: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for i, rec in enumerate(
        r[["arm", "seed", "task_id", "attempt", "success", "retrieved"]].itertuples(index=False)
    ):
        for kind, items in json.loads(str(rec.retrieved)).items():
            scores = [float(item["score"]) for item in items]
            rows.append(
                (
                    i,
                    rec.arm,
                    rec.seed,
                    rec.task_id,
                    rec.attempt,
                    rec.success,
                    kind,
                    len(items),
                    max(scores) if scores else float("nan"),
                    tuple(str(it["id"]) for it in items),
                )
            )
    out = pd.DataFrame(rows, columns=[*_QUERY_COLS, "n_items", "max_score", "ids"])
    return out.astype(
        {
            "row": "int64",
            "seed": "int64",
            "attempt": "int64",
            "success": "bool",
            "n_items": "int64",
            "max_score": "float64",
        }
    )


def _check_threshold(threshold: float) -> float:
    if not isinstance(threshold, int | float) or threshold != threshold:
        raise InvalidInputError(f"threshold must be a number, got {threshold!r}")
    return float(threshold)


def hit_rate(results: pd.DataFrame, *, threshold: float = 0.5) -> pd.DataFrame:
    """Share of queries, per arm and query kind, that returned an item scoring ``>= threshold``.

    Returns:
        Columns ``arm``, ``query_kind``, ``n_queries``, ``n_hits``, ``hit_rate``; kinds in the
        order of :data:`QUERY_KINDS`; arms that never queried have no row.
    """
    return _hit_rate(_query_table(validate_results(results)), _check_threshold(threshold))


def _hit_rate(q: pd.DataFrame, threshold: float) -> pd.DataFrame:
    hit = q["max_score"] >= threshold
    g = hit.groupby([q["arm"], q["query_kind"]])
    out = pd.DataFrame({"n_queries": g.size(), "n_hits": g.sum().astype("int64")}).reset_index()
    out["hit_rate"] = out["n_hits"] / out["n_queries"]
    out["_order"] = out["query_kind"].map({k: i for i, k in enumerate(QUERY_KINDS)})
    out = out.sort_values(["arm", "_order"]).drop(columns="_order").reset_index(drop=True)
    return out[["arm", "query_kind", "n_queries", "n_hits", "hit_rate"]]


def retrieval_success(results: pd.DataFrame, *, threshold: float = 0.5) -> pd.DataFrame:
    """Within each arm: success rate of attempts whose queries hit vs those whose queries missed.

    Returns:
        Columns ``arm``, ``n_hit``, ``success_rate_hit``, ``n_miss``, ``success_rate_miss``,
        ``difference`` (hit − miss; NaN when a side is empty). Arms that never queried have no row.
    """
    r = validate_results(results)
    return _retrieval_success(_query_table(r), _check_threshold(threshold))


def _retrieval_success(q: pd.DataFrame, threshold: float) -> pd.DataFrame:
    q = q.assign(hit=q["max_score"] >= threshold)
    per_row = q.groupby("row").agg(
        arm=("arm", "first"), success=("success", "first"), hit=("hit", "any")
    )
    rows = []
    for arm, g in per_row.groupby("arm", sort=True):
        h, m = g.loc[g["hit"], "success"], g.loc[~g["hit"], "success"]
        rate_h = float(h.mean()) if len(h) else float("nan")
        rate_m = float(m.mean()) if len(m) else float("nan")
        rows.append((str(arm), len(h), rate_h, len(m), rate_m, rate_h - rate_m))
    cols = ["arm", "n_hit", "success_rate_hit", "n_miss", "success_rate_miss", "difference"]
    return pd.DataFrame(rows, columns=cols)


def knowledge_usage(
    results: pd.DataFrame,
    *,
    source: Literal["both", "retrieved", "used"] = "both",
    by_arm: bool = True,
) -> pd.DataFrame:
    """Usage count and success-when-used of every knowledge item.

    Args:
        results: a results table.
        source: ``"retrieved"`` counts ids in ``retrieved`` (any score), ``"used"`` counts
            ``used_knowledge_ids``, ``"both"`` their union (a row counts once per item).
        by_arm: group by (arm, item) instead of item alone.

    Returns:
        Columns (``arm``,) ``item_id``, ``n_uses``, ``n_success``, ``success_when_used``; most
        used first, ties by ``item_id``.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> knowledge_usage(example_results(), source="used")["item_id"].tolist()
        ['k1']
    """
    if source not in ("both", "retrieved", "used"):
        raise InvalidInputError(f"source must be 'both', 'retrieved' or 'used', got {source!r}")
    return _knowledge_usage(validate_results(results), source, by_arm)


def _knowledge_usage(r: pd.DataFrame, source: str, by_arm: bool) -> pd.DataFrame:
    pairs: list[tuple[str, str, bool]] = []
    for rec in r[["arm", "success", "retrieved", "used_knowledge_ids"]].itertuples(index=False):
        ids: set[str] = set()
        if source in ("both", "retrieved"):
            for items in json.loads(str(rec.retrieved)).values():
                ids.update(str(item["id"]) for item in items)
        if source in ("both", "used"):
            ids.update(json.loads(str(rec.used_knowledge_ids)))
        pairs.extend((str(rec.arm), item, bool(rec.success)) for item in sorted(ids))
    keys = ["arm", "item_id"] if by_arm else ["item_id"]
    cols = [*keys, "n_uses", "n_success", "success_when_used"]
    if not pairs:
        return pd.DataFrame({c: [] for c in cols})
    df = pd.DataFrame(pairs, columns=["arm", "item_id", "success"])
    g = df.groupby(keys)["success"]
    out = pd.DataFrame({"n_uses": g.size(), "n_success": g.sum().astype("int64")}).reset_index()
    out["success_when_used"] = out["n_success"] / out["n_uses"]
    order = ["n_uses", *keys]
    asc = [False, *([True] * len(keys))]
    return out.sort_values(order, ascending=asc).reset_index(drop=True)[cols]
