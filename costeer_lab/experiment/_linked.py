"""Per-kind hit rates against ground truth, the success-linked view of retrieval, and harmful
knowledge.

Definitions:

- a query of kind ``q`` **could return** something when: ``similar`` and ``component``
  always; ``error`` from attempt 2 on when the task's previous attempt (same arm, seed and
  task) failed with at least one error fingerprint; ``former_trace`` likewise but from
  attempt 3 on (at attempt 2 the only trace is the last failure, which the coder already has
  as its feedback and which is never a hit).
- it **returned** something when its best item reaches the kind's score threshold
  (:data:`RETURN_THRESHOLDS`; for ``similar`` the embedder's calibrated cosine,
  :data:`SIMILAR_THRESHOLDS`, from ``benchmarks/retrieval.py``). The returned rate says how
  often the query came back with a confident item — not whether the item was any good, so it is
  never called a hit.
- it **hits** when it returned an item that is *relevant* to the target task by ground truth,
  judged when the query ran and recorded as ``"relevant"`` on each item of the ``retrieved``
  column (rules in :mod:`costeer_lab.knowledge._relevance`: similar/component items whose task
  shares an operator with the target; error fixes stored under a cause — fingerprint — of the
  current failure; former traces that failed with a cause of the current failure and are not
  that failure itself). A query is **eligible** (counted in the hit rate) when it could return
  something and is judged (it returned nothing, or every item carries ``relevant``); tables
  written before relevance was recorded have no eligible non-empty query, so their hit rate is
  NaN rather than a guess.
- **success-linked** (the headline): for arm ``a`` and kind ``q``, among attempts whose ``q``
  query was eligible, the success rate of those where it hit against those where it did not,
  and their difference with a percentile bootstrap interval over attempts; and the same split
  by whether the coder *used* an item the ``q`` query returned (``used_knowledge_ids``). It
  says how often relevant retrieval of kind ``q`` preceded a success; it is an association,
  not a causal effect (ablation arms measure effects).
- **harmful knowledge**: see :mod:`costeer_lab.knowledge._harmful` — items whose *use*
  preceded failure on tasks that other attempts solved (a stratified exact test per task, so
  hard tasks do not make the items used on them look harmful).

Example:
    >>> from costeer_lab.experiment import calibrated_hit_rate
    >>> from costeer_lab.testing import example_results
    >>> out = calibrated_hit_rate(example_results())
    >>> out[["query_kind", "n_eligible", "n_hits"]].values.tolist()
    [['similar', 2, 1], ['error', 1, 0]]
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
import pandas as pd

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment._results import QUERY_KINDS, validate_results
from costeer_lab.experiment._retrieval_metrics import _query_table

__all__ = [
    "RETURN_THRESHOLDS",
    "SIMILAR_THRESHOLDS",
    "calibrated_hit_rate",
    "harmful_knowledge",
    "success_linked",
]

#: Per-kind score thresholds of the returned rate (see the module docstring; not a hit).
RETURN_THRESHOLDS: Mapping[str, float] = {
    "similar": 0.5,
    "former_trace": 0.0,
    "component": 0.5,
    "error": 0.9,
}


#: Calibrated similar-query score thresholds per embedder (``benchmarks/retrieval.py``).
SIMILAR_THRESHOLDS: Mapping[str, float] = {"hashing": 0.74, "minilm": 0.86}


def _thresholds(over: Mapping[str, float] | None, embedder: str | None = None) -> dict[str, float]:
    out = dict(RETURN_THRESHOLDS)
    if embedder is not None:
        out["similar"] = SIMILAR_THRESHOLDS.get(embedder.split("@", 1)[0], out["similar"])
    for k, v in (over or {}).items():
        if k not in RETURN_THRESHOLDS:
            raise InvalidInputError(
                f"unknown query kind {k!r} in thresholds; known: {QUERY_KINDS}"
            )
        if not isinstance(v, int | float) or v != v:
            raise InvalidInputError(f"threshold of {k!r} must be a number, got {v!r}")
        out[k] = float(v)
    return out


def _eligible_queries(r: pd.DataFrame, thresholds: dict[str, float]) -> pd.DataFrame:
    """The query table with ``stage``, ``could`` (could return something), ``eligible``
    (could and judged), ``returned`` (best score reaches the kind's threshold, among ``could``)
    and ``hit`` (eligible and a relevant item came back) columns."""
    q = _query_table(r)
    stage = r["stage"].astype(str) if "stage" in r else pd.Series("", index=r.index)
    errs = r["error_fingerprints"].map(lambda t: bool(json.loads(t)))
    prev = (
        r.assign(_err=errs, attempt=r["attempt"] + 1)
        .set_index(["arm", "seed", "task_id", "attempt"])["_err"]
        .to_dict()
    )
    keys = zip(q["arm"], q["seed"], q["task_id"], q["attempt"], strict=True)
    prev_err = np.array([bool(prev.get(k, False)) for k in keys], dtype=bool)
    kind = q["query_kind"].to_numpy()
    attempt = q["attempt"].to_numpy()
    could = np.where(
        kind == "former_trace",
        (attempt >= 3) & prev_err,
        np.where(kind == "error", (attempt >= 2) & prev_err, True),
    )
    limit = q["query_kind"].map(thresholds).to_numpy(dtype=np.float64)
    returned = could & (q["n_items"].to_numpy() > 0) & (q["max_score"].fillna(-np.inf) >= limit)
    eligible = could & q["judged"].to_numpy(dtype=bool)
    hit = eligible & (q["n_relevant"].to_numpy() > 0)
    return q.assign(
        stage=stage.to_numpy()[q["row"].to_numpy()],
        could=could,
        eligible=eligible,
        returned=returned,
        hit=hit,
    )


def calibrated_hit_rate(
    results: pd.DataFrame,
    *,
    embedder: str | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Per (stage, arm, query kind): how often the query returned a confident item, and how
    often it returned a relevant one (a hit; module docstring).

    ``embedder`` (the experiment's) selects the calibrated similar score threshold;
    ``thresholds`` overrides any kind's. Thresholds affect ``returned`` only: a hit is decided
    by relevance, whatever the score.

    Returns:
        Columns ``stage`` (``""`` without stages), ``arm``, ``query_kind``, ``n_queries`` (that
        ran), ``n_could`` (that could return something), ``n_returned``, ``returned_rate``
        (``n_returned / n_could``), ``n_eligible`` (could, and relevance was judged),
        ``n_hits``, ``hit_rate`` (``n_hits / n_eligible``; NaN when none was eligible),
        ``item_precision`` (the share of the items eligible queries returned that were
        relevant: a query can hit with one relevant item among irrelevant ones), ``threshold``.
    """
    th = _thresholds(thresholds, embedder)
    q = _eligible_queries(validate_results(results), th)
    cols = ["stage", "arm", "query_kind", "n_queries", "n_could", "n_returned", "returned_rate"]
    cols += ["n_eligible", "n_hits", "hit_rate", "item_precision"]
    if q.empty:
        return pd.DataFrame({c: [] for c in [*cols, "threshold"]})
    q = q.assign(
        _items=q["n_items"].where(q["eligible"], 0),
        _relevant=q["n_relevant"].where(q["eligible"], 0),
    )
    g = q.groupby(["stage", "arm", "query_kind"], sort=True)
    out = pd.DataFrame(
        {
            "_items": g["_items"].sum(),
            "_relevant": g["_relevant"].sum(),
            "n_queries": g.size(),
            "n_could": g["could"].sum(),
            "n_returned": g["returned"].sum(),
            "n_eligible": g["eligible"].sum(),
            "n_hits": g["hit"].sum(),
        }
    ).reset_index()
    counts = ["n_queries", "n_could", "n_returned", "n_eligible", "n_hits"]
    out = out.astype(dict.fromkeys(counts, "int64"))
    out["returned_rate"] = out["n_returned"] / out["n_could"].where(out["n_could"] > 0)
    out["hit_rate"] = out["n_hits"] / out["n_eligible"].where(out["n_eligible"] > 0)
    out["item_precision"] = out["_relevant"] / out["_items"].where(out["_items"] > 0)
    out["threshold"] = out["query_kind"].map(th)
    out["_o"] = out["query_kind"].map({k: i for i, k in enumerate(QUERY_KINDS)})
    out = out.sort_values(["stage", "arm", "_o"]).drop(columns="_o").reset_index(drop=True)
    return out[[*cols, "threshold"]]


def success_linked(
    results: pd.DataFrame,
    *,
    embedder: str | None = None,
    thresholds: Mapping[str, float] | None = None,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Success of attempts whose ``q`` query hit (returned a relevant item) vs eligible
    attempts where it did not.

    Returns:
        Columns ``stage``, ``arm``, ``query_kind``, ``n_with``, ``success_with``,
        ``n_without``, ``success_without``, ``difference``, ``ci_low``, ``ci_high`` (percentile
        bootstrap over attempts, each side resampled on its own; NaN when a side is empty),
        then the same seven by use: ``n_used``, ``success_used``, ``n_not_used``,
        ``success_not_used``, ``used_difference``, ``used_ci_low``, ``used_ci_high``.
    """
    if not isinstance(n_boot, int) or n_boot < 1 or not 0.0 < ci < 1.0:
        raise InvalidInputError(f"need n_boot >= 1 and 0 < ci < 1, got {n_boot!r}, {ci!r}")
    r = validate_results(results)
    q = _eligible_queries(r, _thresholds(thresholds, embedder))
    used_ids = r["used_knowledge_ids"].map(lambda t: frozenset(json.loads(t))).to_numpy()
    used = [bool(used_ids[row] & set(ids)) for row, ids in zip(q["row"], q["ids"], strict=True)]
    q = q.assign(used=used)
    q = q[q["eligible"]]
    rows = []
    for (stage, arm, kind), g in q.groupby(["stage", "arm", "query_kind"], sort=True):
        key = f"{stage}|{arm}|{kind}".encode()
        rng = np.random.default_rng([seed, zlib.crc32(key)])
        ok = g["success"].to_numpy(dtype=np.float64)
        hit = _split(ok, g["hit"].to_numpy(dtype=bool), rng, n_boot, ci)
        use = _split(ok, g["used"].to_numpy(dtype=bool), rng, n_boot, ci)
        rows.append((stage, arm, kind, *hit, *use))
    cols = ["stage", "arm", "query_kind", "n_with", "success_with", "n_without"]
    cols += ["success_without", "difference", "ci_low", "ci_high"]
    cols += ["n_used", "success_used", "n_not_used", "success_not_used", "used_difference"]
    cols += ["used_ci_low", "used_ci_high"]
    out = pd.DataFrame(rows, columns=cols)
    out["_o"] = out["query_kind"].map({k: i for i, k in enumerate(QUERY_KINDS)})
    return out.sort_values(["stage", "arm", "_o"]).drop(columns="_o").reset_index(drop=True)


def _split(
    ok: npt.NDArray[np.float64],
    mask: npt.NDArray[np.bool_],
    rng: np.random.Generator,
    n_boot: int,
    ci: float,
) -> tuple[int, float, int, float, float, float, float]:
    """``(n_with, rate_with, n_without, rate_without, difference, ci_low, ci_high)``."""
    w, wo = ok[mask], ok[~mask]
    nan = float("nan")
    sw = float(w.mean()) if len(w) else nan
    swo = float(wo.mean()) if len(wo) else nan
    lo = hi = nan
    if len(w) and len(wo):
        alpha = (1.0 - ci) / 2.0
        bw = w[rng.integers(0, len(w), size=(n_boot, len(w)))].mean(axis=1)
        bwo = wo[rng.integers(0, len(wo), size=(n_boot, len(wo)))].mean(axis=1)
        lo, hi = (float(x) for x in np.quantile(bw - bwo, [alpha, 1.0 - alpha]))
        lo, hi = min(lo, sw - swo), max(hi, sw - swo)
    return len(w), sw, len(wo), swo, sw - swo, lo, hi


def harmful_knowledge(
    results: pd.DataFrame,
    *,
    min_uses: int = 3,
    alpha: float = 0.05,
    reference_arm: str | None = None,
) -> pd.DataFrame:
    """Knowledge items whose use preceded failure more than their tasks' difficulty explains.

    Per arm, each attempt is evidence about the items its coder *used* (``used_knowledge_ids``,
    former traces left out; retrieved-but-unused items are no evidence), compared task by task
    with the arm's attempts of the same task that did not use the item (all seeds pooled) by
    the stratified exact test of :func:`costeer_lab.knowledge.find_harmful`. With
    ``reference_arm`` (e.g. ``"no_knowledge"``), that arm's attempts of the same tasks join
    every task's comparison as attempts without the item. Rows with an ``infra_error`` are
    left out.

    Returns:
        Columns ``arm``, ``item_id``, ``n_used``, ``n_success``, ``expected_rate`` (the
        success rate the same tasks' other attempts predict), ``p_value``; smallest p-value
        first within an arm.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> harmful_knowledge(example_results()).empty
        True
    """
    from costeer_lab.knowledge import find_harmful

    if not isinstance(min_uses, int) or min_uses < 1 or not 0.0 < alpha < 1.0:
        raise InvalidInputError(
            f"need min_uses >= 1 and 0 < alpha < 1, got {min_uses!r}, {alpha!r}"
        )
    r = validate_results(results)
    r = r[r["infra_error"] == ""]
    reference: list[tuple[str, list[str], bool]] = []
    if reference_arm is not None:
        if reference_arm not in set(r["arm"]):
            raise InvalidInputError(
                f"reference arm {reference_arm!r} is not in the results; arms: "
                f"{sorted(set(r['arm']))}"
            )
        ref = r[r["arm"] == reference_arm]
        pairs = zip(ref["task_id"], ref["success"], strict=True)
        reference = [(str(t), [], bool(ok)) for t, ok in pairs]
    rows = []
    for arm, g in r.groupby("arm", sort=True):
        if arm == reference_arm:
            continue
        attempts = _uses(g)
        tasks = {t for t, _, _ in attempts}
        attempts += [a for a in reference if a[0] in tasks]
        for h in find_harmful(attempts, min_uses=min_uses, alpha=alpha):
            rows.append((str(arm), h.item_id, h.n, h.k, h.base_rate, h.p_value))
    cols = ["arm", "item_id", "n_used", "n_success", "expected_rate", "p_value"]
    return pd.DataFrame(rows, columns=cols)


def _uses(g: pd.DataFrame) -> list[tuple[str, list[str], bool]]:
    """``(task, used ids without former traces, success)`` per row of ``g``."""
    out = []
    cols = ["task_id", "retrieved", "used_knowledge_ids", "success"]
    for task, retrieved, used, ok in g[cols].itertuples(index=False):
        own = {str(x["id"]) for x in json.loads(retrieved).get("former_trace", ())}
        ids = [str(i) for i in json.loads(used) if str(i) not in own]
        out.append((str(task), ids, bool(ok)))
    return out
