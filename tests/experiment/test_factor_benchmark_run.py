"""End to end: the example RD-Agent benchmark file through the CLI, HDF5 input, seeded with
Alpha158 knowledge; results trace each attempt to what the coder did; the report shows RD-Agent's
benchmark metrics (issue 14, items 7 and 8)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from costeer_lab.cli import main
from costeer_lab.experiment import (
    BENCHMARK_COLUMNS,
    RDAGENT_METRICS,
    benchmark_metrics,
    load_results,
    rdagent_metrics,
)
from costeer_lab.experiment._runner import SEEDED_META
from costeer_lab.store import SQLiteStore
from costeer_lab.suites import alpha158_suite

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "rdagent_factor_example.json"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("bench")
    cache = str(tmp / "cache")
    spec = {
        "name": "bench-e2e",
        "suite": str(EXAMPLE),
        "suite_options": {
            "data": "synthetic_tick", "n_instruments": 8, "n_days": 60, "cache_dir": cache,
        },
        "tasks": {"ids": ["MA10", "ROC10", "TS_RANK9"]},
        "seed_knowledge": {
            "suite": "alpha158",
            "suite_options": {"n_instruments": 8, "n_days": 60, "cache_dir": cache},
            "split": "train",
        },
        "arms": [{"name": "no_knowledge"}, {"name": "rag_v2", "rag": "v2"}],
        "max_loop": 2,
        "parallelism": {"executor": "thread", "workers": 2},
    }  # fmt: skip
    spec_file = tmp / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec))
    out = tmp / "out"
    assert main(["run", str(spec_file), "--out", str(out), "--quiet"]) == 0
    assert main(["report", str(out)]) == 0
    return out


def test_item7_seed_knowledge_comes_from_another_suite(run_dir: Path, tmp_path: Path) -> None:
    train = alpha158_suite(8, 60, cache_dir=tmp_path).split("train")
    r = load_results(run_dir)
    v2 = r[r["arm"] == "rag_v2"]
    used = [i for ids in v2["used_knowledge_ids"] for i in json.loads(ids)]
    store = SQLiteStore(run_dir / "kb" / "rag_v2-seed0.db")
    try:
        assert store.get_meta(SEEDED_META) == str(len(train))
        nodes = store.get_nodes(used)
        # item 8 too: the knowledge the coder used names the (Alpha158) task it solved
        sources = {n.attrs["task_id"] for n in nodes} - {"MA10", "ROC10", "TS_RANK9"}
        assert sources and sources <= set(train)
        assert all(n.attrs["task_id"].endswith(n.attrs["task_name"]) for n in nodes)
    finally:
        store.close()
    # Alpha158 code, adapted (window, HDF5 files, $-columns), solves the MA10 task
    ma10 = v2[v2["task_id"] == "MA10"]
    assert bool(ma10["success"].iloc[-1]), ma10[["coder_notes", "return_checking"]].to_dict()


def test_item8_rows_and_step_records_say_what_the_coder_did(run_dir: Path) -> None:
    r = load_results(run_dir)
    assert list(r.columns[-len(BENCHMARK_COLUMNS) :]) == list(BENCHMARK_COLUMNS)
    assert set(r.loc[r["arm"] == "no_knowledge", "coder_strategy"]) == {"generic"}
    v2 = r[r["arm"] == "rag_v2"]
    adapted = v2[v2["coder_strategy"] == "adapted"]
    assert len(adapted) and adapted["coder_notes"].str.startswith("adapted '").all()
    assert set(r["category"]) == {"Trend", "Momentum"}
    store = SQLiteStore(run_dir / "kb" / "rag_v2-seed0.db")
    try:
        steps: list[Any] = [data for _, data in store.iter_records("evo_step")]
        outcomes = [a["outcome"] for s in steps for a in s["attempts"]]
        assert outcomes and all(o["strategy"] and o["notes"] for o in outcomes)
        assert any("mapping" in o["coder_extra"] for o in outcomes)
        traces = list(store.iter_nodes("task_trace"))
        assert traces and {n.attrs["task_name"] for n in traces} == {"MA10", "ROC10", "TS_RANK9"}
        assert all(n.attrs["task_id"] == n.attrs["task_name"] for n in traces)
    finally:
        store.close()


def test_the_report_shows_the_benchmark_metrics(run_dir: Path) -> None:
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "Factor benchmark (RD-Agent metrics and the project metrics)" in page
    for column in (*RDAGENT_METRICS, "attempt_run_rate", "attempt_format_rate",
                   "ic_mean_compared", "ic_max_compared", "attempt_accuracy@0.99",
                   "not_evaluated", "Every final attempt was evaluated"):  # fmt: skip
        assert column in page
    r = load_results(run_dir)
    assert r["evaluated"].all()
    table = benchmark_metrics(r, by="difficulty")
    both = table[table["difficulty"] == "all"].set_index("arm")
    assert set(both.index) == {"no_knowledge", "rag_v2"}
    assert both.loc["no_knowledge", "task_success"] == 0.0
    assert both.loc["rag_v2", "ic_max_compared"] == pytest.approx(1.0)
    assert both["attempt_accuracy@0.99"].to_numpy(float)[list(both.index).index("rag_v2")] > 0
    assert (both["attempts"] == r.groupby("arm").size()).all()
    assert (both["not_evaluated"] == 0).all()
    # RD-Agent's measures of the solved attempts: the truth's own values
    solved = r[r["success"]]
    assert (solved["rd_run_ok"] & (solved["rd_row_ratio"] == 1.0)).all()
    assert (solved["rd_index_jaccard"] == 1.0).all()
    assert solved["rd_corr"].to_numpy(float) == pytest.approx(1.0)
    rd = rdagent_metrics(r, by="factor").set_index(["arm", "factor"])
    assert rd.loc[("rag_v2", "MA10"), "Max Correlation"] == pytest.approx(1.0)
    assert rd.loc[("no_knowledge", "Average"), "rounds"] == 3
    success = r[r["success"]]
    assert set(success["accepted_by"]) == {"equal_values"}
    assert not math.isnan(float(success["equal_value_ratio"].to_numpy(float)[0]))


def test_benchmark_metrics_by_group_are_exact() -> None:
    nan = float("nan")
    df = pd.DataFrame(
        {
            "arm": ["a"] * 4,
            "seed": [0] * 4,
            "task_id": ["t1", "t1", "t2", "t2"],
            "attempt": [1, 2, 1, 2],
            "success": [False, True, False, False],
            "category": ["M", "M", "V", "V"],
            "difficulty": ["Easy", "Easy", "Hard", "Hard"],
            "ran": [True, True, False, True],
            "format_ok": [True, True, False, False],
            "equal_value_ratio": [0.6, 1.0, nan, nan],
            "ic": [0.5, 1.0, nan, nan],
            "evaluated": [True] * 4,
        }
    )
    m = benchmark_metrics(df).set_index("category")
    assert m.loc["M"].to_dict() == {
        "arm": "a", "attempts": 2, "not_evaluated": 0, "attempt_run_rate": 1.0,
        "attempt_format_rate": 1.0, "ic_mean_compared": 0.75, "ic_max_compared": 1.0,
        "attempt_accuracy@0.5": 1.0, "attempt_accuracy@0.9": 0.5,
        "attempt_accuracy@0.99": 0.5, "task_success": 1.0,
    }  # fmt: skip
    assert m.loc["V", "attempt_run_rate"] == 0.5 and bool(m["ic_mean_compared"].isna()["V"])
    assert m.loc["all", "task_success"] == 0.5 and m.loc["all", "attempt_accuracy@0.5"] == 0.5
    with pytest.raises(Exception, match="benchmark columns"):
        benchmark_metrics(df.drop(columns=["ran"]))
