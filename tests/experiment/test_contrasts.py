"""Paired contrasts on hand-built results tables with answers worked out by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment import contrasts, default_pairs
from costeer_lab.testing import make_row


def _table(plan: dict[tuple[str, int], str], stage: str = "") -> pd.DataFrame:
    """``plan[(arm, seed)]`` is a string of 0/1, one final outcome per task t0, t1, …"""
    rows = []
    for (arm, seed), outcomes in plan.items():
        for i, y in enumerate(outcomes):
            task = f"{stage}t{i}"
            rows.append({**make_row(arm, seed, task, 1, y == "1"), "stage": stage})
    return pd.DataFrame(rows)


# rag_v2 vs no_knowledge, 2 seeds x 6 tasks:
#   seed 0: v2 110110, nk 100100 -> diffs 0 1 0 0 1 0
#   seed 1: v2 111100, nk 101000 -> diffs 0 1 0 1 0 0
# difference = 4 / 12; arm_only 4, reference_only 0
PLAN = {
    ("no_knowledge", 0): "100100",
    ("no_knowledge", 1): "101000",
    ("rag_v2", 0): "110110",
    ("rag_v2", 1): "111100",
}


def test_difference_and_discordant_counts_by_hand() -> None:
    out = contrasts(_table(PLAN), n_boot=2000)
    assert out[["arm", "reference"]].values.tolist() == [["rag_v2", "no_knowledge"]]
    row = out.iloc[0]
    assert row["difference"] == pytest.approx(4 / 12)
    assert row["arm_success"] == pytest.approx(8 / 12)
    assert row["reference_success"] == pytest.approx(4 / 12)
    assert (row["n_tasks"], row["n_seeds"], row["n_pairs"]) == (6, 2, 12)
    assert (row["arm_only"], row["reference_only"]) == (4, 0)
    assert row["lo"] <= row["difference"] <= row["hi"]
    # task-level differences are 0, 1, 0, .5, .5, 0: a resample of the 6 tasks has mean 0 with
    # probability (1/2)^6 = 1.6 % and mean 1/12 with 6 * (1/3) * (1/2)^5 = 6.25 %, so the
    # 2.5 % quantile is 1/12
    assert row["lo"] == pytest.approx(1 / 12)
    assert row["hi"] > 0.5


def test_identical_arms_give_zero_and_a_zero_width_interval() -> None:
    plan = {("rag_v2", 0): "1010", ("rag_v2_no_error", 0): "1010"}
    row = contrasts(_table(plan), n_boot=500).iloc[0]
    assert (row["arm"], row["reference"]) == ("rag_v2_no_error", "rag_v2")
    assert (row["difference"], row["lo"], row["hi"]) == (0.0, 0.0, 0.0)
    assert (row["arm_only"], row["reference_only"]) == (0, 0)


def test_fewer_tasks_give_wider_intervals() -> None:
    # the same per-task pattern repeated: 4 tasks vs 40 tasks
    small = {("rag_v2", 0): "1100", ("no_knowledge", 0): "1000"}
    large = {k: v * 10 for k, v in small.items()}
    a = contrasts(_table(small), n_boot=4000).iloc[0]
    b = contrasts(_table(large), n_boot=4000).iloc[0]
    assert a["difference"] == b["difference"] == pytest.approx(0.25)
    assert a["hi"] - a["lo"] > 2 * (b["hi"] - b["lo"]) > 0


def test_pairs_are_per_stage_and_only_shared_seed_tasks() -> None:
    learn = _table({("rag_v2", 0): "11", ("no_knowledge", 0): "01"}, stage="learn")
    transfer = _table({("rag_v2", 0): "0", ("no_knowledge", 0): "1"}, stage="transfer")
    extra = _table({("rag_v2", 1): "11"}, stage="learn")  # seed 1 of the arm only: unpaired
    out = contrasts(pd.concat([learn, transfer, extra]), n_boot=200)
    assert out[["stage", "difference", "n_pairs"]].values.tolist() == [
        ["learn", 0.5, 2],
        ["transfer", -1.0, 1],
    ]
    only = contrasts(pd.concat([learn, transfer]), stage="transfer", n_boot=200)
    assert only["stage"].tolist() == ["transfer"]


def test_default_pairs_from_names_and_from_spec_kinds() -> None:
    arms = ["no_knowledge", "rag_v1", "rag_v2", "rag_v2_no_error", "rag_v2_demote", "memory"]
    assert default_pairs(arms) == [
        ("rag_v2", "no_knowledge"),
        ("rag_v2", "rag_v1"),
        ("rag_v2_no_error", "rag_v2"),
        ("rag_v2_demote", "rag_v2"),
    ]
    kinds = {"base": "none", "old": "v1", "full": "v2", "abl": "v2", "mem": "memory"}
    assert default_pairs(list(kinds), kinds) == [
        ("full", "base"),
        ("full", "old"),
        ("abl", "full"),
    ]
    assert default_pairs(["no_knowledge", "rag_v1"]) == []


def test_unknown_arm_or_stage_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="'nope'"):
        contrasts(_table(PLAN), [("nope", "rag_v2")])
    with pytest.raises(InvalidInputError, match="stage 'x'"):
        contrasts(_table(PLAN), stage="x")
