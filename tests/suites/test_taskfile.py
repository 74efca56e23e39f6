"""User task files: JSON/YAML loading, evaluation, validation errors naming the bad field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from costeer_lab.errors import InvalidInputError
from costeer_lab.evaluate import EvaluatorSettings
from costeer_lab.records import Workspace
from costeer_lab.suites import load_suite, make_panel
from costeer_lab.suites._taskfile import parse_task_document

FACTOR_GT = """\
import pandas as pd
panel = pd.read_parquet("daily_pv.parquet")
close = panel["close"]
factor = close.groupby(level="instrument").shift(1) / close
factor.to_frame("MOM1").to_parquet("result.parquet")
"""


def test_yaml_factor_file_loads_and_evaluates(tmp_path: Path) -> None:
    make_panel(4, 40, seed=1).to_parquet(tmp_path / "pv.parquet")
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "mom.py").write_text(FACTOR_GT)
    doc = {
        "name": "mine",
        "kind": "factor",
        "inputs": {"daily_pv.parquet": "pv.parquet"},
        "splits": {"train": ["mom1"], "test": ["flat"]},
        "tasks": [
            {"id": "mom1", "name": "MOM1", "description": "Yesterday's close over today's.",
             "formulation": "Ref($close, 1)/$close", "ground_truth_file": "gt/mom.py"},
            {"id": "flat", "name": "FLAT", "description": "No ground truth here."},
        ],
    }  # fmt: skip
    path = tmp_path / "tasks.yaml"
    path.write_text(yaml.safe_dump(doc))
    suite = load_suite(path)
    assert suite.name == "mine" and suite.split("train") == ["mom1"]
    assert suite.inputs["daily_pv.parquet"] == (tmp_path / "pv.parquet").resolve()
    ev = suite.evaluator(runner="inprocess")
    task = suite.task("mom1")
    gt = suite.ground_truth("mom1")
    assert ev.evaluate(task, gt, gt).final_decision is True
    wrong = Workspace({"main.py": FACTOR_GT.replace("shift(1)", "shift(2)")})
    assert ev.evaluate(task, wrong, gt).final_decision is False
    with pytest.raises(InvalidInputError, match="no ground_truth"):
        suite.ground_truth("flat")


def test_json_python_function_file(tmp_path: Path) -> None:
    doc = {
        "kind": "python_function",
        "tasks": [
            {
                "id": "add",
                "name": "add",
                "description": "Add two numbers.",
                "entry_point": "add",
                "prompt": "def add(a, b):\n",
                "canonical_solution": "    return a + b\n",
                "tests": "def check(f):\n    assert f(1, 2) == 3\n    assert f(-1, 1) == 0\n",
            }
        ],
    }
    path = tmp_path / "fns.json"
    path.write_text(json.dumps(doc))
    suite = load_suite(str(path))
    task = suite.tasks[0]
    assert suite.name == "fns" and task.extra == {
        "entry_point": "add",
        "prompt": "def add(a, b):\n",
    }
    gt = suite.ground_truth("add")
    ev = suite.evaluator(runner="inprocess")
    assert ev.evaluate(task, Workspace({"main.py": gt.code}), gt).final_decision is True
    wrong = Workspace({"main.py": "def add(a, b):\n    return a * b\n"})
    fb = ev.evaluate(task, wrong, gt)
    assert "add(1, 2)" in (fb.return_checking or "") and "== 3" not in (fb.return_checking or "")
    full = suite.evaluator(runner="inprocess", settings=EvaluatorSettings(feedback_detail="full"))
    assert "assert f(1, 2) == 3" in (full.evaluate(task, wrong, gt).return_checking or "")


T = {"id": "a", "name": "A", "description": "d"}


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"tasks": [{"id": "a", "name": "A"}]}, "tasks[0].description: Field required"),
        ({"tasks": []}, "tasks: List should have at least 1 item"),
        ({"tasks": [{**T, "nmae": 1}]}, "tasks[0].nmae: Extra inputs are not permitted"),
        ({"kind": "sql", "tasks": [T]}, "kind: Input should be 'factor' or 'python_function'"),
        ({"tasks": [T, T]}, "tasks[1].id: duplicate task id 'a'"),
        ({"kind": "python_function", "tasks": [T]}, "tasks[0].entry_point: required"),
        ({"splits": {"train": ["b"]}, "tasks": [T]}, "splits.train[0]: unknown task id 'b'"),
        (["not", "a", "mapping"], "expected a mapping with 'tasks', got list"),
    ],
)
def test_validation_errors_name_the_field(doc: Any, message: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_task_document(doc, "t.yaml")
    assert message in str(info.value)
    assert str(info.value).startswith("invalid task file t.yaml: ")


def test_unreadable_and_missing_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("tasks: [unclosed")
    with pytest.raises(InvalidInputError, match="not valid JSON/YAML"):
        load_suite(bad)
    with pytest.raises(InvalidInputError, match="does not exist"):
        load_suite(tmp_path / "nope.json")
    missing_input = tmp_path / "in.yaml"
    missing_input.write_text(
        yaml.safe_dump({"inputs": {"x.parquet": "x.parquet"},
                        "tasks": [{"id": "a", "name": "A", "description": "d"}]})
    )  # fmt: skip
    with pytest.raises(InvalidInputError, match=r"inputs.x.parquet: file .* does not exist"):
        load_suite(missing_input)


# ids and names are shown on one line: control characters (Cc) are refused (test_taskfile_checks)
_text = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=12
)
_task = st.fixed_dictionaries(
    {"id": _text, "name": _text, "description": _text},
    optional={"formulation": st.text(max_size=20), "category": st.text(max_size=8),
              "variables": st.dictionaries(_text, st.text(max_size=8), max_size=3)},
)  # fmt: skip


def _task_id(task: dict[str, Any]) -> str:
    return str(task["id"])


def _task_name(task: dict[str, Any]) -> str:
    return str(task["name"])


@settings(max_examples=60, deadline=None)
@given(st.lists(_task, min_size=1, max_size=5, unique_by=(_task_id, _task_name)))
def test_valid_documents_round_trip_through_json(tasks: list[dict[str, Any]]) -> None:
    doc = {"tasks": tasks}
    parsed = parse_task_document(json.loads(json.dumps(doc)))
    assert [t.id for t in parsed.tasks] == [t["id"] for t in tasks]
    assert [t.variables for t in parsed.tasks] == [t.get("variables", {}) for t in tasks]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_task, min_size=1, max_size=5, unique_by=(_task_id, _task_name)),
    st.data(),
)
def test_a_missing_required_field_is_named(
    tasks: list[dict[str, Any]], data: st.DataObject
) -> None:
    index = data.draw(st.integers(0, len(tasks) - 1))
    field = data.draw(st.sampled_from(["id", "name", "description"]))
    broken = [dict(t) for t in tasks]
    del broken[index][field]
    with pytest.raises(InvalidInputError) as info:
        parse_task_document({"tasks": broken})
    assert f"tasks[{index}].{field}: Field required" in str(info.value)


def test_shipped_example_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from costeer_lab.settings import get_settings

    monkeypatch.setenv("COSTEER_LAB_CACHE_DIR", str(tmp_path))
    get_settings.cache_clear()
    try:
        root = Path(__file__).resolve().parents[2]
        suite = load_suite(root / "data" / "example_factor_tasks.yaml")
        assert suite.task_ids == ["MOM1", "RANGE5"]
        assert str(suite.inputs["daily_pv.parquet"]).startswith(str(tmp_path))
        ev = suite.evaluator(runner="inprocess")
        for task in suite.tasks:
            gt = suite.ground_truth(task.id)
            assert ev.evaluate(task, gt, gt).final_decision is True
    finally:
        get_settings.cache_clear()
