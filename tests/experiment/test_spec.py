"""Experiment specs round-trip with every option kept (dict, JSON and YAML files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from costeer_lab.experiment import ExperimentSpec, load_spec

#: A spec where every field differs from its default, so a dropped option changes the result.
FULL: dict[str, Any] = {
    "name": "full",
    "suite": "humaneval",
    "suite_options": {"limit": 7},
    "tasks": {
        "split": "train",
        "ids": ["humaneval/1", "humaneval/2"],
        "match": "/[12]$",
        "limit": 2,
    },
    "seed_knowledge": {"split": "test", "limit": 3},
    "coder": {"name": "llm", "model": "gpt-4.1-mini", "temperature": 0.5},
    "embedder": "hashing",
    "arms": [
        {"name": "none", "rag": "none", "seed_knowledge": False},
        {"name": "v2-no-errors", "rag": "v2", "rag_options": {"max_error_fixes": 0}},
    ],
    "seeds": [3, 4],
    "max_loop": 9,
    "max_trials": 4,
    "parallelism": {"executor": "thread", "workers": 2, "dask_address": None},
    "stages": [
        {
            "name": "one",
            "tasks": {"split": "test", "ids": None, "match": None, "limit": 1},
            "carry_knowledge": True,
        },
        {
            "name": "two",
            "tasks": {"split": "train", "ids": None, "match": "1", "limit": None},
            "carry_knowledge": False,
        },
    ],
    "start_from": "runs/earlier",
    "shuffle_tasks": True,
    "allow_target_leak": True,
}


#: Shared stores exclude ``start_from`` and ``carry_knowledge: false``: FULL without them.
FULL_SHARED: dict[str, Any] = {
    **{k: v for k, v in FULL.items() if k not in ("start_from", "stages")},
    "arms": [*FULL["arms"], {"name": "mem", "rag": "memory"}],
    "knowledge": {"store": "postgresql://lab:s3cret@db/kb?schema=team", "scope": "arm"},
    "memory": {"store": "runs/memory.db", "scope": "experiment"},
}


def test_every_default_is_overridden_by_the_full_spec() -> None:
    default = ExperimentSpec.model_validate({"name": "x", "suite": "s", "arms": [{"name": "a"}]})
    full, shared = load_spec(FULL), load_spec(FULL_SHARED)
    for field in ExperimentSpec.model_fields:
        if field in ("knowledge", "memory"):
            assert getattr(shared, field) != getattr(default, field), field
        elif field not in ("name", "suite", "embedder"):
            assert getattr(full, field) != getattr(default, field), field


def test_shared_stores_round_trip_with_the_password_scrubbed() -> None:
    data = load_spec(FULL_SHARED).to_dict()
    assert data["knowledge"] == {
        "store": "postgresql://lab:***@db/kb?schema=team",
        "scope": "arm",
    }
    again = load_spec(data)  # what spec.json holds reads back (the password left out)
    assert again.to_dict() == data


@pytest.mark.parametrize("form", ["dict", "json", "yaml"])
def test_round_trip_keeps_every_option(form: str, tmp_path: Path) -> None:
    spec = load_spec(FULL)
    data = spec.to_dict()
    if form == "json":
        path = tmp_path / "spec.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        again = load_spec(path)
    elif form == "yaml":
        path = tmp_path / "spec.yaml"
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        again = load_spec(path)
    else:
        again = load_spec(data)
    assert again == spec
    assert again.to_dict() == data
    assert data["arms"][1]["rag_options"] == {"max_error_fixes": 0}
    assert data["coder"] == FULL["coder"] and data["suite_options"] == {"limit": 7}
    assert data["tasks"]["ids"] == ["humaneval/1", "humaneval/2"]
    assert (data["max_trials"], data["seeds"]) == (4, [3, 4])
