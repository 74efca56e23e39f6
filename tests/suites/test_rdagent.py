"""RD-Agent's factor benchmark format as a suite; factor task files (issue 14, items 5, 6, 11)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from costeer_lab.coders._contracts import contract_for, task_family
from costeer_lab.coders._generic import generic_attempt
from costeer_lab.errors import InvalidInputError
from costeer_lab.evaluate import FactorEvaluator
from costeer_lab.experiment import load_spec
from costeer_lab.records import Task, Workspace
from costeer_lab.suites import alpha158_suite, load_suite, make_panel
from costeer_lab.suites._rdagent import is_rdagent_document
from costeer_lab.suites._rdagent_data import DAILY_PV_COLUMNS, daily_pv_frame, ensure_daily_pv

DATA = Path(__file__).resolve().parents[2] / "data"
EXAMPLE = DATA / "rdagent_factor_example.json"


def test_the_example_file_loads_with_categories_difficulties_and_hdf5_io(tmp_path: Path) -> None:
    suite = load_suite(EXAMPLE, n_instruments=6, n_days=40, cache_dir=tmp_path)
    doc = json.loads(EXAMPLE.read_text())
    assert suite.name == "rdagent_factor_example" and suite.task_ids == list(doc)
    assert suite.split("test") == list(doc) and suite.split("train") == []
    roc = suite.task("ROC10")
    assert (roc.category, roc.difficulty) == ("Momentum", "Easy")
    assert roc.variables["$close"] == "close price of the day"
    assert roc.extra["output_file"] == "result.h5" and roc.extra["input_file"] == "daily_pv.h5"
    assert "gt_code" not in json.dumps(roc.to_dict())  # the truth stays hidden
    assert suite.ground_truth("ROC10").code == doc["ROC10"]["gt_code"]
    frame = pd.read_hdf(suite.inputs["daily_pv.h5"], key="data")
    assert isinstance(frame, pd.DataFrame)
    assert tuple(frame.columns) == DAILY_PV_COLUMNS
    assert list(frame.index.names) == ["datetime", "instrument"]
    for task in suite.tasks:  # every reference runs and passes against itself
        ev = suite.evaluator(runner="inprocess")
        gt = suite.ground_truth(task.id)
        fb = ev.evaluate(task, gt, gt)
        assert fb.final_decision, (task.id, fb.return_checking)


def test_tick_prices_sit_on_the_tick_and_keep_the_bar_invariants() -> None:
    float_pv = daily_pv_frame("synthetic", 30, 250, seed=0)
    tick = daily_pv_frame("synthetic_tick", 30, 250, seed=0)
    assert float_pv.index.equals(tick.index)
    prices = tick[["$open", "$close", "$high", "$low"]].dropna()
    assert np.allclose(prices * 100, (prices * 100).round(), atol=1e-6)
    assert (prices["$high"] >= prices[["$open", "$close"]].max(axis=1)).all()
    assert (prices["$low"] <= prices[["$open", "$close"]].min(axis=1)).all()
    assert (prices["$high"] == prices["$low"]).any()  # flat bars exist
    assert tick["$close"].isna().equals(float_pv["$close"].isna())  # same suspended days


def test_a_users_own_parquet_table_is_the_input(tmp_path: Path) -> None:
    own = daily_pv_frame("synthetic", 5, 30, seed=9) * 1.0
    own.to_parquet(tmp_path / "mine.parquet")
    suite = load_suite(EXAMPLE, data=str(tmp_path / "mine.parquet"), cache_dir=tmp_path)
    got = pd.read_hdf(suite.inputs["daily_pv.h5"], key="data")
    assert isinstance(got, pd.DataFrame)
    assert got.index.equals(own.index) and list(got.columns) == list(own.columns)
    assert np.array_equal(got.to_numpy(), own.to_numpy(), equal_nan=True)
    bad = tmp_path / "bad.parquet"
    make_panel(3, 10).to_parquet(bad)  # lower-case columns: not the daily_pv layout
    with pytest.raises(InvalidInputError, match=r"missing columns \['\$open'"):
        load_suite(EXAMPLE, data=str(bad), cache_dir=tmp_path)
    with pytest.raises(InvalidInputError, match="expected 'synthetic', 'synthetic_tick'"):
        ensure_daily_pv(tmp_path, "nowhere.parquet")


def test_bad_benchmark_entries_are_named(tmp_path: Path) -> None:
    doc = {"A": {"description": "d", "formulation": "f", "gt_code": "x", "scope": "sideways"}}
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InvalidInputError, match=r"task 'A', scope"):
        load_suite(path, cache_dir=tmp_path)
    assert is_rdagent_document({"A": {"description": "d", "gt_code": "x"}})
    assert not is_rdagent_document({"A": {"description": "d"}})


def test_a_spec_loads_the_benchmark_file_with_options() -> None:
    spec = load_spec(DATA / "specs" / "rdagent_example.yaml")
    assert spec.suite.endswith("rdagent_factor_example.json")
    assert spec.suite_options["data"] == "synthetic_tick"
    assert spec.seed_knowledge.suite == "alpha158"


# -- item 6: kind factor reaches the tasks ----------------------------------------------------
def test_item6_factor_tasks_of_a_task_file_are_factor_tasks_without_fields(
    tmp_path: Path,
) -> None:
    make_panel(4, 30, seed=1).to_parquet(tmp_path / "pv.parquet")
    doc = {
        "kind": "factor",
        "inputs": {"prices.parquet": "pv.parquet"},
        "output_file": "out.parquet",
        "tasks": [{"id": "a", "name": "alpha002", "description": "A published alpha.",
                   "formulation": "-1 * correlation(rank(delta(log(volume), 2)), 6)"}],
    }  # fmt: skip
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(doc))
    task = load_suite(tmp_path / "t.yaml").task("a")
    assert task_family(task) == "factor"
    assert task.extra["input_file"] == "prices.parquet"
    assert task.extra["output_file"] == "out.parquet"
    contract = contract_for(task)
    assert 'pd.read_parquet("prices.parquet")' in contract and "out.parquet" in contract
    code = generic_attempt(task).code
    assert "NotImplementedError" not in code and "out.parquet" in code
    compile(code, "main.py", "exec")


# -- item 5: a task file names its output, HDF5 included --------------------------------------
def test_item5_a_task_file_with_hdf5_input_and_output(tmp_path: Path) -> None:
    gt = (
        "import pandas as pd\n"
        "df = pd.read_hdf('daily_pv.h5', key='data')\n"
        "f = df['$close'] / df['$open']\n"
        "f.to_frame('CO').to_hdf('co.h5', key='data')\n"
    )
    doc = {
        "kind": "factor",
        "inputs": {"daily_pv.h5": "rdagent_tick"},
        "tasks": [{"id": "co", "name": "CO", "description": "Close over open.",
                   "output_file": "co.h5", "ground_truth": gt}],
    }  # fmt: skip
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(doc))
    suite = load_suite(tmp_path / "t.yaml")
    task = suite.task("co")
    assert task.extra["output_file"] == "co.h5" and task.extra["field_prefix"] == "$"
    assert 'pd.read_hdf("daily_pv.h5", key="data")' in contract_for(task)
    ev = suite.evaluator(runner="inprocess")
    assert isinstance(ev, FactorEvaluator)
    assert ev.evaluate(task, suite.ground_truth("co"), suite.ground_truth("co")).final_decision
    wrong = Workspace({"main.py": gt.replace("/ df['$open']", "/ df['$high']")})
    assert ev.evaluate(task, wrong, suite.ground_truth("co")).final_decision is False
    generic = generic_attempt(task).code
    assert "read_hdf('daily_pv.h5'" in generic and "to_hdf('co.h5'" in generic


# -- item 11: time-series, cross-sectional or both --------------------------------------------
@pytest.mark.parametrize(
    ("scope", "says", "never"),
    [
        ("time_series", 'group by the "instrument"', "across the instruments of one date"),
        ("cross_sectional", 'group by the "datetime"', "never mix instruments"),
        ("both", "cross-sectional steps (ranks, z-scores across instruments) go per date", None),
    ],
)
def test_item11_the_contract_follows_the_tasks_scope(
    tmp_path: Path, scope: str, says: str, never: str | None
) -> None:
    make_panel(4, 30, seed=1).to_parquet(tmp_path / "pv.parquet")
    doc = {
        "kind": "factor",
        "inputs": {"daily_pv.parquet": "pv.parquet"},
        "tasks": [{"id": "r", "name": "R", "description": "d", "scope": scope}],
    }
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(doc))
    task = load_suite(tmp_path / "t.yaml").task("r")
    assert task.extra["scope"] == scope
    text = contract_for(task)
    assert says in text
    assert "never across instruments" not in text
    if never is not None:
        assert never not in text


def test_item11_the_benchmark_files_cross_sectional_task_says_so(tmp_path: Path) -> None:
    suite = load_suite(EXAMPLE, n_instruments=4, n_days=20, cache_dir=tmp_path)
    assert suite.task("CS_RANK_RET5").extra["scope"] == "both"
    assert suite.task("ROC10").extra["scope"] == "time_series"
    assert 'group by the "datetime"' not in contract_for(suite.task("ROC10"))
    assert "per date" in contract_for(suite.task("CS_RANK_RET5"))
    alpha = alpha158_suite(3, 10, cache_dir=tmp_path)
    assert {t.extra["scope"] for t in alpha.tasks} == {"time_series"}


def test_task_family_of_a_plain_task_is_unchanged() -> None:
    assert task_family(Task("x", "add", "Add numbers.")) == "generic"
