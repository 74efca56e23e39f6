"""Adaptation across benchmark tasks (issue 14, item 10): numbers inside identifiers, numbers
in task names, and file/column conventions between suites."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from costeer_lab.coders._adapt import adapt_code, adapt_workspace, derive_adaptation
from costeer_lab.evaluate import FactorEvaluator
from costeer_lab.records import Task, Workspace
from costeer_lab.suites import alpha158_suite, load_suite

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "rdagent_factor_example.json"


def test_item10_a_number_inside_an_identifier_follows_the_mapping() -> None:
    src = Task("s", "DIFF10", "", formulation="$close - Ref($close, 10)")
    dst = Task("t", "DIFF15", "", formulation="$close - Ref($close, 15)")
    ad = derive_adaptation(src, dst)
    code = (
        "close_diff10 = close - close.shift(10)\n"
        "ma10_fast = close_diff10.astype('float64')\n"
        "y = np.float64(close_diff10) + np.log1p(ma10_fast)\n"
    )
    assert adapt_code(code, ad) == (
        "close_diff15 = close - close.shift(15)\n"
        "ma15_fast = close_diff15.astype('float64')\n"
        "y = np.float64(close_diff15) + np.log1p(ma15_fast)\n"
    )


@pytest.mark.parametrize("target", ["alpha002", "alpha101", "Alpha#7"])
def test_item10_numbers_in_unrelated_task_names_are_not_windows(target: str) -> None:
    src = Task("s", "MA5", "", formulation="Mean($close, 5)/$close")
    dst = Task("t", target, "", formulation="-1 * rank($volume)")
    ad = derive_adaptation(src, dst)
    out = adapt_code("WINDOW = 5\nx = close.rolling(WINDOW).mean()\n", ad)
    ast.parse(out)  # never "WINDOW = 002"
    assert "WINDOW = 5\n" in out


def test_item10_a_number_with_leading_zeros_becomes_a_valid_literal() -> None:
    src = Task("s", "alpha001", "", formulation="Ts_Rank($close, 5)")
    dst = Task("t", "alpha002", "", formulation="Ts_Rank($close, 007)")
    ad = derive_adaptation(src, dst)
    assert ad.numbers == {5.0: "7"}
    assert adapt_code("W = 5\n", ad) == "W = 7\n"


def test_names_that_agree_apart_from_their_number_still_give_it() -> None:
    ad = derive_adaptation(Task("s", "MA5", ""), Task("t", "MA10", ""))
    assert ad.numbers == {5.0: "10"}


def test_alpha158_code_adapted_to_a_benchmark_task_runs_on_its_hdf5_files(
    tmp_path: Path,
) -> None:
    alpha = alpha158_suite(6, 60, seed=2, cache_dir=tmp_path)
    bench = load_suite(EXAMPLE, n_instruments=6, n_days=60, cache_dir=tmp_path)
    source, target = alpha.task("alpha158/MA5"), bench.task("MA10")
    ws, _ = adapt_workspace(alpha.ground_truth(source.id), source, target)
    assert (
        'pd.read_hdf("daily_pv.h5")' in ws.code and 'df["$close"]' in ws.code.replace("rows", "df")
    ) or '["$close"]' in ws.code
    assert (
        'to_hdf("result.h5", key="data")' in ws.code and "parquet" not in ws.code.split('"""')[-1]
    )
    ev = bench.evaluator(runner="inprocess")
    assert isinstance(ev, FactorEvaluator)
    fb = ev.evaluate(target, ws, bench.ground_truth(target.id))
    assert fb.final_decision is True, str(fb)
    unchanged = adapt_workspace(Workspace({"main.py": "x = 1\n"}), source, source)[0]
    assert unchanged.code == "x = 1\n"


def test_an_operator_renamed_to_a_non_method_leaves_method_calls_alone() -> None:
    src = Task("s", "RANK20", "", formulation="Rank($close, 20)")
    dst = Task("t", "TS_RANK9", "", formulation="Ts_Rank($close, 9)")
    out = adapt_code("x = close.rolling(20).rank(pct=True)\n", derive_adaptation(src, dst))
    assert out == "x = close.rolling(9).rank(pct=True)\n"
    mean_to_std = derive_adaptation(
        Task("a", "MA5", "", formulation="Mean($close, 5)"),
        Task("b", "STD5", "", formulation="Std($close, 5)"),
    )
    assert adapt_code("y = c.rolling(5).mean()\n", mean_to_std) == "y = c.rolling(5).std()\n"
