"""RD-Agent's factor benchmark table recomputed by hand from its formulas (issue 25), and the
project's own metrics under their own names, both leaving not-evaluated attempts out.

Fails before issue 25: there was no ``rdagent_metrics`` and the project's table was labelled as
RD-Agent's (``exec_success``, ``corr_max``, ...) and counted not-evaluated attempts as failures.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment import RDAGENT_METRICS, benchmark_metrics, rdagent_metrics

NAN = math.nan
FACTOR = {"F1": ("VP", "Easy"), "F2": ("VP", "Hard"), "F3": ("Fund", "Easy"),
          "F4": ("Fund", "Hard")}  # fmt: skip


def row(arm: str, seed: int, task: str, attempt: int, *, ok: bool = True,
        rr: float = NAN, ij: float = NAN, evr: float = NAN, corr: float = NAN,
        evaluated: bool = True, success: bool = False) -> dict[str, Any]:  # fmt: skip
    cat, diff = FACTOR[task]
    return {
        "arm": arm, "seed": seed, "task_id": task, "attempt": attempt, "success": success,
        "category": cat, "difficulty": diff, "evaluated": evaluated, "rd_run_ok": ok,
        "rd_row_ratio": rr, "rd_index_jaccard": ij, "rd_equal_value_ratio": evr,
        "rd_corr": corr, "ran": ok, "format_ok": ok and rr == 1.0,
        "equal_value_ratio": evr, "ic": corr,
        "infra_error": "" if evaluated else "the reference implementation failed",
    }  # fmt: skip


FAIL = {"ok": False}  # the code did not run: every measure missing
NOT_EVALUATED = {"ok": False, "evaluated": False}

ROWS = pd.DataFrame(
    [
        # F1: seed 0 solved at attempt 2 (attempt 1 is not the final implementation), seed 1 a
        # partial format and a NaN correlation, seed 2 a run failure
        row("a", 0, "F1", 1, rr=0.0, ij=0.0, evr=0.0, corr=-1.0),
        row("a", 0, "F1", 2, rr=1.0, ij=1.0, evr=1.0, corr=1.0, success=True),
        row("a", 1, "F1", 1, rr=0.5, ij=0.25, evr=0.25, corr=NAN),
        row("a", 2, "F1", 1, **FAIL),
        # F2: seed 1's final attempt was not evaluated (its evaluated first attempt is not the
        # final one and must not stand in); seed 0 has no index Jaccard (NaN -> 0 in format)
        row("a", 0, "F2", 1, rr=0.75, ij=NAN, evr=0.5, corr=-0.25),
        row("a", 1, "F2", 1, rr=1.0, ij=1.0, evr=1.0, corr=1.0),
        row("a", 1, "F2", 2, **NOT_EVALUATED),
        row("a", 2, "F2", 1, rr=1.0, ij=1.0, evr=NAN, corr=0.75),
        # F3: never evaluated: no factor row in any mean, three not-evaluated rounds
        *[row("a", s, "F3", 1, **NOT_EVALUATED) for s in (0, 1, 2)],
        # F4: two run failures, then equal values unknown (NaN)
        row("a", 0, "F4", 1, **FAIL),
        row("a", 1, "F4", 1, **FAIL),
        row("a", 2, "F4", 1, rr=1.0, ij=1.0, evr=NAN, corr=-0.5),
        # arm b: F1 perfect in every round, F4 failed
        *[
            row("b", s, "F1", 1, rr=1.0, ij=1.0, evr=1.0, corr=1.0, success=True)
            for s in (0, 1, 2)
        ],
        *[row("b", s, "F4", 1, **FAIL) for s in (0, 1, 2)],
    ]
)


def mean(values: list[float]) -> float:
    """pandas' mean: NaN skipped, NaN when nothing is left."""
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else NAN


def fmax(values: list[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return max(kept) if kept else NAN


def z(v: float) -> float:
    return 0.0 if math.isnan(v) else v


def by_hand(rounds: list[tuple[bool, float, float, float, float]]) -> dict[str, float]:
    """RD-Agent's six metrics of one factor from its evaluated rounds
    (run ok, row ratio, index Jaccard, equal-value ratio, corr)."""
    fmt = [(z(rr) + z(ij)) / 2 for _, rr, ij, _, _ in rounds]
    corr = [z(c) for *_, c in rounds]
    evr = [e for _, _, _, e, _ in rounds]
    return {
        "Avg Run SR": mean([1.0 if ok else 0.0 for ok, *_ in rounds]),
        "Avg Format SR": mean(fmt),
        "Avg Correlation": mean(corr),
        "Max Correlation": max(corr),
        "Max Accuracy": fmax(evr),
        "Avg Accuracy": mean([e * f for e, f in zip(evr, fmt, strict=True)]),
    }


R_FAIL = (False, NAN, NAN, NAN, NAN)
HAND = {
    "F1": by_hand([(True, 1.0, 1.0, 1.0, 1.0), (True, 0.5, 0.25, 0.25, NAN), R_FAIL]),
    "F2": by_hand([(True, 0.75, NAN, 0.5, -0.25), (True, 1.0, 1.0, NAN, 0.75)]),
    "F4": by_hand([R_FAIL, R_FAIL, (True, 1.0, 1.0, NAN, -0.5)]),
}


def check(table: pd.DataFrame, expected: dict[str, float]) -> None:
    for k in RDAGENT_METRICS:
        got, want = float(table[k].iloc[0]), expected[k]
        assert (math.isnan(got) and math.isnan(want)) or got == want, (k, got, want)


def test_the_hand_values_are_what_rdagent_formulas_give() -> None:
    # the formulas spelled out once more on F1, so the helper above is checked too
    assert HAND["F1"] == {
        "Avg Run SR": 2 / 3, "Avg Format SR": (1.0 + 0.375 + 0.0) / 3,
        "Avg Correlation": (1.0 + 0.0 + 0.0) / 3, "Max Correlation": 1.0,
        "Max Accuracy": 1.0, "Avg Accuracy": (1.0 + 0.25 * 0.375) / 2,
    }  # fmt: skip
    assert HAND["F2"]["Avg Format SR"] == (0.375 + 1.0) / 2
    assert HAND["F2"]["Avg Accuracy"] == 0.5 * 0.375  # the NaN round is skipped
    assert HAND["F4"]["Max Correlation"] == 0.0  # failures count 0, above the -0.5
    assert math.isnan(HAND["F4"]["Max Accuracy"])


def test_per_factor_table_matches_the_hand_computation() -> None:
    t = rdagent_metrics(ROWS, by="factor")
    a = t[t["arm"] == "a"].set_index("factor")
    assert list(a.index) == ["F1", "F2", "F3", "F4", "Average"]
    for factor, expected in HAND.items():
        check(a.loc[[factor]], expected)
    assert a["rounds"].tolist() == [3, 2, 0, 3, 8]
    assert a["not_evaluated"].tolist() == [0, 1, 3, 0, 4]
    assert a.loc["F3", list(RDAGENT_METRICS)].isna().all()  # excluded, not counted as 0
    average = {k: mean([z(HAND[f][k]) for f in ("F1", "F2", "F4")]) for k in RDAGENT_METRICS}
    check(a.loc[["Average"]], average)
    assert a.loc["Average", "category"] == "-"


def test_per_category_and_difficulty_tables_match_the_hand_computation() -> None:
    t = rdagent_metrics(ROWS, by="category")
    a = t[t["arm"] == "a"].set_index("category")
    assert list(a.index) == ["Fund", "VP", "Average"]
    check(a.loc[["VP"]], {k: mean([HAND["F1"][k], HAND["F2"][k]]) for k in RDAGENT_METRICS})
    check(a.loc[["Fund"]], HAND["F4"])  # F3 has no evaluated round: not in the mean
    assert a["factors"].tolist() == [1, 2, 3] and a["not_evaluated"].tolist() == [3, 1, 4]
    assert a["rounds"].tolist() == [3, 5, 8]
    d = rdagent_metrics(ROWS, by="difficulty")
    da = d[d["arm"] == "a"].set_index("difficulty")
    assert list(da.index) == ["Easy", "Hard", "Average"]
    check(da.loc[["Easy"]], HAND["F1"])
    check(da.loc[["Hard"]], {k: mean([HAND["F2"][k], HAND["F4"][k]]) for k in RDAGENT_METRICS})
    # Max Accuracy of Hard: F2's 0.5, F4's NaN skipped; in the Average, F4's NaN counts 0
    assert da["Max Accuracy"].to_dict()["Hard"] == 0.5
    assert da["Max Accuracy"].to_dict()["Average"] == (1.0 + 0.5 + 0.0) / 3
    b = t[t["arm"] == "b"].set_index("category")
    assert b.loc["VP", "Avg Correlation"] == 1.0 and b.loc["Fund", "Avg Run SR"] == 0.0
    assert b.loc["Average", "Avg Correlation"] == 0.5 and b.loc["Average", "not_evaluated"] == 0


def test_older_results_name_the_missing_columns() -> None:
    old = ROWS.drop(columns=["rd_corr", "rd_run_ok", "evaluated", "infra_error"])
    with pytest.raises(InvalidInputError, match=r"'rd_run_ok', 'rd_corr', 'evaluated'"):
        rdagent_metrics(old)
    with pytest.raises(InvalidInputError, match="expected 'category' or 'difficulty' or 'fa"):
        rdagent_metrics(ROWS, by="task")
    # results written before the evaluated flag: an empty infra_error means evaluated
    derived = rdagent_metrics(ROWS.drop(columns=["evaluated"]), by="category")
    pd.testing.assert_frame_equal(derived, rdagent_metrics(ROWS, by="category"))


def test_the_project_metrics_leave_not_evaluated_attempts_out() -> None:
    m = benchmark_metrics(ROWS).set_index(["arm", "category"])
    fund = m.loc[[("a", "Fund")]].iloc[0].to_dict()
    # F3's three not-evaluated attempts are left out, not counted as failures
    assert fund["attempts"] == 3 and fund["not_evaluated"] == 3
    assert fund["attempt_run_rate"] == 1 / 3 and fund["task_success"] == 0.0
    vp = m.loc[[("a", "VP")]].iloc[0].to_dict()
    assert vp["attempts"] == 7 and vp["not_evaluated"] == 1
    assert vp["attempt_run_rate"] == 6 / 7
    # every compared IC of the evaluated attempts: F1 -1, 1; F2 -0.25, 1, 0.75
    assert vp["ic_mean_compared"] == (-1.0 + 1.0 - 0.25 + 1.0 + 0.75) / 5
    assert vp["ic_max_compared"] == 1.0 and vp["attempt_accuracy@0.5"] == 3 / 7
    assert vp["task_success"] == 1 / 6  # (seed, task) pairs with an evaluated attempt
    assert set(m.columns) == {
        "attempts", "not_evaluated", "attempt_run_rate", "attempt_format_rate",
        "ic_mean_compared", "ic_max_compared", "attempt_accuracy@0.5",
        "attempt_accuracy@0.9", "attempt_accuracy@0.99", "task_success",
    }  # fmt: skip
