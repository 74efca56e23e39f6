"""Retrieval and knowledge-use metrics over a results table (see :mod:`._results`).

Definitions (``θ`` is the score ``threshold``):

- a *query* of kind ``q`` is a row whose ``retrieved`` object has the key ``q`` (the query ran);
  it *returned* something when it returned at least one item with ``score >= θ`` (returned rate
  ``= returned / queries``: says nothing about whether the items were any good);
- it *hits* when it returned at least one item marked ``"relevant": true`` — relevant to the
  target task by ground truth, judged when the query ran (see
  :mod:`costeer_lab.knowledge._relevance`: a shared operator for similar/component items, the
  same error cause for error fixes, a same-cause earlier trace for former traces). A query is
  *judged* when it returned nothing (a miss under any definition) or every item it returned
  carries ``relevant``; hit rate of (arm, q) ``= hits / judged queries`` (NaN when none was
  judged, e.g. a table written before relevance was recorded);
- an *attempt* (row) hits when any of its queries hit; it misses when it queried and every
  query was judged without a hit; other attempts are left out of the hit-vs-miss comparison;
  ``difference = success_rate_hit - success_rate_miss``;
- usage of a knowledge item = number of rows that retrieved and/or used it (counted once per row);
  success-when-used = share of those rows that succeeded.

Example:
    >>> from costeer_lab.experiment import hit_rate
    >>> from costeer_lab.testing import example_results
    >>> out = hit_rate(example_results(), threshold=0.5)
    >>> out[["query_kind", "returned_rate", "hit_rate"]].values.tolist()
    [['similar', 0.5, 0.5], ['error', 0.0, 0.0]]
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
        ``ids`` (tuple of returned ids, best first), ``n_relevant`` (items marked relevant) and
        ``judged`` (nothing returned, or every item carries ``relevant``).

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
            flags = [item.get("relevant") for item in items]
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
                    sum(f is True for f in flags),
                    all(isinstance(f, bool) for f in flags),
                )
            )
    cols = [*_QUERY_COLS, "n_items", "max_score", "ids", "n_relevant", "judged"]
    out = pd.DataFrame(rows, columns=cols)
    return out.astype(
        {
            "row": "int64",
            "seed": "int64",
            "attempt": "int64",
            "success": "bool",
            "n_items": "int64",
            "max_score": "float64",
            "n_relevant": "int64",
            "judged": "bool",
        }
    )


def _check_threshold(threshold: float) -> float:
    if not isinstance(threshold, int | float) or threshold != threshold:
        raise InvalidInputError(f"threshold must be a number, got {threshold!r}")
    return float(threshold)


def hit_rate(results: pd.DataFrame, *, threshold: float = 0.5) -> pd.DataFrame:
    """Per arm and query kind: the share of queries that returned something, and of those
    judged, the share that returned a relevant item (a hit).

    Returns:
        Columns ``arm``, ``query_kind``, ``n_queries``, ``n_returned`` (an item scoring
        ``>= threshold``), ``returned_rate``, ``n_judged``, ``n_hits`` (a relevant item),
        ``hit_rate`` (``n_hits / n_judged``, NaN when none was judged); kinds in the order of
        :data:`QUERY_KINDS`; arms that never queried have no row.
    """
    return _hit_rate(_query_table(validate_results(results)), _check_threshold(threshold))


_HIT_COLS = ["arm", "query_kind", "n_queries", "n_returned", "returned_rate"]
_HIT_COLS += ["n_judged", "n_hits", "hit_rate"]


def _hit_rate(q: pd.DataFrame, threshold: float) -> pd.DataFrame:
    q = q.assign(returned=q["max_score"] >= threshold, hit=q["n_relevant"] > 0)
    g = q.groupby(["arm", "query_kind"])
    out = pd.DataFrame(
        {
            "n_queries": g.size(),
            "n_returned": g["returned"].sum(),
            "n_judged": g["judged"].sum(),
            "n_hits": g["hit"].sum(),
        }
    ).reset_index()
    out = out.astype({c: "int64" for c in ("n_queries", "n_returned", "n_judged", "n_hits")})
    out["returned_rate"] = out["n_returned"] / out["n_queries"]
    out["hit_rate"] = out["n_hits"] / out["n_judged"].where(out["n_judged"] > 0)
    out["_order"] = out["query_kind"].map({k: i for i, k in enumerate(QUERY_KINDS)})
    out = out.sort_values(["arm", "_order"]).drop(columns="_order").reset_index(drop=True)
    return out[_HIT_COLS]


def retrieval_success(results: pd.DataFrame, *, threshold: float = 0.5) -> pd.DataFrame:
    """Within each arm: success rate of attempts whose queries hit (returned a relevant item)
    vs attempts whose judged queries all missed.

    ``threshold`` is kept for the signature's sake: a hit is a relevant item whatever its
    score (see the module docstring).

    Returns:
        Columns ``arm``, ``n_hit``, ``success_rate_hit``, ``n_miss``, ``success_rate_miss``,
        ``difference`` (hit − miss; NaN when a side is empty). Arms that never queried have no row.
    """
    r = validate_results(results)
    _check_threshold(threshold)
    return _retrieval_success(_query_table(r))


def _retrieval_success(q: pd.DataFrame) -> pd.DataFrame:
    q = q.assign(hit=q["n_relevant"] > 0)
    per_row = q.groupby("row").agg(
        arm=("arm", "first"),
        success=("success", "first"),
        hit=("hit", "any"),
        judged=("judged", "all"),
    )
    per_row = per_row[per_row["hit"] | per_row["judged"]]
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
