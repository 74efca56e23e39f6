"""Calibrated per-kind hit rates, the success-linked view of retrieval, and harmful knowledge.

Each query kind scores on its own scale, so one cutoff cannot define a hit for all of them
(former traces always score 1.0; component scores are shared-component fractions; similar
scores are cosines; error scores are 1.0 for the same fingerprint, else a cosine). Definitions:

- a query of kind ``q`` is **eligible** when it could return something: ``similar`` and
  ``component`` always; ``former_trace`` from attempt 2 on; ``error`` from attempt 2 on when the
  task's previous attempt (same arm, seed and task) failed with at least one error fingerprint.
  Ineligible queries count neither as hits nor as misses.
- an eligible query **hits** when its best item scores at least the kind's threshold
  (:data:`HIT_THRESHOLDS`: component: shares at least half the task's components, ``>= 0.5``;
  error: the same or a near-identical fingerprint, ``>= 0.9``, the error query's own default
  fallback similarity; former trace: any trace returned, ``>= 0``; similar: a cosine on the
  embedder's own scale — :data:`SIMILAR_THRESHOLDS` holds, per embedder, the cosine that best
  separates same-structure from other task pairs on the labelled set of
  ``benchmarks/retrieval.py`` (Youden's J; hashing 0.74, minilm 0.86); ``0.5`` for an
  embedder not calibrated there).
- **success-linked** (the headline): for arm ``a`` and kind ``q``, among attempts whose ``q``
  query was eligible, the success rate of those where it hit against those where it did not,
  and their difference with a percentile bootstrap interval over attempts; and the same split
  by whether the coder *used* an item the ``q`` query returned (``used_knowledge_ids``), which
  still separates attempts when a kind hits every time. It says how often retrieval of kind
  ``q`` preceded a success; it is an association, not a causal effect (ablation arms measure
  effects).
- **harmful knowledge**: see :mod:`costeer_lab.knowledge._harmful` — items whose retrieval
  (similar, component, error) preceded success less often than the arm's base rate by a
  one-sided binomial test.

Example:
    >>> from costeer_lab.experiment import calibrated_hit_rate
    >>> from costeer_lab.testing import example_results
    >>> calibrated_hit_rate(example_results())[["query_kind", "n_eligible"]].values.tolist()
    [['similar', 2], ['error', 1]]
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
    "HIT_THRESHOLDS",
    "SIMILAR_THRESHOLDS",
    "calibrated_hit_rate",
    "harmful_knowledge",
    "success_linked",
]

#: Per-kind hit thresholds of the calibrated hit rate (see the module docstring).
HIT_THRESHOLDS: Mapping[str, float] = {
    "similar": 0.5,
    "former_trace": 0.0,
    "component": 0.5,
    "error": 0.9,
}


#: Calibrated similar-query hit thresholds per embedder (``benchmarks/retrieval.py``).
SIMILAR_THRESHOLDS: Mapping[str, float] = {"hashing": 0.74, "minilm": 0.86}


def _thresholds(over: Mapping[str, float] | None, embedder: str | None = None) -> dict[str, float]:
    out = dict(HIT_THRESHOLDS)
    if embedder is not None:
        out["similar"] = SIMILAR_THRESHOLDS.get(embedder.split("@", 1)[0], out["similar"])
    for k, v in (over or {}).items():
        if k not in HIT_THRESHOLDS:
            raise InvalidInputError(
                f"unknown query kind {k!r} in thresholds; known: {QUERY_KINDS}"
            )
        if not isinstance(v, int | float) or v != v:
            raise InvalidInputError(f"threshold of {k!r} must be a number, got {v!r}")
        out[k] = float(v)
    return out


def _eligible_queries(r: pd.DataFrame, thresholds: dict[str, float]) -> pd.DataFrame:
    """The query table with ``stage``, ``eligible`` and ``hit`` columns."""
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
    later = q["attempt"].to_numpy() >= 2
    eligible = np.where(
        kind == "former_trace", later, np.where(kind == "error", later & prev_err, True)
    )
    limit = q["query_kind"].map(thresholds).to_numpy(dtype=np.float64)
    hit = eligible & (q["n_items"].to_numpy() > 0) & (q["max_score"].fillna(-np.inf) >= limit)
    return q.assign(stage=stage.to_numpy()[q["row"].to_numpy()], eligible=eligible, hit=hit)


def calibrated_hit_rate(
    results: pd.DataFrame,
    *,
    embedder: str | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Per (stage, arm, query kind): eligible queries and the share that hit (module docstring).

    ``embedder`` (the experiment's) selects the calibrated similar threshold;
    ``thresholds`` overrides any kind's.

    Returns:
        Columns ``stage`` (``""`` without stages), ``arm``, ``query_kind``, ``n_queries`` (that
        ran), ``n_eligible``, ``n_hits``, ``hit_rate`` (``n_hits / n_eligible``, NaN when none
        was eligible), ``threshold``.
    """
    th = _thresholds(thresholds, embedder)
    q = _eligible_queries(validate_results(results), th)
    cols = ["stage", "arm", "query_kind", "n_queries", "n_eligible", "n_hits", "hit_rate"]
    if q.empty:
        return pd.DataFrame({c: [] for c in [*cols, "threshold"]})
    g = q.groupby(["stage", "arm", "query_kind"], sort=True)
    out = pd.DataFrame(
        {"n_queries": g.size(), "n_eligible": g["eligible"].sum(), "n_hits": g["hit"].sum()}
    ).reset_index()
    out = out.astype({"n_queries": "int64", "n_eligible": "int64", "n_hits": "int64"})
    out["hit_rate"] = out["n_hits"] / out["n_eligible"].where(out["n_eligible"] > 0)
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
    """Success of attempts whose ``q`` query hit vs eligible attempts where it did not.

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
    results: pd.DataFrame, *, min_retrievals: int = 3, alpha: float = 0.05
) -> pd.DataFrame:
    """Knowledge items whose retrieval preceded failure more than chance, per arm (evidence).

    Each result row contributes one event per distinct item its similar, component and error
    queries returned; see :func:`costeer_lab.knowledge.find_harmful`.

    Returns:
        Columns ``arm``, ``item_id``, ``n_retrieved``, ``n_success``, ``base_rate``,
        ``p_value``; smallest p-value first within an arm.
    """
    from costeer_lab.knowledge import find_harmful

    r = validate_results(results)
    rows = []
    for arm, g in r.groupby("arm", sort=True):
        events: list[tuple[str, bool]] = []
        for text, ok in zip(g["retrieved"], g["success"], strict=True):
            ids = {
                str(it["id"])
                for kind, items in json.loads(text).items()
                if kind != "former_trace"
                for it in items
            }
            events.extend((i, bool(ok)) for i in sorted(ids))
        for h in find_harmful(events, min_retrievals=min_retrievals, alpha=alpha):
            rows.append((str(arm), h.item_id, h.n, h.k, h.base_rate, h.p_value))
    cols = ["arm", "item_id", "n_retrieved", "n_success", "base_rate", "p_value"]
    return pd.DataFrame(rows, columns=cols)
