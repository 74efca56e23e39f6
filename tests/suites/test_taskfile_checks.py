"""Static checks of task files: each bad field is one error naming the task and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costeer_lab.errors import InvalidInputError
from costeer_lab.suites import load_suite
from costeer_lab.suites._taskfile import parse_task_document
from costeer_lab.suites._taskfile_checks import check_reference, defined_names
from costeer_lab.testing._bad_inputs_base import PY_TASKS

ADD: dict[str, Any] = PY_TASKS["tasks"][0]  # the task "add"


def _py(**changes: Any) -> dict[str, Any]:
    task = {k: v for k, v in {**ADD, **changes}.items() if v is not None}
    return {"kind": "python_function", "tasks": [task]}


def _error(doc: dict[str, Any]) -> str:
    with pytest.raises(InvalidInputError) as info:
        parse_task_document(doc, "t.yaml")
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith("invalid task file t.yaml: ")
    return text


def test_a_valid_file_passes() -> None:
    parsed = parse_task_document(_py(), "t.yaml")
    assert [t.id for t in parsed.tasks] == ["add"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"canonical_solution": "def add(a, b):\n    return a +\n"},
            "tasks[0].canonical_solution (task 'add'): the reference solution does not compile: "
            "line 2: invalid syntax",
        ),
        (
            {"prompt": "def add(a, b):\n", "canonical_solution": "    return (a + b\n"},
            "tasks[0].canonical_solution (task 'add'): the reference solution does not compile: "
            "line 1:",
        ),
        (
            {"prompt": "def add(a b):\n", "canonical_solution": "    return a + b\n"},
            "tasks[0].prompt (task 'add'): the reference solution does not compile: line 1:",
        ),
        (
            {"canonical_solution": None, "ground_truth": "def add(a, b)\n    return a + b\n"},
            "tasks[0].ground_truth (task 'add'): the reference solution does not compile: line 1",
        ),
        (
            {"tests": "def check(f):\n    assert f(1, 2) ==\n"},
            "tasks[0].tests (task 'add'): the tests do not compile: line 2:",
        ),
        (
            {"tests": "assert add(1, 2) == 3\n"},
            "tasks[0].tests (task 'add'): the tests define no check(candidate) function",
        ),
        ({"tests": "def check():\n    pass\n"}, "check() takes no argument"),
        (
            {"entry_point": "os.system"},
            "tasks[0].entry_point (task 'add'): 'os.system' is not a function name",
        ),
        ({"entry_point": "lambda"}, "'lambda' is not a function name"),
        ({"entry_point": "a b"}, "'a b' is not a function name"),
        (
            {"entry_point": "plus"},
            "tasks[0].entry_point (task 'add'): 'plus' is not defined by the reference solution "
            "(prompt + canonical_solution), which defines 'add'",
        ),
        ({"id": "a\nb"}, "tasks[0].id: 'a\\nb' contains a control character (U+000A)"),
        ({"name": "a\x00b"}, "tasks[0].name: 'a\\x00b' contains a control character (U+0000)"),
    ],
)
def test_each_bad_field_is_named(changes: dict[str, Any], message: str) -> None:
    assert message in _error(_py(**changes))


def test_two_tasks_with_one_name_are_refused() -> None:
    doc = {"kind": "python_function", "tasks": [ADD, {**ADD, "id": "add2"}]}
    assert "tasks[1].name: duplicate task name 'add' (also tasks[0].name)" in _error(doc)
    factor = {"tasks": [{"id": "a", "name": "X", "description": "d"}] * 1}
    factor["tasks"].append({"id": "b", "name": "X", "description": "d"})
    assert "tasks[1].name: duplicate task name 'X'" in _error(factor)


@pytest.mark.parametrize("name", ["../x.parquet", "/tmp/x.parquet", "a\\b.parquet", "", "."])
def test_file_names_stay_in_the_work_directory(name: str) -> None:
    task = {"id": "a", "name": "A", "description": "d"}
    text = _error({"tasks": [task], "output_file": name})
    assert "output_file: " in text and "leaves the candidate's work directory" in text
    assert f"inputs.{name}: " in _error({"tasks": [task], "inputs": {name: "x"}})
    assert "tasks[0].output_file: " in _error({"tasks": [{**task, "output_file": name}]})


@pytest.mark.parametrize(
    "code",
    [
        "def add(a, b):\n    return a + b\n",
        "add = lambda a, b: a + b\n",
        "from operator import add\n",
        "import math\nif True:\n    def add(a, b):\n        return a + b\n",
        "class add:\n    pass\n",
        "from operator import *\n",  # a star import may define it: not refused
    ],
)
def test_the_ways_a_reference_defines_its_entry_point(code: str) -> None:
    check_reference([("ground_truth", code)], "add", "tasks[0]", "add")


def test_defined_names_are_top_level_only() -> None:
    import ast

    tree = ast.parse("def f():\n    inner = 1\nx, y = 1, 2\nimport os.path\n")
    assert defined_names(tree) == {"f", "x", "y", "os"}


def test_a_ground_truth_file_reference_is_checked_when_the_suite_loads(tmp_path: Path) -> None:
    (tmp_path / "ref.py").write_text("def plus(a, b):\n    return a + b\n")
    doc = _py(canonical_solution=None, ground_truth_file="ref.py")
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InvalidInputError) as info:
        load_suite(path)
    assert "tasks[0].entry_point (task 'add'): 'add' is not defined by the reference" in str(
        info.value
    )
    assert "(ground_truth_file)" in str(info.value) and "'ref.py'" in str(info.value)


def test_only_python_function_files_are_marked_for_the_reference_run(tmp_path: Path) -> None:
    (tmp_path / "py.json").write_text(json.dumps(_py()))
    assert load_suite(tmp_path / "py.json").verify_references is True
    assert load_suite("humaneval", limit=2).verify_references is False


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=20))
def test_any_entry_point_is_accepted_or_refused_with_one_line(entry: str) -> None:
    doc = _py(entry_point=entry, canonical_solution=f"{entry} = print\n")
    try:
        parse_task_document(doc, "t.yaml")
    except InvalidInputError as exc:
        assert "\n" not in str(exc) and "tasks[0]" in str(exc)
    else:
        assert entry.isidentifier()
