"""The preflight of a python_function task file runs each selected reference once, in the
sandbox, against its own tests; a failure stops the run before anything is written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.errors import ConfigurationError
from costeer_lab.experiment import _reference_check as rc
from costeer_lab.experiment import run_experiment
from costeer_lab.settings import EvaluatorSettings, get_settings
from costeer_lab.suites import load_suite
from costeer_lab.testing._bad_inputs_base import PY_TASKS

ADD: dict[str, Any] = PY_TASKS["tasks"][0]  # the task "add"
SUB = {
    **ADD,
    "id": "sub",
    "name": "sub",
    "entry_point": "sub",
    "canonical_solution": "def sub(a, b):\n    return a - b\n",
    "tests": "def check(f):\n    assert f(3, 2) == 1\n",
}


@pytest.fixture(autouse=True)
def _forget_passed() -> Iterator[None]:
    rc._PASSED.clear()
    get_settings.cache_clear()
    yield
    rc._PASSED.clear()
    get_settings.cache_clear()


def _file(tmp_path: Path, *tasks: dict[str, Any]) -> Path:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"kind": "python_function", "tasks": list(tasks)}))
    return path


def _spec(task_file: Path, **changes: Any) -> dict[str, Any]:
    return {
        "name": "refs",
        "suite": str(task_file),
        "tasks": {"split": "all"},
        "seed_knowledge": {"split": None},
        "arms": [{"name": "a"}, {"name": "b"}],
        "seeds": [0, 1],
        "max_loop": 1,
        "parallelism": {"executor": "serial"},
        **changes,
    }


def _refused(tmp_path: Path, task: dict[str, Any], **settings: Any) -> str:
    suite = load_suite(_file(tmp_path, ADD, task))
    with pytest.raises(ConfigurationError) as info:
        rc.check_references(
            suite, suite.tasks, settings=EvaluatorSettings(**settings) if settings else None
        )
    assert "\n" not in str(info.value)
    return str(info.value)


def test_a_reference_that_fails_its_own_tests_is_named(tmp_path: Path) -> None:
    wrong = {**SUB, "canonical_solution": "def sub(a, b):\n    return b - a\n"}
    assert _refused(tmp_path, wrong) == (
        "task 'sub': the reference solution fails its own tests: tests line 2: "
        "assert f(3, 2) == 1 (it returned: -1)"
    )


def test_a_reference_that_raises_is_named(tmp_path: Path) -> None:
    raising = {**SUB, "canonical_solution": "def sub(a, b):\n    raise ValueError('no')\n"}
    text = _refused(tmp_path, raising)
    assert text.startswith("task 'sub': the reference solution fails its own tests: ")
    assert "it raised ValueError: no" in text and "tests line 2" in text


def test_a_reference_that_does_not_load_is_named(tmp_path: Path) -> None:
    broken = {**SUB, "canonical_solution": "import no_such_module_x\ndef sub(a, b):\n    pass\n"}
    assert _refused(tmp_path, broken).startswith(
        "task 'sub': the reference solution does not load: ModuleNotFoundError"
    )


def test_a_reference_that_never_ends_is_stopped_at_the_time_limit(tmp_path: Path) -> None:
    looping = {**SUB, "canonical_solution": "def sub(a, b):\n    while True:\n        a += 1\n"}
    assert _refused(tmp_path, looping, pyfunc_timeout_s=1.0) == (
        "task 'sub': the reference solution did not finish within 1 s when run against its own "
        "tests (the limit is the evaluator.pyfunc_timeout_s setting)"
    )


def test_references_that_pass_run_once_per_process(tmp_path: Path) -> None:
    suite = load_suite(_file(tmp_path, ADD, SUB))
    assert rc.check_references(suite, suite.tasks) == 2
    assert rc.check_references(suite, suite.tasks, seed_tasks=suite.tasks) == 0
    changed = load_suite(_file(tmp_path, ADD, {**SUB, "tests": "def check(f):\n    pass\n"}))
    assert rc.check_references(changed, changed.tasks) == 1  # new tests: run again


def test_a_task_without_tests_or_reference_is_not_run(tmp_path: Path) -> None:
    bare = {k: v for k, v in SUB.items() if k not in ("tests",)}
    no_ref = {k: v for k, v in ADD.items() if k != "canonical_solution"}
    suite = load_suite(_file(tmp_path, no_ref, bare))
    assert rc.check_references(suite, suite.tasks) == 0


def test_the_shipped_suites_are_not_checked() -> None:
    suite = load_suite("humaneval", limit=2)
    assert rc.check_references(suite, suite.tasks) == 0


def test_a_run_checks_each_reference_once_and_writes_nothing_on_failure(
    tmp_path: Path,
) -> None:
    good = _file(tmp_path, ADD, SUB)
    out = tmp_path / "run"
    run_experiment(_spec(good), out, progress=False)  # 2 arms x 2 seeds, references once
    assert len(rc._PASSED) == 2
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    wrong = {**SUB, "canonical_solution": "def sub(a, b):\n    return a + b\n"}
    bad = _file(bad_dir, ADD, wrong)
    with pytest.raises(ConfigurationError, match="task 'sub': the reference solution fails"):
        run_experiment(_spec(bad), tmp_path / "new", progress=False)
    assert not (tmp_path / "new").exists()


def test_only_selected_tasks_are_checked(tmp_path: Path) -> None:
    wrong = {**SUB, "canonical_solution": "def sub(a, b):\n    return a + b\n"}
    path = _file(tmp_path, ADD, wrong)
    spec = _spec(path, tasks={"ids": ["add"]})
    run_experiment(spec, tmp_path / "run", progress=False)  # the broken 'sub' is not selected
    seeded = _spec(  # seed split "all" holds the target 'add' too: allowed on purpose here
        path, tasks={"ids": ["add"]}, seed_knowledge={"split": "all"}, allow_target_leak=True
    )
    with pytest.raises(ConfigurationError, match="task 'sub'"):  # as seed knowledge it is
        run_experiment(seeded, tmp_path / "run2", progress=False)


def test_every_selected_factor_reference_runs_on_the_inputs(tmp_path: Path) -> None:
    import numpy as np
    import pandas as pd

    from costeer_lab.experiment._preflight import preflight
    from costeer_lab.experiment._spec import load_spec

    idx = pd.MultiIndex.from_product(
        [pd.date_range("2024-01-01", periods=10), ["A", "B"]], names=["datetime", "instrument"]
    )
    close = np.random.default_rng(0).random(len(idx)) + 1
    pd.DataFrame({"close": close}, index=idx).to_parquet(tmp_path / "pv.parquet")
    gt = (
        "import pandas as pd\n"
        "panel = pd.read_parquet('daily_pv.parquet')\n"
        "x = panel['{col}']\n"
        "(x / x.groupby(level='instrument').shift(1)).to_frame('{name}')"
        ".to_parquet('result.parquet')\n"
    )
    doc = {
        "kind": "factor",
        "inputs": {"daily_pv.parquet": "pv.parquet"},
        "tasks": [
            {"id": "M1", "name": "M1", "description": "d", "ground_truth": gt.format(
                col="close", name="M1")},
            {"id": "V1", "name": "V1", "description": "d", "ground_truth": gt.format(
                col="volume", name="V1")},
        ],
    }  # fmt: skip
    path = tmp_path / "factors.json"
    path.write_text(json.dumps(doc))
    spec = load_spec({**_spec(path), "arms": [{"name": "a"}]})
    with pytest.raises(ConfigurationError) as info:  # the second target's reference fails
        preflight(spec, tmp_path / "out", resume=True)
    text = str(info.value)
    assert text.startswith("1 task cannot be evaluated on the suite's inputs (daily_pv.parquet (")
    assert text.endswith(
        "'V1': the reference implementation failed (exit code 1): KeyError: 'volume'"
    )
    only_m1 = load_spec({**_spec(path, tasks={"ids": ["M1"]}), "arms": [{"name": "a"}]})
    assert [t.id for t in preflight(only_m1, tmp_path / "out", resume=True).targets] == ["M1"]


def test_tests_that_loop_on_one_line_are_stopped_at_the_time_limit(tmp_path: Path) -> None:
    """A one-line loop gives a line trace no further events: the deadline must still fire."""
    hanging = {**SUB, "tests": "def check(f):\n    while True: pass\n"}
    assert _refused(tmp_path, hanging, pyfunc_timeout_s=1.0).startswith(
        "task 'sub': the reference solution did not finish within 1 s"
    )
