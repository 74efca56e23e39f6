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
    """One arm, one seed; each item says whether it is relevant (a third tuple element).

    t1: attempt 1 fails with an error, attempt 2 succeeds after the error query returned an exact
    fix; its former trace is the last failure itself (never a hit). t2: attempt 1 fails without
    fingerprints, attempt 2 fails; its similar item scores high but is irrelevant, its
    component item is relevant. t3: solved at attempt 1 from a relevant but weak similar item;
    t4 fails once, from a strong relevant one. t5 fails three times with the same error; at
    attempt 3 the earlier same-cause trace is a hit. t6's item carries no relevance (a table
    written before relevance was recorded): it is never eligible."""
    T, F = True, False
    rows = [
        make_row("v2", 0, "t1", 1, False, error_fingerprints=ERR, retrieved={
            "similar": [("s1", 0.62, T)], "former_trace": [], "component": [("c1", 0.25, F)],
            "error": []}),
        make_row("v2", 0, "t1", 2, True, used=["fix1"], retrieved={
            "similar": [("s1", 0.62, T)], "former_trace": [("tr1", 1.0, F)],
            "component": [("c1", 0.25, F)], "error": [("fix1", 1.0, T)]}),
        make_row("v2", 0, "t2", 1, False, error_fingerprints=WRONG_ONLY, retrieved={
            "similar": [("s2", 0.91, F)], "former_trace": [], "component": [("c2", 0.75, T)],
            "error": []}),
        make_row("v2", 0, "t2", 2, False, error_fingerprints=ERR, used=["s2"], retrieved={
            "similar": [("s2", 0.91, F)], "former_trace": [("tr2", 1.0, F)],
            "component": [("c2", 0.75, T)], "error": [("fix9", 0.8, F)]}),
        make_row("v2", 0, "t3", 1, True, used=["s3"], retrieved={
            "similar": [("s3", 0.4, T)], "former_trace": [], "component": [], "error": []}),
        make_row("v2", 0, "t4", 1, False, error_fingerprints=ERR, used=["s1"], retrieved={
            "similar": [("s1", 0.95, T)], "former_trace": [], "component": [("c1", 0.5, F)],
            "error": []}),
        make_row("v2", 0, "t5", 1, False, error_fingerprints=ERR, retrieved={"former_trace": []}),
        make_row("v2", 0, "t5", 2, False, error_fingerprints=ERR, retrieved={
            "former_trace": [("tr5a", 1.0, F)]}),
        make_row("v2", 0, "t5", 3, False, error_fingerprints=ERR, retrieved={
            "former_trace": [("tr5a", 1.0, T), ("tr5b", 1.0, F)]}),
        make_row("v2", 0, "t6", 1, True, used=["s9"], retrieved={"similar": [("s9", 0.99)]}),
    ]  # fmt: skip
    return pd.DataFrame(rows)


def _counts(out: pd.DataFrame, kind: str) -> list[int]:
    cols = ["n_queries", "n_could", "n_returned", "n_eligible", "n_hits"]
    return [int(x) for x in out.loc[kind, cols].to_numpy()]


def test_calibrated_hit_rate_definitions_by_hand() -> None:
    out = calibrated_hit_rate(_log()).set_index("query_kind")
    assert list(out.index) == ["similar", "former_trace", "component", "error"]
    assert out["threshold"].to_dict() == dict(RETURN_THRESHOLDS)
    # similar: 7 queries; scores .62 .62 .91 .91 .4 .95 .99 -> 6 returned >= 0.5; t6 is not
    # judged; relevant: t1 (x2), t3, t4 -> 4 hits of 6 (t2's 0.91 is returned, not a hit)
    assert _counts(out, "similar") == [7, 7, 6, 6, 4]
    assert out.loc["similar", "hit_rate"] == pytest.approx(4 / 6)
    assert out.loc["similar", "returned_rate"] == pytest.approx(6 / 7)
    # former traces: could return something relevant only from attempt 3 after an error (t5);
    # t1's and t2's attempt-2 traces are their last failures; t5's earlier same-cause trace hits
    assert _counts(out, "former_trace") == [9, 1, 1, 1, 1]
    # component: shares .25 .25 .75 .75 (none) .5 -> 3 returned >= 0.5; relevant: t2 (x2)
    assert _counts(out, "component") == [6, 6, 3, 6, 2]
    # error: could only after an attempt that failed with a fingerprint: t1 at attempt 2 (t2's
    # first failure had none); the exact fix is relevant. t2's 0.8 (irrelevant) cannot count.
    assert _counts(out, "error") == [6, 1, 1, 1, 1]
    assert out.loc["error", "hit_rate"] == 1.0
    # item precision: similar 4 relevant of 6 eligible items; component 2 of 5 (t3 returned none)
    assert out.loc["similar", "item_precision"] == pytest.approx(4 / 6)
    assert out.loc["component", "item_precision"] == pytest.approx(2 / 5)
    # a score threshold override changes only "returned", never hits; unknown kinds are refused
    strict = calibrated_hit_rate(_log(), thresholds={"similar": 0.92}).set_index("query_kind")
    assert _counts(strict, "similar") == [7, 7, 2, 6, 4]
    assert strict.loc["component", "n_returned"] == 3
    with pytest.raises(InvalidInputError, match="'simlar'"):
        calibrated_hit_rate(_log(), thresholds={"simlar": 0.5})


def test_returning_something_is_not_a_hit() -> None:
    """Every former-trace and similar query that could return something did; hits are fewer:
    the task's own last failure and high-scoring irrelevant items do not count."""
    out = calibrated_hit_rate(_log()).set_index("query_kind")
    sim = out.loc["similar"]
    assert sim["n_returned"] > sim["n_hits"]
    rows = [make_row("v2", 0, "t", a, False, error_fingerprints=ERR,
                     retrieved={"former_trace": [(f"tr{a - 1}", 1.0, False)] if a > 1 else []})
            for a in (1, 2, 3)]  # fmt: skip
    own = calibrated_hit_rate(pd.DataFrame(rows)).set_index("query_kind")
    assert _counts(own, "former_trace") == [3, 1, 1, 1, 0]


def test_success_linked_by_hand() -> None:
    out = success_linked(_log(), n_boot=200).set_index("query_kind")
    sim = out.loc["similar"]
    # eligible: t1a1 F, t1a2 T, t3 T, t4 F hit -> 2/4; t2a1 F, t2a2 F missed -> 0/2 (t6 unjudged)
    assert (sim["n_with"], sim["success_with"]) == (4, 0.5)
    assert (sim["n_without"], sim["success_without"]) == (2, 0.0)
    assert sim["difference"] == pytest.approx(0.5)
    assert sim["ci_low"] <= 0.5 <= sim["ci_high"]
    # used: s2 (t2a2 F), s3 (t3 T), s1 (t4 F) -> 1/3; not used t1a1 F, t1a2 T, t2a1 F -> 1/3
    assert (sim["n_used"], sim["success_used"]) == (3, 1 / 3)
    assert (sim["n_not_used"], sim["success_not_used"]) == (3, 1 / 3)
    err = out.loc["error"]
    assert (err["n_with"], err["success_with"], err["n_without"]) == (1, 1.0, 0)
    assert np.isnan(err["success_without"]) and np.isnan(err["ci_low"])
    assert (err["n_used"], err["success_used"]) == (1, 1.0)


def test_harmful_knowledge_controls_for_task_difficulty() -> None:
    """ "bad" is used on easy tasks (solved by the arm's other attempts) and fails: flagged.
    "tough" is used on hard tasks that fail without it too: not flagged, though its users
    never succeed. "seen" is retrieved by every failure but never used: never flagged.
    Former traces are never candidates."""
    rows = []
    for i in range(4):
        rows += [
            make_row(
                "v2",
                s,
                f"e{i}",
                1,
                False,
                used=["bad"],
                retrieved={"similar": [("bad", 0.9, True), ("seen", 0.8, True)]},
            )
            for s in (0, 1)
        ]
        rows += [make_row("v2", s, f"e{i}", 2, True, used=["ok"]) for s in (0, 1)]
        rows += [make_row("v2", 2, f"e{i}", 1, True)]
        rows += [make_row("v2", s, f"h{i}", a, False, used=["tough" if a == 1 else f"tr{s}"],
                          retrieved={"former_trace": [(f"tr{s}", 1.0, False)],
                                     "similar": [("seen", 0.9, True)]})
                 for s in (0, 1, 2) for a in (1, 2)]  # fmt: skip
    out = harmful_knowledge(pd.DataFrame(rows))
    # each easy task: 5 attempts, 3 successes, "bad" used twice, both failed:
    # C(3,0)C(2,2)/C(5,2) = 1/10 per task -> 1e-4 over 4 tasks
    assert out[["arm", "item_id", "n_used", "n_success"]].values.tolist() == [["v2", "bad", 8, 0]]
    assert out["p_value"].tolist() == [pytest.approx(1e-4)]
    assert out["expected_rate"].tolist() == [pytest.approx(3 / 5)]
    # with no_knowledge as reference, its attempts join each task's comparison
    ref = [make_row("no_knowledge", s, f"h{i}", 1, True) for i in range(4) for s in (0, 1, 2)]
    with_ref = harmful_knowledge(pd.DataFrame(rows + ref), reference_arm="no_knowledge")
    # the "hard" tasks are solved by the reference arm: now "tough" fails where others succeed,
    # C(6,3)/C(9,3) = 5/21 per task
    assert set(with_ref["item_id"]) == {"bad", "tough"}
    tough = with_ref.set_index("item_id").loc["tough"]
    assert tough["p_value"] == pytest.approx((5 / 21) ** 4)
    assert "no_knowledge" not in set(with_ref["arm"])
    with pytest.raises(InvalidInputError, match="reference arm 'nk'"):
        harmful_knowledge(pd.DataFrame(rows), reference_arm="nk")


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
