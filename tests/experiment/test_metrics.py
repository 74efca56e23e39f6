"""Metrics on the hand-made table of _results_tables.py; expected values worked out by hand."""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment import (
    arm_differences,
    attempts_to_success,
    first_try_success,
    hit_rate,
    kb_growth,
    knowledge_usage,
    retrieval_success,
    success_curve,
    success_lift,
    summary_table,
    task_outcomes,
)
from costeer_lab.experiment._retrieval_metrics import query_table
from costeer_lab.testing import make_row

from ._results_tables import KB, NK, SOLO, hand_table


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return hand_table()


def _by_arm(df: pd.DataFrame, col: str) -> dict[str, list[Any]]:
    return {str(a): g[col].tolist() for a, g in df.groupby("arm")}


def test_task_outcomes(table: pd.DataFrame) -> None:
    out = task_outcomes(table)
    kb0 = out[(out["arm"] == KB) & (out["seed"] == 0)]
    assert kb0["task_id"].tolist() == ["a", "b", "c", "d"]
    assert kb0["solved_at"].tolist() == [1.0, 2.0, 3.0, 1.0]
    assert kb0["n_attempts"].tolist() == [1, 2, 3, 1]
    assert out[out["arm"] == SOLO]["solved_at"].isna().all()
    assert len(out) == 4 + 4 + 4 + 4 + 2


def test_success_curve_point_estimates(table: pd.DataFrame) -> None:
    curve = success_curve(table, n_boot=200, seed=1, bootstrap="seeds")
    assert _by_arm(curve, "attempt") == {NK: [1, 2, 3], KB: [1, 2, 3], SOLO: [1, 2]}
    assert _by_arm(curve, "success_rate") == {
        NK: [3 / 8, 1 / 2, 3 / 4],
        KB: [1 / 2, 3 / 4, 7 / 8],
        SOLO: [0.0, 0.0],
    }
    assert _by_arm(curve, "n_seeds") == {NK: [2] * 3, KB: [2] * 3, SOLO: [1] * 2}
    assert _by_arm(curve, "resampled")[SOLO] == ["tasks", "tasks"]
    assert _by_arm(curve, "resampled")[KB] == ["seeds"] * 3


def test_success_curve_two_seed_ci_is_the_seed_range(table: pd.DataFrame) -> None:
    # with two seeds the resampled means take the values x, (x+y)/2, y with probabilities
    # 1/4, 1/2, 1/4, so the 2.5% and 97.5% quantiles are exactly min and max of the seeds.
    curve = success_curve(table, n_boot=1000, ci=0.95, seed=3, bootstrap="seeds")
    assert _by_arm(curve, "ci_low")[NK] == [1 / 4, 1 / 2, 3 / 4]
    assert _by_arm(curve, "ci_high")[NK] == [1 / 2, 1 / 2, 3 / 4]
    assert _by_arm(curve, "ci_low")[KB] == [1 / 2, 3 / 4, 3 / 4]
    assert _by_arm(curve, "ci_high")[KB] == [1 / 2, 3 / 4, 1.0]


def test_success_curve_ci_contains_point_and_is_deterministic(table: pd.DataFrame) -> None:
    a = success_curve(table, n_boot=300, seed=5)
    b = success_curve(table, n_boot=300, seed=5)
    pd.testing.assert_frame_equal(a, b)
    assert (a["ci_low"] <= a["success_rate"]).all()
    assert (a["success_rate"] <= a["ci_high"]).all()
    solo = a[a["arm"] == SOLO]
    assert solo["ci_low"].tolist() == [0.0, 0.0] and solo["ci_high"].tolist() == [0.0, 0.0]


def test_success_curve_does_not_depend_on_other_arms(table: pd.DataFrame) -> None:
    full = success_curve(table, n_boot=200, seed=2)
    only = success_curve(table[table["arm"] == NK], n_boot=200, seed=2)
    pd.testing.assert_frame_equal(full[full["arm"] == NK].reset_index(drop=True), only)


def test_single_seed_task_bootstrap_varies_and_brackets() -> None:
    rows = [make_row("x", 0, f"t{i}", 1, i < 3) for i in range(8)]
    rows += [make_row("x", 0, f"t{i}", 2, i == 3) for i in range(3, 8)]
    curve = success_curve(pd.DataFrame(rows), n_boot=2000, seed=0)
    assert curve["success_rate"].tolist() == [3 / 8, 4 / 8]
    assert curve["resampled"].tolist() == ["tasks", "tasks"]
    low, high = curve["ci_low"].tolist(), curve["ci_high"].tolist()
    assert 0.0 <= low[0] < 3 / 8 < high[0] <= 1.0
    assert 0.0 <= low[1] < 4 / 8 < high[1] <= 1.0


def test_bootstrap_parameters_are_checked(table: pd.DataFrame) -> None:
    with pytest.raises(InvalidInputError, match="n_boot"):
        success_curve(table, n_boot=0)
    with pytest.raises(InvalidInputError, match="ci must be"):
        success_curve(table, ci=1.5)


def test_first_try_success(table: pd.DataFrame) -> None:
    out = first_try_success(table).set_index("arm")
    assert out["first_try_success"].to_dict() == {KB: 1 / 2, NK: 3 / 8, SOLO: 0.0}
    assert out["n_seeds"].to_dict() == {KB: 2, NK: 2, SOLO: 1}


def test_attempts_to_success(table: pd.DataFrame) -> None:
    out = attempts_to_success(table).set_index("arm")
    assert out.loc[NK, "mean_attempts"] == 11 / 6
    assert out.loc[NK, "median_attempts"] == 1.5
    assert (out.loc[NK, "n_solved"], out.loc[NK, "n_never_solved"]) == (6, 2)
    assert out.loc[KB, "mean_attempts"] == 11 / 7
    assert out.loc[KB, "median_attempts"] == 1.0
    assert (out.loc[KB, "n_solved"], out.loc[KB, "n_never_solved"]) == (7, 1)
    assert math.isnan(cast(float, out.loc[SOLO, "mean_attempts"]))
    assert (out.loc[SOLO, "n_solved"], out.loc[SOLO, "n_never_solved"]) == (0, 2)


def test_hit_rate(table: pd.DataFrame) -> None:
    out = hit_rate(table, threshold=0.5)
    assert out["arm"].tolist() == [KB, KB]  # arms that never queried have no rows
    assert out["query_kind"].tolist() == ["similar", "error"]
    assert out["n_queries"].tolist() == [11, 4]
    # returned (best score >= 0.5) is not a hit: s0 b1 hit with a weak relevant k2 (.4), s0 c2
    # returned an irrelevant k1 (.55), s1 c1 hit with a relevant k3 scoring .1
    assert out["n_returned"].tolist() == [8, 2]
    assert out["returned_rate"].tolist() == [8 / 11, 2 / 4]
    assert out["n_judged"].tolist() == [11, 4]
    assert out["n_hits"].tolist() == [9, 2]
    assert out["hit_rate"].tolist() == [9 / 11, 2 / 4]
    stricter = hit_rate(table, threshold=0.55)  # k2 at exactly 0.5 is no longer returned
    assert stricter["n_returned"].tolist() == [7, 2]
    assert stricter["n_hits"].tolist() == [9, 2]  # relevance does not depend on the threshold
    # a table without relevance (written before it was recorded): hit rate unknown, not 0
    old = table.assign(retrieved=table["retrieved"].str.replace(', "relevant": true', ""))
    old_out = hit_rate(
        old.assign(retrieved=old["retrieved"].str.replace(', "relevant": false', ""))
    )
    assert old_out["n_judged"].tolist() == [1, 1]  # the empty queries are judged misses
    assert old_out["n_hits"].tolist() == [0, 0] and old_out["n_returned"].tolist() == [8, 2]


def test_hit_rate_empty_retrieved_everywhere(table: pd.DataFrame) -> None:
    out = hit_rate(table[table["arm"] == NK])
    assert out.empty and list(out.columns) == [
        "arm", "query_kind", "n_queries", "n_returned", "returned_rate", "n_judged", "n_hits",
        "hit_rate",
    ]  # fmt: skip
    assert retrieval_success(table[table["arm"] == NK]).empty
    assert knowledge_usage(table[table["arm"] == NK]).empty


def test_query_table(table: pd.DataFrame) -> None:
    q = query_table(table)
    assert len(q) == 11 + 4
    c2 = q[(q["seed"] == 0) & (q["task_id"] == "c") & (q["attempt"] == 2)]
    assert c2["query_kind"].tolist() == ["similar", "error"]
    assert c2["n_items"].tolist() == [1, 0]
    assert c2["max_score"].iloc[0] == 0.55 and math.isnan(c2["max_score"].iloc[1])
    b1 = q[(q["seed"] == 0) & (q["task_id"] == "b") & (q["attempt"] == 1)]
    assert b1["ids"].tolist() == [("k2", "k3")]


def test_retrieval_success(table: pd.DataFrame) -> None:
    out = retrieval_success(table, threshold=0.5)
    assert out["arm"].tolist() == [KB]
    row = out.iloc[0]
    # hits: s0 a1 b1 b2 c3 d1, s1 a1 b1 c1 d1 d2 (7 succeeded); misses: s0 c1 c2, s1 c3
    assert (row["n_hit"], row["n_miss"]) == (10, 3)
    assert row["success_rate_hit"] == 7 / 10
    assert row["success_rate_miss"] == 0.0
    assert row["difference"] == 7 / 10


def test_knowledge_usage_used(table: pd.DataFrame) -> None:
    out = knowledge_usage(table, source="used")
    assert out["item_id"].tolist() == ["k1", "e1", "k2", "k4", "k9"]
    assert out["n_uses"].tolist() == [4, 1, 1, 1, 1]
    assert out["n_success"].tolist() == [3, 1, 1, 1, 1]
    assert out["success_when_used"].tolist() == [3 / 4, 1.0, 1.0, 1.0, 1.0]
    assert set(out["arm"]) == {KB}


def test_knowledge_usage_retrieved_and_both(table: pd.DataFrame) -> None:
    out = knowledge_usage(table, source="retrieved", by_arm=False)
    assert list(out.columns) == ["item_id", "n_uses", "n_success", "success_when_used"]
    assert out["item_id"].tolist() == ["k1", "k2", "e1", "k3", "e2", "k4"]
    assert out["n_uses"].tolist() == [5, 3, 2, 2, 1, 1]
    assert out["n_success"].tolist() == [3, 2, 2, 0, 0, 1]
    both = knowledge_usage(table, source="both", by_arm=False).set_index("item_id")
    # k1 retrieved and used in the same rows counts once per row; k9 only used
    assert both.loc["k1", "n_uses"] == 5
    assert both.loc["k9", "n_uses"] == 1 and both.loc["k9", "success_when_used"] == 1.0
    with pytest.raises(InvalidInputError, match="source"):
        knowledge_usage(table, source="bogus")  # type: ignore[arg-type]


def test_success_lift_paired_by_seed(table: pd.DataFrame) -> None:
    out = success_lift(table, baseline=NK, n_boot=1000, seed=0, bootstrap="seeds").set_index("arm")
    assert sorted(out.index) == [KB, SOLO]
    kb = out.loc[KB]
    assert (kb["n_pairs"], kb["resampled"]) == (2, "seeds")
    assert (kb["arm_success"], kb["baseline_success"], kb["lift"]) == (7 / 8, 3 / 4, 1 / 8)
    # per-seed differences 1/4 and 0: the interval is exactly [0, 1/4] (see the curve CI test)
    assert (kb["ci_low"], kb["ci_high"]) == (0.0, 1 / 4)
    solo = out.loc[SOLO]
    assert (solo["n_pairs"], solo["resampled"]) == (1, "tasks")
    assert solo["lift"] == -3 / 4
    assert solo["ci_low"] <= -3 / 4 <= solo["ci_high"]
    again = success_lift(table, baseline=NK, n_boot=1000, seed=0, bootstrap="seeds").set_index(
        "arm"
    )
    pd.testing.assert_frame_equal(out, again)


def test_success_lift_single_seed_paired_tasks() -> None:
    rows = [make_row("base", 0, t, 1, t in "ab") for t in "abcd"]
    rows += [make_row("new", 0, t, 1, t in "abc") for t in "abcd"]
    out = success_lift(pd.DataFrame(rows), baseline="base", n_boot=500, seed=4)
    assert out["lift"].tolist() == [1 / 4]
    # paired by task the per-task differences are (0, 0, 1, 0): every resample is >= 0
    assert 0.0 <= out["ci_low"].iloc[0] <= 1 / 4 <= out["ci_high"].iloc[0] <= 1.0


def test_success_lift_unknown_baseline(table: pd.DataFrame) -> None:
    with pytest.raises(InvalidInputError, match=r"no_knowlege.*did you mean 'no_knowledge'"):
        success_lift(table, baseline="no_knowlege")


def test_kb_growth(table: pd.DataFrame) -> None:
    out = kb_growth(table)
    assert _by_arm(out, "kb_nodes") == {NK: [0, 0, 0], KB: [10, 13, 14.5], SOLO: [3, 5]}
    assert _by_arm(out, "kb_nodes_min")[KB] == [10, 12, 13]
    assert _by_arm(out, "kb_nodes_max")[KB] == [10, 14, 16]


def test_kb_growth_carries_forward_a_seed_that_stopped_early() -> None:
    rows = [
        make_row("x", 0, "t", 1, False, kb_nodes=2),
        make_row("x", 0, "t", 2, True, kb_nodes=5),
        make_row("x", 1, "t", 1, True, kb_nodes=4),
    ]
    out = kb_growth(pd.DataFrame(rows))
    assert out["kb_nodes"].tolist() == [3.0, 4.5]
    assert out["n_seeds"].tolist() == [2, 2]


def test_summary_table(table: pd.DataFrame) -> None:
    s = summary_table(table, baseline=NK, n_boot=500).set_index("arm")
    assert s.loc[NK, "final_success"] == 3 / 4 and s.loc[KB, "final_success"] == 7 / 8
    assert s.loc[SOLO, "final_success"] == 0.0
    assert s.loc[KB, "first_try_success"] == 1 / 2
    assert s.loc[KB, "mean_attempts"] == 11 / 7 and s.loc[NK, "n_never_solved"] == 2
    assert s.loc[KB, "query_hit_rate"] == 10 / 15
    assert math.isnan(cast(float, s.loc[NK, "query_hit_rate"])) and math.isnan(
        cast(float, s.loc[SOLO, "query_hit_rate"])
    )
    assert s.loc[KB, "lift"] == 1 / 8 and math.isnan(cast(float, s.loc[NK, "lift"]))
    assert s.loc[KB, "final_kb_nodes"] == 14.5
    assert s.loc[NK, "prompt_tokens"] == 100 * 17  # 9 rows in seed 0, 8 in seed 1
    assert s.loc[KB, "n_tasks"] == 4 and s.loc[SOLO, "n_seeds"] == 1
    no_base = summary_table(table, baseline="absent", n_boot=50)
    assert no_base["lift"].isna().all()


def test_arm_differences_state_numbers(table: pd.DataFrame) -> None:
    lines = arm_differences(summary_table(table, baseline=NK, n_boot=1000), baseline=NK)
    assert lines[0].startswith("Reference arm: 'no_knowledge' (final success 75.0%")
    kb = next(line for line in lines if line.startswith("'kb'"))
    assert "87.5%" in kb and "+12.5 pp" in kb and "includes zero" in kb
    assert "paired lift over 2 seed(s)" in kb and "understates uncertainty" in kb
    solo = next(line for line in lines if line.startswith("'solo'"))
    assert "-75.0 pp" in solo


def test_empty_results_give_empty_tables(table: pd.DataFrame) -> None:
    empty = table.iloc[0:0]
    for fn in (task_outcomes, first_try_success, attempts_to_success, kb_growth, hit_rate):
        assert fn(empty).empty
    assert success_curve(empty, n_boot=10).empty
    assert summary_table(empty, n_boot=10).empty
    assert arm_differences(summary_table(empty, n_boot=10)) == ["No results: nothing to compare."]


def test_rows_order_does_not_matter(table: pd.DataFrame) -> None:
    shuffled = table.sample(frac=1.0, random_state=np.random.RandomState(11))
    pd.testing.assert_frame_equal(
        summary_table(table, baseline=NK, n_boot=200),
        summary_table(shuffled, baseline=NK, n_boot=200),
    )
