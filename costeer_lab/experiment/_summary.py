"""The headline numbers of an experiment per arm, and plain sentences comparing the arms.

Example:
    >>> from costeer_lab.experiment import summary_table
    >>> from costeer_lab.testing import example_results
    >>> summary_table(example_results(), n_boot=100)["final_success"].tolist()
    [1.0, 0.5]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment._linked import _eligible_queries, _thresholds
from costeer_lab.experiment._metrics import (
    _attempts,
    _check_boot,
    _deterministic,
    _first_try,
    _kb_growth,
    _success_curve,
    _success_lift,
    _task_outcomes,
)
from costeer_lab.experiment._results import validate_results
from costeer_lab.experiment._retrieval_metrics import _check_threshold, _query_table

__all__ = ["arm_agreement", "arm_differences", "compare_arms", "summary_table"]

SUMMARY_COLUMNS = [
    "arm", "n_seeds", "n_tasks", "final_success", "final_success_ci_low", "final_success_ci_high",
    "first_try_success", "mean_attempts", "n_never_solved", "query_hit_rate", "lift",
    "lift_ci_low", "lift_ci_high", "lift_n_pairs", "final_kb_nodes", "prompt_tokens",
    "completion_tokens", "cost_usd", "duration_s", "deterministic", "calibrated_hit_rate",
]  # fmt: skip


def summary_table(
    results: pd.DataFrame,
    *,
    baseline: str = "no_knowledge",
    threshold: float = 0.5,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    bootstrap: str = "hierarchical",
    embedder: str | None = None,
) -> pd.DataFrame:
    """One row per arm joining the headline metrics.

    Columns: ``final_success`` (+ CI) from :func:`success_curve` at the arm's last attempt,
    ``first_try_success``, ``mean_attempts`` and ``n_never_solved`` from
    :func:`attempts_to_success`, ``query_hit_rate`` (hits / queries over all kinds, NaN for arms
    that never queried), ``lift`` (+ CI and ``lift_n_pairs``, the shared seeds) from
    :func:`success_lift` vs ``baseline`` (NaN and 0 pairs for the baseline itself or when it is
    absent), ``final_kb_nodes`` from :func:`kb_growth`, totals
    of ``prompt_tokens``, ``completion_tokens``, ``cost_usd``, ``duration_s``, and
    ``deterministic`` (identical outcomes for every seed, :func:`deterministic_arms`) and
    ``calibrated_hit_rate`` (hits / eligible queries over all kinds with the per-kind
    definitions of :func:`calibrated_hit_rate`, ``embedder`` choosing the similar threshold;
    ``query_hit_rate`` keeps the single cutoff).
    Intervals use ``bootstrap`` (see :mod:`._metrics`).
    """
    _check_boot(n_boot, ci, bootstrap)
    threshold = _check_threshold(threshold)
    r = validate_results(results)
    if r.empty:
        return pd.DataFrame({c: [] for c in SUMMARY_COLUMNS})
    outcomes = _task_outcomes(r)
    curve = _success_curve(r, n_boot, ci, seed, bootstrap)
    final = curve.groupby("arm").tail(1).set_index("arm")
    out = pd.DataFrame(
        {
            "n_seeds": final["n_seeds"],
            "n_tasks": final["n_tasks"],
            "final_success": final["success_rate"],
            "final_success_ci_low": final["ci_low"],
            "final_success_ci_high": final["ci_high"],
        }
    )
    out = out.join(_first_try(outcomes).set_index("arm")["first_try_success"])
    out = out.join(_attempts(outcomes).set_index("arm")[["mean_attempts", "n_never_solved"]])
    q = _query_table(r)
    hits = (q["max_score"] >= threshold).groupby(q["arm"]).mean().rename("query_hit_rate")
    out = out.join(hits)
    nan = float("nan")
    out["lift"], out["lift_ci_low"], out["lift_ci_high"] = nan, nan, nan
    out["lift_n_pairs"] = 0
    if baseline in out.index:
        lift = _success_lift(r, baseline, n_boot, ci, seed, bootstrap).set_index("arm")
        pairs = (("lift", "lift"), ("lift_ci_low", "ci_low"), ("lift_ci_high", "ci_high"))
        for col, src in (*pairs, ("lift_n_pairs", "n_pairs")):
            out.loc[lift.index, col] = lift[src]
    kb = _kb_growth(r).groupby("arm").tail(1).set_index("arm")["kb_nodes"]
    out = out.join(kb.rename("final_kb_nodes"))
    totals = r.groupby("arm")[["prompt_tokens", "completion_tokens", "cost_usd", "duration_s"]]
    out = out.join(totals.sum())
    out = out.join(_deterministic(outcomes).set_index("arm")["deterministic"])
    cal = _eligible_queries(r, _thresholds(None, embedder))
    cal = cal[cal["eligible"]]
    out = out.join(cal.groupby("arm")["hit"].mean().rename("calibrated_hit_rate"))
    return out.rename_axis("arm").reset_index()[SUMMARY_COLUMNS]


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:.1f}%"


def _pp(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:+.1f} pp"


def _num(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.2f}"


def _det(row: Mapping[Any, Any]) -> str:
    final = row.get("final_success")
    bound = ""
    if isinstance(final, float) and final in (0.0, 1.0) and int(row.get("n_tasks", 0)) > 0:
        what = "solved every task" if final == 1.0 else "solved no task"
        bound = (
            f"; it {what} in every seed, so no resample can differ and its interval has zero "
            "width by construction"
        )
    if not bool(row.get("deterministic", False)):
        return bound
    return bound + (
        f"; deterministic across its {row['n_seeds']} seeds (every seed gave the same outcome "
        "for every task, so seeds add no run-to-run information and its interval reflects "
        "task sampling only)"
    )


def arm_differences(
    summary: pd.DataFrame, *, baseline: str = "no_knowledge", ci: float = 0.95
) -> list[str]:
    """Plain sentences stating the measured differences of each arm against the reference arm.

    The reference is ``baseline`` when it is an arm of ``summary`` (a :func:`summary_table`),
    else the first arm. Sentences report point estimates with their CIs and say whether the
    paired interval excludes zero; they make no claim beyond that.

    Example:
        >>> from costeer_lab.experiment import summary_table
        >>> from costeer_lab.testing import example_results
        >>> arm_differences(summary_table(example_results(), n_boot=100))[0][:30]
        "Reference arm: 'no_knowledge' "
    """
    if summary.empty:
        return ["No results: nothing to compare."]
    s = {str(row["arm"]): row for row in summary.to_dict("records")}
    ref = baseline if baseline in s else next(iter(s))
    level = f"{round(100 * ci)}% CI"
    b = s[ref]
    lines = [
        f"Reference arm: {ref!r} (final success {_pct(b['final_success'])}, {level} "
        f"[{_pct(b['final_success_ci_low'])}, {_pct(b['final_success_ci_high'])}], "
        f"first-try success {_pct(b['first_try_success'])}, {int(b['n_seeds'])} seed(s))"
        + _det(b)
        + "."
    ]
    for arm, a in s.items():
        if arm == ref:
            continue
        diff = a["final_success"] - b["final_success"]
        text = (
            f"{arm!r}: final success {_pct(a['final_success'])} ({level} "
            f"[{_pct(a['final_success_ci_low'])}, {_pct(a['final_success_ci_high'])}]) vs "
            f"{_pct(b['final_success'])} for {ref!r}, a difference of {_pp(diff)}"
        )
        if ref == baseline and not math.isnan(a["lift"]):
            lo, hi = a["lift_ci_low"], a["lift_ci_high"]
            verdict = "excludes" if lo > 0 or hi < 0 else "includes"
            n = int(a["lift_n_pairs"])
            text += (
                f"; paired lift over {n} seed(s) {_pp(a['lift'])} ({level} [{_pp(lo)}, "
                f"{_pp(hi)}]), an interval that {verdict} zero"
            )
            if n < 5:
                text += f" (with only {n} paired seed(s) the interval understates uncertainty)"
        text += _det(a)
        text += (
            f". First-try success {_pct(a['first_try_success'])} vs "
            f"{_pct(b['first_try_success'])}; mean attempts to success "
            f"{_num(a['mean_attempts'])} vs {_num(b['mean_attempts'])}; never solved "
            f"{int(a['n_never_solved'])} vs {int(b['n_never_solved'])}."
        )
        lines.append(text)
    return lines


def arm_agreement(results: pd.DataFrame, arm: str, reference: str) -> pd.DataFrame:
    """How two arms' final outcomes agree on the (seed, task) pairs both ran.

    Returns:
        One row per stage (``""`` without stages) and an ``all`` row: ``n_pairs``,
        ``both_solved``, ``only_arm``, ``only_reference``, ``neither``, ``arm_later``
        (pairs the arm solved after attempt 1) and ``reference_later``.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> arm_agreement(example_results(), "rag", "no_knowledge")["both_solved"].tolist()
        [1, 1]
    """
    r = validate_results(results)
    stage = r["stage"].astype(str) if "stage" in r else pd.Series("", index=r.index)
    out = _task_outcomes(r)
    keyed = {str(a): g.set_index(["seed", "task_id"])["solved_at"] for a, g in out.groupby("arm")}
    for name in (arm, reference):
        if name not in keyed:
            raise InvalidInputError(f"arm {name!r} is not in the results; {sorted(keyed)}")
    a, b = keyed[arm], keyed[reference]
    shared = a.index.intersection(b.index)
    where = stage.groupby([r["seed"], r["task_id"]]).first()
    frame = pd.DataFrame({"a": a.loc[shared], "b": b.loc[shared]})
    frame["stage"] = where.reindex(shared).fillna("").to_numpy()
    rows = []
    groups = [*((str(s), g) for s, g in frame.groupby("stage", sort=True)), ("all", frame)]
    for name, g in groups:
        sa, sb = g["a"].notna(), g["b"].notna()
        rows.append(
            {
                "stage": name,
                "n_pairs": len(g),
                "both_solved": int((sa & sb).sum()),
                "only_arm": int((sa & ~sb).sum()),
                "only_reference": int((~sa & sb).sum()),
                "neither": int((~sa & ~sb).sum()),
                "arm_later": int((g["a"] > 1).sum()),
                "reference_later": int((g["b"] > 1).sum()),
            }
        )
    return pd.DataFrame(rows)


def compare_arms(
    results: pd.DataFrame,
    arm: str,
    reference: str,
    *,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> str:
    """One sentence: the paired difference of final success between two arms (hierarchical
    bootstrap CI), and when the interval includes zero, the measured reason (how often the
    arms agree, and how many pairs neither or both solved).

    Example:
        >>> from costeer_lab.testing import example_results
        >>> compare_arms(example_results(), "rag", "no_knowledge", n_boot=50)[:18]
        "'rag' vs 'no_knowl"
    """
    r = validate_results(results)
    lifts = _success_lift(r, reference, n_boot, ci, seed).set_index("arm")
    lift: Mapping[Any, Any] = lifts.loc[arm].to_dict()
    agree: Mapping[Any, Any] = (
        arm_agreement(r, arm, reference).set_index("stage").loc["all"].to_dict()
    )
    first = _first_try(_task_outcomes(r)).set_index("arm")["first_try_success"].to_dict()
    level = f"{round(100 * ci)}% CI"
    lo, hi = float(lift["ci_low"]), float(lift["ci_high"])
    text = (
        f"{arm!r} vs {reference!r}: final success {_pct(float(lift['arm_success']))} vs "
        f"{_pct(float(lift['baseline_success']))}, paired difference "
        f"{_pp(float(lift['lift']))} ({level} [{_pp(lo)}, {_pp(hi)}], "
        f"{lift['resampled']} resampled over {int(lift['n_pairs'])} seed(s))"
    )
    n = int(agree["n_pairs"])
    same = int(agree["both_solved"]) + int(agree["neither"])
    detail = (
        f"the arms agree on {same} of {n} (seed, task) outcomes ({int(agree['both_solved'])} "
        f"solved by both, {int(agree['neither'])} by neither) and differ on "
        f"{int(agree['only_arm'])} solved only by {arm!r} and {int(agree['only_reference'])} "
        f"only by {reference!r}; first-try success {_pct(first.get(arm, math.nan))} vs "
        f"{_pct(first.get(reference, math.nan))}, pairs solved after attempt 1 "
        f"{int(agree['arm_later'])} vs {int(agree['reference_later'])}"
    )
    if math.isnan(lo) or (lo <= 0.0 <= hi):
        return f"{text}: no difference is measured — {detail}."
    return f"{text}: the interval excludes zero — {detail}."
