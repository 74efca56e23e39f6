"""The metrics' tables keep their documented columns (in order), a fresh 0..n-1 index and
their defaults, also for empty results; the unpaired lift bootstrap has the right sign.

Written against surviving mutants of ``make mutation`` (docs/testing.md).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment import (
    attempts_to_success,
    first_try_success,
    kb_growth,
    success_curve,
    success_lift,
    task_outcomes,
)
from costeer_lab.testing import example_results, make_row, synthetic_results

COLUMNS: dict[Callable[..., pd.DataFrame], list[str]] = {
    task_outcomes: ["arm", "seed", "task_id", "solved_at", "n_attempts"],
    success_curve: [
        *("arm", "attempt", "success_rate", "ci_low", "ci_high", "n_seeds", "n_tasks"),
        "resampled",
    ],
    first_try_success: ["arm", "first_try_success", "n_seeds"],
    attempts_to_success: ["arm", "mean_attempts", "median_attempts", "n_solved", "n_never_solved"],
    kb_growth: [
        *("arm", "stage", "attempt", "step"),
        *("kb_nodes", "kb_nodes_min", "kb_nodes_max", "n_seeds"),
    ],
    success_lift: [
        *("arm", "baseline", "n_pairs", "arm_success", "baseline_success", "lift"),
        *("ci_low", "ci_high", "resampled"),
    ],
}


@pytest.mark.parametrize("metric", list(COLUMNS), ids=lambda f: f.__name__)
def test_columns_in_order_and_a_fresh_index(metric: Callable[..., pd.DataFrame]) -> None:
    r = pd.concat([example_results(), example_results().assign(seed=1)], ignore_index=True)
    out = metric(r)
    assert list(out.columns) == COLUMNS[metric]
    assert out.index.equals(pd.RangeIndex(len(out))) and len(out) > 0
    if metric is not success_lift:
        empty = metric(example_results().iloc[:0])
        assert list(empty.columns) == COLUMNS[metric] and len(empty) == 0


def test_defaults_of_success_lift_and_curve() -> None:
    r = pd.concat([example_results(), example_results().assign(seed=1)], ignore_index=True)
    assert success_lift(r).equals(success_lift(r, baseline="no_knowledge", n_boot=1000, seed=0))
    assert success_curve(r).equals(success_curve(r, n_boot=1000, ci=0.95, seed=0))


def _row(arm: str, seed: int, task: str, attempt: int, success: bool) -> dict[str, object]:
    return make_row(arm=arm, seed=seed, task_id=task, attempt=attempt, success=success)


def test_unpaired_single_seed_lift_has_the_right_sign_and_interval() -> None:
    """One shared seed, different task sets: arm and baseline are resampled independently."""
    rows = [_row("rag", 0, f"t{i}", 1, True) for i in range(6)]  # 6 of 6 solved
    rows += [_row("no_knowledge", 0, f"u{i}", 1, i < 2) for i in range(4)]  # 2 of 4 solved
    out = success_lift(pd.DataFrame(rows), n_boot=400)
    row = out.iloc[0]
    assert (row["arm"], row["n_pairs"], row["resampled"]) == ("rag", 1, "tasks")
    assert (row["arm_success"], row["baseline_success"], row["lift"]) == (1.0, 0.5, 0.5)
    # the baseline's 4 tasks resampled alone: none solved in (1/2)^4 of the draws -> lift 1
    assert (row["ci_low"], row["ci_high"]) == (0.0, 1.0)


def test_paired_single_seed_lift() -> None:
    rows = [_row("rag", 0, f"t{i}", 1, True) for i in range(4)]
    rows += [_row("no_knowledge", 0, f"t{i}", 1, i == 0) for i in range(4)]
    row = success_lift(pd.DataFrame(rows), n_boot=400).iloc[0]
    assert (row["lift"], row["ci_low"], row["ci_high"]) == (0.75, 0.25, 1.0)


def test_arms_without_a_shared_seed_get_nan() -> None:
    rows = [_row("rag", 1, "t", 1, True), _row("no_knowledge", 0, "t", 1, False)]
    row = success_lift(pd.DataFrame(rows)).iloc[0]
    assert row["n_pairs"] == 0 and row["resampled"] == "tasks"
    assert all(np.isnan(row[c]) for c in ("arm_success", "baseline_success", "lift", "ci_low"))
    assert np.isnan(row["ci_high"])


def _rounded(df: pd.DataFrame, cols: list[str]) -> list[tuple[float, ...]]:
    return [tuple(round(float(x), 6) for x in row) for row in df[cols].to_numpy()]


def test_bootstrap_intervals_are_pinned() -> None:
    """The seed bootstrap (1000 draws, seeded per metric and arm) gives these exact intervals:
    a change of the seeding, the number of draws or the percentile rule shows up here."""
    r = synthetic_results(n_seeds=6, n_tasks=12, seed=2)
    assert _rounded(success_curve(r, bootstrap="seeds"), ["ci_low", "ci_high"]) == [
        (0.236111, 0.430556), (0.361111, 0.569444), (0.541667, 0.819444), (0.680556, 0.847222),
        (0.305556, 0.444444), (0.458333, 0.722222), (0.722222, 0.902778), (0.847222, 0.986111),
    ]  # fmt: skip
    assert _rounded(success_lift(r, bootstrap="seeds"), ["lift", "ci_low", "ci_high"]) == [
        (0.166667, 0.111111, 0.222222)
    ]
    one_seed = synthetic_results(n_seeds=1, n_tasks=12, seed=2)
    assert _rounded(success_lift(one_seed), ["lift", "ci_low", "ci_high"]) == [
        (0.0, -0.416667, 0.416667)
    ]


def test_bootstrap_arguments_are_checked() -> None:
    r = synthetic_results(n_seeds=2, n_tasks=3)
    assert len(success_curve(r, n_boot=1)) > 0  # one draw is allowed
    for ci in (0.0, 1.0):
        with pytest.raises(InvalidInputError, match=r"ci must be in \(0, 1\)"):
            success_curve(r, ci=ci)
    with pytest.raises(InvalidInputError, match="n_boot must be a positive int"):
        success_curve(r, n_boot=0)
