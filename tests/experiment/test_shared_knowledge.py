"""Experiments whose arms share a knowledge store, end to end (humaneval, offline ReuseCoder):
arm B (no seed knowledge of its own) retrieves arm A's knowledge only under scope: experiment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from costeer_lab.experiment import load_spec, run_experiment
from costeer_lab.viz import report_experiment


def _spec(**over: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "shared",
        "suite": "humaneval",
        "suite_options": {"limit": 6},
        "tasks": {"split": "test"},
        "seed_knowledge": {"split": "train"},
        "arms": [
            {"name": "A", "rag": "v2"},
            {"name": "B", "rag": "v2", "seed_knowledge": False},
        ],
        "seeds": [0],
        "max_loop": 1,
        "parallelism": {"executor": "serial"},
    }
    spec.update(over)
    return spec


def _similar(df: pd.DataFrame, arm: str) -> list[str]:
    rows = df[df["arm"] == arm]
    hits = [h for r in rows["retrieved"] for h in json.loads(r).get("similar", [])]
    return sorted(str(h["id"]) for h in hits)


def _run(out: Path, **over: Any) -> pd.DataFrame:
    return pd.read_parquet(run_experiment(_spec(**over), out, progress=False))


def test_scope_experiment_shares_arm_a_knowledge_with_arm_b(tmp_path: Path) -> None:
    alone = _run(tmp_path / "files")  # the default: each arm its own SQLite file
    assert _similar(alone, "A") and not _similar(alone, "B")
    lab = tmp_path / "lab" / "kb.db"
    knowledge = {"store": str(lab), "scope": "experiment"}
    shared = _run(tmp_path / "shared", knowledge=knowledge)
    # A runs first: it sees what it would alone; B now retrieves A's knowledge
    cols = ["task_id", "success", "retrieved"]
    pd.testing.assert_frame_equal(
        shared[shared["arm"] == "A"][cols].reset_index(drop=True),
        alone[alone["arm"] == "A"][cols].reset_index(drop=True),
    )
    assert _similar(shared, "B")
    assert set(_similar(shared, "B")) <= set(_similar(shared, "A")) | _ids_in(lab)
    assert int(shared[shared["arm"] == "B"]["kb_nodes"].min()) > 0
    assert not any((tmp_path / "shared" / "kb").glob("**/*.db"))  # nothing per arm
    record = json.loads((tmp_path / "shared" / "shared.json").read_text())
    assert record["knowledge"]["scope"] == "experiment"
    assert record["knowledge"]["arms"] == {"A-seed0": str(lab), "B-seed0": str(lab)}
    key = record["run_key"]
    assert set(shared["run_id"]) == {f"{key}/A-seed0", f"{key}/B-seed0"}
    # resume: the same folder continues its own runs (nothing left to do)
    again = _run(tmp_path / "shared", knowledge=knowledge)
    pd.testing.assert_frame_equal(again.drop(columns=_timing()), shared.drop(columns=_timing()))
    html = report_experiment(tmp_path / "shared").read_text()
    assert "scope: experiment" in html and "not independent" in html


def _timing() -> list[str]:
    return ["duration_s", "coder_s", "evaluate_s"]


def _ids_in(db: Path) -> set[str]:
    from costeer_lab.store import get_store

    with get_store(db) as store:
        return {n.id for n in store.iter_nodes("task_success_implement")}


def test_another_folder_does_not_resume_a_run_in_the_shared_store(tmp_path: Path) -> None:
    knowledge = {"store": str(tmp_path / "kb.db"), "scope": "experiment"}
    first = _run(tmp_path / "one", knowledge=knowledge)
    second = _run(tmp_path / "two", knowledge=knowledge)  # same spec, another folder
    assert len(second) == len(first)  # it ran its own attempts
    assert not set(first["run_id"]) & set(second["run_id"])
    # and started with the first run's knowledge: B of the second run retrieves from the start
    assert _similar(second, "B")


def test_spec_json_names_the_store_without_its_password(tmp_path: Path) -> None:
    spec = load_spec(_spec(knowledge={"store": "postgresql://lab:s3cret@db/kb", "scope": "arm"}))
    assert spec.to_dict()["knowledge"] == {"store": "postgresql://lab:***@db/kb", "scope": "arm"}
    assert "s3cret" not in spec._repr_html_()
    assert "knowledge" not in load_spec(_spec()).to_dict()  # spec.json as before


def test_postgres_scope_arm_keeps_arms_apart_and_experiment_shares(
    postgres_url: str, tmp_path: Path
) -> None:
    apart = _run(tmp_path / "arm", knowledge={"store": postgres_url, "scope": "arm"})
    assert _similar(apart, "A") and not _similar(apart, "B")
    record = json.loads((tmp_path / "arm" / "shared.json").read_text())
    schemas = set(record["knowledge"]["arms"].values())
    assert len(schemas) == 2 and all("schema=public_" in s for s in schemas)
    html = report_experiment(tmp_path / "arm").read_text()
    assert "scope: arm" in html
    together = _run(tmp_path / "exp", knowledge={"store": postgres_url, "scope": "experiment"})
    assert _similar(together, "B")
    cols = ["task_id", "success", "retrieved"]
    pd.testing.assert_frame_equal(  # A runs first in both: the same retrieval and outcomes
        apart[apart["arm"] == "A"][cols].reset_index(drop=True),
        together[together["arm"] == "A"][cols].reset_index(drop=True),
    )


def test_fresh_run_gets_a_new_run_key(tmp_path: Path) -> None:
    knowledge = {"store": str(tmp_path / "kb.db"), "scope": "experiment"}
    _run(tmp_path / "out", knowledge=knowledge)
    key = json.loads((tmp_path / "out" / "shared.json").read_text())["run_key"]
    df = pd.read_parquet(
        run_experiment(_spec(knowledge=knowledge), tmp_path / "out", progress=False, resume=False)
    )
    new = json.loads((tmp_path / "out" / "shared.json").read_text())["run_key"]
    assert new != key and all(r.startswith(new + "/") for r in df["run_id"])
