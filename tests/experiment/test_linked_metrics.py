"""Calibrated hit rates, the success-linked view, harmful knowledge, arm agreement, the
hierarchical bootstrap and deterministic arms, on hand-built results logs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment import (
    arm_agreement,
    arm_differences,
    calibrated_hit_rate,
    compare_arms,
    harmful_knowledge,
    success_curve,
    success_lift,
    success_linked,
    summary_table,
)
from costeer_lab.experiment._linked import RETURN_THRESHOLDS
from costeer_lab.experiment._metrics import deterministic_arms
from costeer_lab.testing import make_row

ERR = json.dumps(["KeyError: <str>"])
WRONG_ONLY = "[]"


def _log() -> pd.DataFrame:
    """One arm, one seed. t1: attempt 1 fails with an error, attempt 2 succeeds after the error
    query returned an exact fix. t2: attempt 1 fails without fingerprints, attempt 2 fails.
    t3: solved at attempt 1 from a weak similar item; t4 fails once, from a strong one."""
    rows = [
        make_row("v2", 0, "t1", 1, False, error_fingerprints=ERR, retrieved={
            "similar": [("s1", 0.62)], "former_trace": [], "component": [("c1", 0.25)],
            "error": []}),
        make_row("v2", 0, "t1", 2, True, used=["fix1"], retrieved={
            "similar": [("s1", 0.62)], "former_trace": [("tr1", 1.0)],
            "component": [("c1", 0.25)], "error": [("fix1", 1.0)]}),
        make_row("v2", 0, "t2", 1, False, error_fingerprints=WRONG_ONLY, retrieved={
            "similar": [("s2", 0.91)], "former_trace": [], "component": [("c2", 0.75)],
            "error": []}),
        make_row("v2", 0, "t2", 2, False, error_fingerprints=ERR, used=["s2"], retrieved={
            "similar": [("s2", 0.91)], "former_trace": [("tr2", 1.0)],
            "component": [("c2", 0.75)], "error": [("fix9", 0.8)]}),
        make_row("v2", 0, "t3", 1, True, used=["s3"], retrieved={
            "similar": [("s3", 0.4)], "former_trace": [], "component": [], "error": []}),
        make_row("v2", 0, "t4", 1, False, error_fingerprints=ERR, used=["s1"], retrieved={
            "similar": [("s1", 0.95)], "former_trace": [], "component": [("c1", 0.5)],
            "error": []}),
    ]  # fmt: skip
    return pd.DataFrame(rows)


def _counts(out: pd.DataFrame, kind: str) -> list[int]:
    cols = ["n_queries", "n_eligible", "n_hits"]
    return [int(x) for x in out.loc[kind, cols].to_numpy()]


def test_calibrated_hit_rate_definitions_by_hand() -> None:
    out = calibrated_hit_rate(_log()).set_index("query_kind")
    assert list(out.index) == ["similar", "former_trace", "component", "error"]
    assert out["threshold"].to_dict() == dict(RETURN_THRESHOLDS)
    # similar: 6 queries, all eligible; scores .62 .62 .91 .91 .4 .95 -> 5 reach 0.5
    assert _counts(out, "similar") == [6, 6, 5]
    # former traces: eligible only at attempt 2 (t1, t2); both returned a trace
    assert _counts(out, "former_trace") == [6, 2, 2]
    # component: shares .25 .25 .75 .75 (none) .5 -> 3 reach half the components
    assert _counts(out, "component") == [6, 6, 3]
    # error: eligible only after an attempt that failed with a fingerprint: t1 at attempt 2
    # (t2's first failure had none); it hit (exact fingerprint, score 1.0). t2's 0.8 is not
    # eligible, and would not reach 0.9 either.
    assert _counts(out, "error") == [6, 1, 1]
    assert out.loc["error", "hit_rate"] == 1.0
    assert out.loc["former_trace", "hit_rate"] == 1.0
    assert out.loc["similar", "hit_rate"] == pytest.approx(5 / 6)
    # a threshold override changes only its kind; unknown kinds are refused
    strict = calibrated_hit_rate(_log(), thresholds={"similar": 0.92}).set_index("query_kind")
    assert strict.loc["similar", "n_hits"] == 1 and strict.loc["component", "n_hits"] == 3
    with pytest.raises(InvalidInputError, match="'simlar'"):
        calibrated_hit_rate(_log(), thresholds={"simlar": 0.5})


def test_the_old_single_cutoff_inflated_former_traces_and_errors() -> None:
    """Former traces always score 1.0: one cutoff counted the attempt-1 misses as misses and
    every later one as a hit; the calibrated rate counts only eligible queries."""
    out = calibrated_hit_rate(_log()).set_index("query_kind")
    assert out.loc["former_trace", "n_queries"] == 6 and out.loc["former_trace", "n_eligible"] == 2


def test_success_linked_by_hand() -> None:
    out = success_linked(_log(), n_boot=200).set_index("query_kind")
    sim = out.loc["similar"]
    # similar hits: t1a1 F, t1a2 T, t2a1 F, t2a2 F, t4 F -> 1/5; the miss (t3, 0.4) succeeded
    assert (sim["n_with"], sim["success_with"]) == (5, 1 / 5)
    assert (sim["n_without"], sim["success_without"]) == (1, 1.0)
    assert sim["difference"] == pytest.approx(-0.8)
    assert sim["ci_low"] <= -0.8 <= sim["ci_high"]
    # used: s2 (t2a2 F), s3 (t3 T), s1 (t4 F) -> 1/3; not used t1a1 F, t1a2 T, t2a1 F -> 1/3
    assert (sim["n_used"], sim["success_used"]) == (3, 1 / 3)
    assert (sim["n_not_used"], sim["success_not_used"]) == (3, 1 / 3)
    err = out.loc["error"]
    assert (err["n_with"], err["success_with"], err["n_without"]) == (1, 1.0, 0)
    assert np.isnan(err["success_without"]) and np.isnan(err["ci_low"])
    assert (err["n_used"], err["success_used"]) == (1, 1.0)


def test_harmful_knowledge_from_results_by_hand() -> None:
    rows = [make_row("v2", 0, f"a{i}", 1, False, retrieved={"similar": [("bad", 0.9)]})
            for i in range(4)]  # fmt: skip
    rows += [make_row("v2", 0, f"b{i}", 1, True, retrieved={"similar": [("good", 0.9)]})
             for i in range(4)]  # fmt: skip
    rows += [make_row("v2", 0, "c", 1, False, retrieved={"former_trace": [("bad", 1.0)]})]
    out = harmful_knowledge(pd.DataFrame(rows), alpha=0.1)
    # base rate 4/8 (former traces are not events): bad 0 of 4 -> 1/16 < 0.1
    assert out[["arm", "item_id", "n_retrieved", "n_success"]].values.tolist() == [
        ["v2", "bad", 4, 0]
    ]
    assert out["p_value"].tolist() == [pytest.approx(1 / 16)]
    assert harmful_knowledge(pd.DataFrame(rows), alpha=0.05).empty


def _arms(n_seeds: int, n_tasks: int, vary: bool) -> pd.DataFrame:
    """'det' solves the same tasks for every seed; 'rnd' solves a seed-dependent set."""
    rows = []
    rng = np.random.default_rng(7)
    for s in range(n_seeds):
        for t in range(n_tasks):
            rows.append(make_row("det", s, f"t{t}", 1, t % 2 == 0))
            rows.append(
                make_row("rnd", s, f"t{t}", 1, bool(rng.random() < 0.5) if vary else t < 2)
            )
    return pd.DataFrame(rows)


def test_a_deterministic_arm_is_reported_as_such() -> None:
    r = _arms(3, 8, vary=True)
    det = deterministic_arms(r).set_index("arm")
    assert det["deterministic"].to_dict() == {"det": True, "rnd": False}
    assert det["n_seeds"].to_dict() == {"det": 3, "rnd": 3}
    # the seed bootstrap gives the deterministic arm a zero-width interval ...
    seeds_only = success_curve(r, bootstrap="seeds").set_index("arm").loc["det"]
    assert seeds_only["ci_low"] == seeds_only["ci_high"] == 0.5
    # ... the hierarchical one resamples its tasks too, and the report says why
    hier = success_curve(r).set_index("arm").loc["det"]
    assert hier["resampled"] == "seeds+tasks" and hier["ci_low"] < 0.5 < hier["ci_high"]
    summary = summary_table(r, baseline="det", n_boot=200)
    assert summary.set_index("arm")["deterministic"].to_dict() == {"det": True, "rnd": False}
    lines = arm_differences(summary, baseline="det")
    assert "deterministic across its 3 seeds" in lines[0]
    assert "deterministic" not in lines[1]
    # one seed: nothing can be said about determinism
    assert not deterministic_arms(_arms(1, 4, vary=True))["deterministic"].any()


def test_hierarchical_bootstrap_is_wider_than_seed_bootstrap_and_reproducible() -> None:
    r = _arms(4, 10, vary=True)
    hier = success_lift(r, baseline="det", n_boot=500).iloc[0]
    seeds = success_lift(r, baseline="det", n_boot=500, bootstrap="seeds").iloc[0]
    assert hier["lift"] == seeds["lift"]
    assert hier["ci_high"] - hier["ci_low"] > seeds["ci_high"] - seeds["ci_low"]
    assert hier["resampled"] == "seeds+tasks" and seeds["resampled"] == "seeds"
    again = success_lift(r, baseline="det", n_boot=500).iloc[0]
    assert again.equals(hier)
    with pytest.raises(InvalidInputError, match="bootstrap"):
        success_curve(r, bootstrap="tasks")


def test_arm_agreement_and_compare_arms() -> None:
    rows = []
    for s in (0, 1):
        for t, (a, b) in enumerate([(1, 1), (1, 0), (0, 1), (0, 0), (2, 1)]):
            for arm, k in (("v2", a), ("v1", b)):
                if k == 0:
                    rows += [
                        make_row(arm, s, f"t{t}", 1, False),
                        make_row(arm, s, f"t{t}", 2, False),
                    ]
                else:
                    rows += [make_row(arm, s, f"t{t}", i, i == k) for i in range(1, k + 1)]
    r = pd.DataFrame(rows)
    agree = arm_agreement(r, "v2", "v1").set_index("stage").loc["all"]
    assert agree.to_dict() == {
        "n_pairs": 10, "both_solved": 4, "only_arm": 2, "only_reference": 2, "neither": 2,
        "arm_later": 2, "reference_later": 0,
    }  # fmt: skip
    text = compare_arms(r, "v2", "v1", n_boot=200)
    assert text.startswith("'v2' vs 'v1': final success 60.0% vs 60.0%, paired difference +0.0 pp")
    assert "no difference is measured" in text
    assert "agree on 6 of 10 (seed, task) outcomes (4 solved by both, 2 by neither)" in text
    with pytest.raises(InvalidInputError, match="'v3'"):
        arm_agreement(r, "v3", "v1")
