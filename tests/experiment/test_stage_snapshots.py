"""A stage starts from a named snapshot of a store: it sees the knowledge as of the snapshot and
nothing written after it, the source store is only read, and the report names the snapshot.
Real suite, sandbox and SQLite stores."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.errors import ConfigurationError
from costeer_lab.experiment import load_results, load_spec, run_experiment
from costeer_lab.store import SQLiteStore
from costeer_lab.viz import report_experiment

from ._stores import attempt_runs as _runs


def _snapshots(db: Path) -> list[str]:
    store = SQLiteStore(db, read_only=True)
    try:
        return [s.name for s in store.snapshots()]
    finally:
        store.close()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _spec(cache_dir: Path, stages: list[dict[str, Any]], **over: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "snapshots",
        "suite": "alpha158",
        "suite_options": {"n_instruments": 6, "n_days": 80, "cache_dir": str(cache_dir)},
        "seed_knowledge": {"split": "train", "limit": 6},
        "arms": [{"name": "rag_v2", "rag": "v2"}],
        "stages": stages,
        "seeds": [0],
        "max_loop": 2,
        "parallelism": {"executor": "thread", "workers": 2},
    }
    spec.update(over)
    return spec


def test_a_stage_starts_from_a_snapshot_taken_midway(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = tmp_path / "first"
    run_experiment(
        _spec(
            cache,
            [
                {"name": "learn", "tasks": {"ids": ["alpha158/MA10"]}},
                {"name": "transfer", "tasks": {"ids": ["alpha158/STD10"]}},
            ],
        ),
        first,
        progress=False,
    )
    source = first / "kb" / "transfer" / "rag_v2-seed0.db"
    # every stage ends with a snapshot; a store carried over by copy keeps the earlier ones
    assert _snapshots(first / "kb" / "learn" / "rag_v2-seed0.db") == ["stage:learn"]
    assert _snapshots(source) == ["stage:learn", "stage:transfer"]
    assert _runs(source) == {"rag_v2-seed0-learn", "rag_v2-seed0-transfer"}
    digest, beside = _sha256(source), sorted(p.name for p in source.parent.iterdir())

    stages: list[dict[str, Any]] = [
        {"name": "warm", "tasks": {"ids": ["alpha158/STD60"]}},
        {
            "name": "again",
            "tasks": {"ids": ["alpha158/MA60"]},
            "start_from": {"snapshot": "stage:lern", "store": str(source)},
        },
    ]
    second = tmp_path / "second"
    # a mistyped snapshot is refused in preflight, naming the field and the known snapshots
    with pytest.raises(ConfigurationError) as err:
        run_experiment(_spec(cache, stages), second, progress=False)
    msg = str(err.value)
    assert "stages.1.start_from.snapshot: no snapshot named 'stage:lern'" in msg
    assert "'stage:learn'" in msg and str(source) in msg
    assert not second.exists()

    stages[1]["start_from"]["snapshot"] = "stage:learn"
    results = load_results(run_experiment(_spec(cache, stages), second, progress=False))
    assert set(results["stage"]) == {"warm", "again"}
    again = second / "kb" / "again" / "rag_v2-seed0.db"
    # stage 2 sees the source's knowledge as of the snapshot: not what was written after it
    # (the transfer stage), and not this run's first stage (it starts from the snapshot)
    assert _runs(again) == {"rag_v2-seed0-learn", "rag_v2-seed0-again"}
    assert _snapshots(again) == ["stage:learn", "stage:again"]
    # the source store was only read: same bytes, no file created beside it
    assert _sha256(source) == digest
    assert sorted(p.name for p in source.parent.iterdir()) == beside

    recorded = json.loads((second / "start_snapshots.json").read_text())["starts"]
    assert len(recorded) == 1
    start = recorded[0]
    assert (start["stage"], start["arm"], start["seed"]) == ("again", "rag_v2", 0)
    assert (start["snapshot"], start["store"]) == ("stage:learn", str(source))
    assert start["taken_at"].endswith("+00:00")
    spec_json = json.loads((second / "spec.json").read_text())
    assert spec_json["stages"][1]["start_from"] == {
        "snapshot": "stage:learn",
        "store": str(source),
    }
    assert "start_from" not in spec_json["stages"][0]
    assert load_spec(spec_json).stages[1].start_from is not None  # spec.json reads back

    page = report_experiment(second).read_text(encoding="utf-8")
    assert "started from snapshot <b>stage:learn</b> of store" in page
    assert start["taken_at"] in page

    # a resumed run neither branches again nor takes a second snapshot
    run_experiment(_spec(cache, stages), second, progress=False)
    assert _snapshots(again) == ["stage:learn", "stage:again"]
    assert _sha256(source) == digest


def test_a_stage_without_a_store_starts_from_its_own_earlier_snapshot(tmp_path: Path) -> None:
    """No ``store``: the snapshot must be one the previous stage's store will hold."""
    stages: list[dict[str, Any]] = [
        {"name": "a", "tasks": {"ids": ["alpha158/MA10"]}},
        {"name": "b", "tasks": {"ids": ["alpha158/STD10"]}},
        {"name": "c", "tasks": {"ids": ["alpha158/MA60"]}, "start_from": {"snapshot": "stage:z"}},
    ]
    with pytest.raises(ConfigurationError) as err:
        run_experiment(_spec(tmp_path / "cache", stages), tmp_path / "out", progress=False)
    msg = str(err.value)
    assert (
        "stages.2.start_from.snapshot: no snapshot named 'stage:z' in the store of stage 'b'"
        in msg
    )
    assert "stage:a" in msg and "stage:b" in msg
    assert not (tmp_path / "out").exists()

    # the corrected spec: stage c starts from the end of stage a, so b's knowledge is not in it
    stages[2]["start_from"] = {"snapshot": "stage:a"}
    run_experiment(_spec(tmp_path / "cache", stages), tmp_path / "out", progress=False)
    store = tmp_path / "out" / "kb" / "c" / "rag_v2-seed0.db"
    assert _runs(tmp_path / "out" / "kb" / "b" / "rag_v2-seed0.db") == {
        "rag_v2-seed0-a",
        "rag_v2-seed0-b",
    }
    assert _runs(store) == {"rag_v2-seed0-a", "rag_v2-seed0-c"}
    start = json.loads((tmp_path / "out" / "start_snapshots.json").read_text())["starts"][0]
    assert (start["snapshot"], start["store"]) == (
        "stage:a",
        str(tmp_path / "out/kb/b/rag_v2-seed0.db"),
    )
