"""RD-Agent's per-implementation measures (issue 25): recomputed by hand on small frames, and
recorded by the evaluator in the trusted details only (never in a text a coder reads).

Each test failed before the measures existed (no ``rdagent_measures``, no ``rd_*`` details).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from costeer_lab.evaluate import FactorEvaluator, rdagent_measures
from costeer_lab.records import Task, Workspace

INF = np.inf


def idx(pairs: list[tuple[str, str]]) -> pd.MultiIndex:
    return pd.MultiIndex.from_tuples(
        [(pd.Timestamp(d), i) for d, i in pairs], names=["datetime", "instrument"]
    )


D1, D2, D3 = "2021-01-04", "2021-01-05", "2021-01-06"
TRUTH = pd.Series(
    [1.0, 2.0, 3.0, 4.0, 4.0, 6.0, 1.0, 2.0, 3.0],
    idx([(d, i) for d in (D1, D2, D3) for i in ("A", "B", "C")]),
    name="truth",
)


def pearson(x: list[float], y: list[float]) -> float:
    """The textbook Pearson correlation, by hand."""
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def test_a_candidate_with_inf_a_missing_row_and_an_extra_row() -> None:
    # D1: C is +inf; D2: exact on A, B, C; D3: C missing, B doubled, D extra (not in the truth)
    gen = pd.Series(
        [1.0, 2.0, INF, 4.0, 4.0, 6.0, 1.0, 4.0, 9.0],
        idx([(D1, "A"), (D1, "B"), (D1, "C"), (D2, "A"), (D2, "B"), (D2, "C"),
             (D3, "A"), (D3, "B"), (D3, "D")]),
    )  # fmt: skip
    m = rdagent_measures(gen, TRUTH)
    assert m["rd_row_ratio"] == 9 / 9
    # shared: D1 A B C, D2 A B C, D3 A B = 8; union adds D3 C and D3 D = 10
    assert m["rd_index_jaccard"] == 8 / 10
    # |gen - gt| < 1e-6 over the 10 aligned cells: D1 A B, D2 A B C, D3 A = 6 (inf - 3, the
    # doubled B and the two one-sided rows are not equal)
    assert m["rd_equal_value_ratio"] == 6 / 10
    # per date: D1 has an inf -> NaN, dropped; D2 = 1; D3 pairs (A, B) only
    d3 = pearson([1.0, 4.0], [1.0, 2.0])
    assert m["rd_corr"] == pytest.approx((1.0 + d3) / 2, abs=1e-15)


def test_the_truth_against_itself_follows_pandas_semantics() -> None:
    truth = TRUTH.copy()
    truth.iloc[0] = INF  # D1 A
    truth.iloc[4] = np.nan  # D2 B
    m = rdagent_measures(truth, truth)
    assert m["rd_row_ratio"] == 1.0 and m["rd_index_jaccard"] == 1.0
    # inf - inf is NaN and NaN is never equal: 7 of 9, not 1.0 as the project's ratio says
    assert m["rd_equal_value_ratio"] == 7 / 9
    # D1 (an inf) -> NaN, dropped; D2 pairs (A, C) -> 1; D3 -> 1
    assert m["rd_corr"] == pytest.approx(1.0, abs=1e-15)
    flat = pd.Series(1.0, TRUTH.index)  # every date constant: no correlation defined
    assert math.isnan(rdagent_measures(flat, flat)["rd_corr"])
    assert rdagent_measures(flat, flat)["rd_equal_value_ratio"] == 1.0


def test_a_frame_and_its_labels() -> None:
    two = pd.DataFrame({"a": TRUTH, "b": TRUTH})
    m = rdagent_measures(two, TRUTH)  # several columns: the value measures are not defined
    assert m["rd_row_ratio"] == 1.0 and m["rd_index_jaccard"] == 1.0
    assert math.isnan(m["rd_equal_value_ratio"]) and math.isnan(m["rd_corr"])
    named = rdagent_measures(TRUTH.to_frame("some_name") * 2, TRUTH)
    assert named["rd_equal_value_ratio"] == 0.0 and named["rd_corr"] == pytest.approx(1.0)
    swapped = TRUTH.reorder_levels([1, 0])  # (instrument, datetime): no tuple in common,
    m = rdagent_measures(swapped, TRUTH)  # but pandas' subtraction aligns the level names,
    assert m["rd_index_jaccard"] == 0.0 and m["rd_equal_value_ratio"] == 1.0
    assert math.isnan(m["rd_corr"])  # and the concatenation loses them: no datetime level
    flat_index = TRUTH.reset_index(drop=True)  # the index was dropped
    m = rdagent_measures(flat_index, TRUTH)
    assert m["rd_row_ratio"] == 1.0 and m["rd_index_jaccard"] == 0.0
    assert math.isnan(m["rd_corr"])  # no datetime level: RD-Agent's evaluator raises
    dup = pd.concat([TRUTH, TRUTH.iloc[:1]])  # a duplicated row on one side: pandas pairs
    m = rdagent_measures(dup, TRUTH)  # both copies with the truth's row
    assert m["rd_row_ratio"] == 9 / 10 and m["rd_index_jaccard"] == 1.0
    assert m["rd_equal_value_ratio"] == 1.0 and m["rd_corr"] == pytest.approx(1.0)
    empty = TRUTH.iloc[:0]
    assert all(math.isnan(v) for v in rdagent_measures(empty, empty).values())


def test_jaccard_is_the_set_formula() -> None:
    gen = pd.concat([TRUTH.iloc[2:], TRUTH.iloc[2:3]])  # a duplicate too
    expected = len(set(gen.index) & set(TRUTH.index)) / len(set(gen.index) | set(TRUTH.index))
    assert rdagent_measures(gen, TRUTH)["rd_index_jaccard"] == expected == 7 / 9


# -- the evaluator ----------------------------------------------------------------------------
WRITE = """\
import numpy as np, pandas as pd
idx = pd.MultiIndex.from_product([pd.to_datetime(["2021-01-04", "2021-01-05", "2021-01-06"]),
                                  ["A", "B", "C"]], names=["datetime", "instrument"])
s = pd.Series([1.0, 2.0, 3.0, 4.0, 4.0, 6.0, 1.0, 2.0, 3.0], idx)
{edit}
s.to_frame("f").to_parquet("result.parquet")
"""


@pytest.fixture
def evaluator(tmp_path: Path) -> FactorEvaluator:
    (tmp_path / "in.txt").write_text("unused")
    return FactorEvaluator({"in.txt": tmp_path / "in.txt"}, runner="inprocess")


def run(ev: FactorEvaluator, edit: str, gt_edit: str = "") -> dict[str, object]:
    task = Task(id="t", name="t", description="d")
    gt = Workspace({"main.py": WRITE.format(edit=gt_edit)})
    fb = ev.evaluate(task, Workspace({"main.py": WRITE.format(edit=edit)}), gt)
    for key in ("rd_row_ratio", "rd_index_jaccard", "rd_equal_value_ratio", "rd_corr"):
        assert key not in str(fb) and "rd_" not in (fb.return_checking or "")
    return dict(fb.details)


def test_the_evaluator_records_the_measures_in_the_details(evaluator: FactorEvaluator) -> None:
    d = run(evaluator, "s = s.drop(s.index[8]); s.iloc[0] = np.inf", gt_edit="s.iloc[3] = np.inf")
    assert d["rd_run_ok"] is True
    assert d["rd_row_ratio"] == 8 / 9 and d["rd_index_jaccard"] == 8 / 9
    # equal: all but D1 A (inf vs 1), D2 A (4 vs inf) and the missing D3 C -> 6 of 9
    assert d["rd_equal_value_ratio"] == 6 / 9
    # D1 and D2 hold an inf each -> NaN, dropped; D3: (1, 2) vs (1, 2) -> 1
    assert d["rd_corr"] == pytest.approx(1.0, abs=1e-15)
    same = run(evaluator, "")
    assert same["rd_equal_value_ratio"] == 1.0 and same["rd_corr"] == pytest.approx(1.0)


def test_no_measures_when_the_run_failed_or_was_not_evaluated(
    evaluator: FactorEvaluator,
) -> None:
    crashed = run(evaluator, "raise SystemExit(3)")
    assert "rd_corr" not in crashed and not crashed.get("rd_run_ok", False)
    silent = run(evaluator, "import sys; sys.exit(0)")  # ran, wrote nothing
    assert "rd_corr" not in silent and not silent.get("rd_run_ok", False)
    reference_fails = run(evaluator, "", gt_edit="raise SystemExit(4)")
    assert "infrastructure_error" in reference_fails and "rd_corr" not in reference_fails
    undefined = run(evaluator, "s = s.reset_index(drop=True)")  # the index was dropped
    assert undefined["rd_run_ok"] is True and undefined["format_ok"] is False
    assert undefined["rd_row_ratio"] == 1.0 and undefined["rd_index_jaccard"] == 0.0
