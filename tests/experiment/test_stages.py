"""Staged experiments carry each (arm, seed)'s knowledge base over; ``start_from`` starts a run
from an earlier run's stores. Real suite, sandbox and SQLite stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from costeer_lab.errors import ConfigurationError
from costeer_lab.experiment import load_results, run_experiment
from costeer_lab.experiment._runner import copy_store
from costeer_lab.testing import snapshot
from costeer_lab.viz import report_experiment

from ._stores import attempt_runs as _runs


def _spec(cache_dir: Path, **over: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "staged",
        "suite": "alpha158",
        "suite_options": {"n_instruments": 6, "n_days": 80, "cache_dir": str(cache_dir)},
        "seed_knowledge": {"split": "train", "limit": 6},
        "arms": [{"name": "rag_v2", "rag": "v2"}],
        "stages": [
            {"name": "learn", "tasks": {"ids": ["alpha158/MA10", "alpha158/STD10"]}},
            {"name": "transfer", "tasks": {"ids": ["alpha158/MA60"]}},
        ],
        "seeds": [0],
        "max_loop": 2,
        "parallelism": {"executor": "thread", "workers": 2},
    }
    spec.update(over)
    return {k: v for k, v in spec.items() if v is not None}  # None: leave the field out


def test_stages_carry_knowledge_and_start_from_reuses_a_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    results = load_results(run_experiment(_spec(tmp_path / "cache"), out, progress=False))
    # every store was closed: no SQLite side files stay behind (carrying a stage over reads
    # the earlier store without creating any), and a report writes only itself
    assert sorted(p.name for p in out.rglob("*") if p.name.endswith(("-wal", "-shm"))) == []
    before = snapshot(out)
    report_experiment(out)
    after = snapshot(out)
    assert {k: v for k, v in after.items() if k != "report.html"} == before
    assert set(results["stage"]) == {"learn", "transfer"}
    by_stage = results.groupby("stage")["task_id"].unique()
    assert sorted(by_stage["learn"]) == ["alpha158/MA10", "alpha158/STD10"]
    assert list(by_stage["transfer"]) == ["alpha158/MA60"]
    assert set(results["run_id"]) == {"rag_v2-seed0-learn", "rag_v2-seed0-transfer"}
    learn, transfer = out / "kb" / "learn" / "rag_v2-seed0.db", out / "kb" / "transfer"
    assert _runs(learn) == {"rag_v2-seed0-learn"}
    # the transfer store started from the learn store: both runs' attempts are in it
    assert _runs(transfer / "rag_v2-seed0.db") == {"rag_v2-seed0-learn", "rag_v2-seed0-transfer"}

    # a new experiment starting from the first one's transfer-stage stores
    # (a staged run keeps its stores per stage, so its directory has no kb/<arm>-seed<s>.db)
    again = _spec(
        tmp_path / "cache", stages=None, tasks={"ids": ["alpha158/STD60"]}, start_from=str(out)
    )
    # refused in preflight, naming the missing store and the stage folders: nothing written
    with pytest.raises(ConfigurationError, match=r"no knowledge base kb/rag_v2-seed0\.db") as e:
        run_experiment(again, tmp_path / "second", progress=False)
    assert "kb/{learn, transfer}/" in str(e.value)
    assert not (tmp_path / "second").exists()
    # the corrected spec then runs on the same folder
    again["start_from"] = str(tmp_path / "flat")
    copy_store(transfer / "rag_v2-seed0.db", tmp_path / "flat" / "kb" / "rag_v2-seed0.db")
    second = load_results(run_experiment(again, tmp_path / "second", progress=False))
    assert set(second["stage"]) == {""} and set(second["run_id"]) == {"rag_v2-seed0"}
    assert _runs(tmp_path / "second" / "kb" / "rag_v2-seed0.db") == {
        "rag_v2-seed0-learn",
        "rag_v2-seed0-transfer",
        "rag_v2-seed0",
    }
