"""Fixtures for the evolution-loop tests: tiny Python-function tasks, in-process evaluation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.evaluate import MultiEvaluator, PythonFunctionEvaluator
from costeer_lab.records import Task, Workspace
from costeer_lab.store import SQLiteStore

CANARY = "CANARY_GROUND_TRUTH_7f3a"


def make_task(name: str) -> Task:
    return Task(f"demo/{name}", name, f"Return x plus one ({name}).", extra={"entry_point": "f"})


def gt_workspace() -> Workspace:
    return Workspace(
        {
            "main.py": f"# {CANARY}\ndef f(x):\n    return x + 1\n",
            "tests.py": f"# {CANARY}\ndef check(c):\n    assert c(1) == 2\n    assert c(5) == 6\n",
        }
    )


GOOD = {"files": {"main.py": "def f(x):\n    return x + 1\n"}, "main_file": "main.py"}
BAD = {"files": {"main.py": "def f(x):\n    return x\n"}, "main_file": "main.py"}
CRASH = {"files": {"main.py": "def f(x):\n    return x['k']\n"}, "main_file": "main.py"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "run.db")
    yield s
    s.close()


@pytest.fixture
def evaluator() -> Iterator[MultiEvaluator]:
    with MultiEvaluator(PythonFunctionEvaluator(runner="inprocess"), kind="thread") as m:
        yield m
