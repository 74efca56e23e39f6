"""The shipped real-model recording replays: the whole experiment of data/specs/real_model.yaml
runs again with no model server (the llm extra need not be installed) and reproduces every
recorded outcome."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.errors import ReplayMissError
from costeer_lab.experiment import load_results, load_spec, run_experiment
from costeer_lab.llm import LOCAL_PREFIX, import_cache
from costeer_lab.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "data" / "specs" / "real_model.yaml"
RECORDING = ROOT / "data" / "real_model"


def _replay_config(out: Path) -> dict[str, Any]:
    spec = load_spec(SPEC)
    with SQLiteStore(out / "llm_cache.db") as store:
        assert import_cache(RECORDING / "llm_cache.jsonl.gz", store) > 100
    config = spec.to_dict()
    config["coder"] = {
        **config["coder"],
        "cache_mode": "replay_only",
        "store": f"sqlite:///{out / 'llm_cache.db'}",
        # no endpoint at all: a request that was not recorded can only fail
        "base_url": "http://127.0.0.1:9/v1",
    }
    config["parallelism"] = {"executor": "thread", "workers": 2}
    return config


def test_the_shipped_recording_replays_every_outcome(tmp_path: Path) -> None:
    out = tmp_path / "replay"
    out.mkdir()
    config = _replay_config(out)
    assert str(load_spec(SPEC).coder["model"]).startswith(LOCAL_PREFIX)
    results = load_results(run_experiment(config, out, progress=False))
    with (RECORDING / "outcomes.csv").open(newline="") as fh:
        recorded = {
            (r["arm"], int(r["seed"]), r["task_id"], int(r["attempt"])): r["success"] == "True"
            for r in csv.DictReader(fh)
        }
    replayed = {
        (str(arm), int(seed), str(task), int(attempt)): bool(ok)
        for arm, seed, task, attempt, ok in zip(
            results["arm"],
            results["seed"],
            results["task_id"],
            results["attempt"],
            results["success"],
            strict=True,
        )
    }
    assert replayed == recorded
    # the knowledge arms solved something and something stayed unsolved: not floor, not ceiling
    assert 0 < sum(recorded.values()) < len(recorded)
    assert results["completion_tokens"].sum() > 0  # token counts of the recorded calls


def test_a_request_the_recording_never_made_stops_the_replay(tmp_path: Path) -> None:
    out = tmp_path / "changed"
    out.mkdir()
    config = _replay_config(out)
    config["coder"] = {**config["coder"], "temperature": 0.51}  # another request for every call
    config["arms"] = [{"name": "no_knowledge", "rag": "none"}]
    with pytest.raises(ReplayMissError, match="replay_only: no cached response"):
        run_experiment(config, out, progress=False)
    assert not (out / "results.parquet").exists()
