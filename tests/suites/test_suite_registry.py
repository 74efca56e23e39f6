"""The suite registry: names, did-you-mean errors, registration, Suite behaviour."""

from __future__ import annotations

import pytest

from costeer_lab.errors import InvalidInputError, NotFoundError, UnknownNameError
from costeer_lab.evaluate import PythonFunctionEvaluator
from costeer_lab.records import Task, Workspace
from costeer_lab.suites import Suite, list_suites, load_suite, register_suite


def test_builtin_suites_are_listed() -> None:
    assert {"alpha158", "humaneval"} <= set(list_suites())


def test_unknown_name_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError) as info:
        load_suite("alpha15")
    msg = str(info.value)
    assert "unknown suite 'alpha15'" in msg and "did you mean 'alpha158'?" in msg
    assert "'humaneval'" in msg


def _tiny() -> Suite:
    task = Task("tiny/inc", "inc", "Add one.", extra={"entry_point": "inc"})
    gt = Workspace(
        {
            "main.py": "def inc(x):\n    return x + 1\n",
            "tests.py": "def check(c):\n    assert c(1) == 2\n",
        }
    )
    return Suite(
        "tiny", [task], {task.id: gt}, PythonFunctionEvaluator, splits={"train": [task.id]}
    )


def test_register_load_and_overwrite() -> None:
    register_suite("tiny-test", _tiny, overwrite=True)
    suite = load_suite("tiny-test")
    assert suite.task_ids == ["tiny/inc"] and "tiny-test" in list_suites()
    with pytest.raises(InvalidInputError, match="already registered"):
        register_suite("tiny-test", _tiny)
    with pytest.raises(InvalidInputError, match="must be non-empty and not look like a path"):
        register_suite("a/b", _tiny)


def test_suite_lookups_and_evaluator() -> None:
    suite = _tiny()
    with pytest.raises(NotFoundError, match="did you mean 'tiny/inc'"):
        suite.task("tiny/inx")
    with pytest.raises(NotFoundError, match="no split 'tset'"):
        suite.split("tset")
    ev = suite.evaluator(runner="inprocess")
    task = suite.tasks[0]
    fb = ev.evaluate(
        task,
        Workspace({"main.py": "def inc(x):\n    return x + 1\n"}),
        suite.ground_truth(task.id),
    )
    assert fb.final_decision is True


def test_suite_validates_ids_and_splits() -> None:
    t = Task("x", "x", "x")
    with pytest.raises(InvalidInputError, match="duplicate task id 'x'"):
        Suite("s", [t, t], {}, PythonFunctionEvaluator)
    with pytest.raises(InvalidInputError, match="unknown task ids"):
        Suite("s", [t], {}, PythonFunctionEvaluator, splits={"train": ["y"]})


def test_task_file_path_with_options_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInputError, match="task files take no options"):
        load_suite(tmp_path / "x.yaml", limit=3)


def test_evaluators_add_the_critic_only_when_asked() -> None:
    suite = _tiny()
    assert [type(e).__name__ for e in suite.evaluators(runner="inprocess")] == [
        "PythonFunctionEvaluator"
    ]
    names = [type(e).__name__ for e in suite.evaluators(critic=True, runner="inprocess")]
    assert names == ["PythonFunctionEvaluator", "LLMCodeCritic"]
