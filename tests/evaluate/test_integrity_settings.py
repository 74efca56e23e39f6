"""The integrity settings named in the README take effect through their environment variables."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from costeer_lab.evaluate import PythonFunctionEvaluator
from costeer_lab.records import Task, Workspace
from costeer_lab.sandbox import Sandbox
from costeer_lab.settings import get_settings


@pytest.fixture(autouse=True)
def fresh_settings() -> Iterator[None]:
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_feedback_detail_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    task = Task("demo/inc", "inc", "Add one.", extra={"entry_point": "inc"})
    gt = Workspace({"main.py": "", "tests.py": "def check(c):\n    assert c(1) == 424242\n"})
    wrong = Workspace({"main.py": "def inc(x):\n    return x\n"})
    texts = {}
    for level in ("verdict", "diagnostics", "full"):
        monkeypatch.setenv("COSTEER_LAB_EVALUATOR__FEEDBACK_DETAIL", level)
        get_settings.cache_clear()
        fb = PythonFunctionEvaluator(runner="inprocess").evaluate(task, wrong, gt)
        assert fb.details["feedback_detail"] == level and not fb.final_decision
        texts[level] = (fb.execution or "") + (fb.return_checking or "")
    assert "424242" in texts["full"]
    assert "424242" not in texts["diagnostics"] and "424242" not in texts["verdict"]
    assert "inc(1)" in texts["diagnostics"] and "inc(1)" not in texts["verdict"]


def test_allow_weak_isolation_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Sandbox(preimport=()).settings.allow_weak_isolation is False
    monkeypatch.setenv("COSTEER_LAB_SANDBOX__ALLOW_WEAK_ISOLATION", "1")
    get_settings.cache_clear()
    assert Sandbox(preimport=()).settings.allow_weak_isolation is True
