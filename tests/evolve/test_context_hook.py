"""EvoAgent with the rich task context: steps recorded as actions with evidence, and a task
that submits the same code three times is stopped."""

from __future__ import annotations

from typing import Any

import pytest

from costeer_lab.context import RichMemoryManager, Validator
from costeer_lab.evolve import EvoAgent, EvolvingItem, EvolvingStrategy, TaskContextHook
from costeer_lab.evolve._strategy import _coder
from costeer_lab.store import SQLiteStore
from costeer_lab.testing import ScriptedCoder

from .conftest import BAD, CRASH, GOOD, gt_workspace, make_task


def _agent(store: SQLiteStore, evaluator: Any, script: dict[str, Any], **kw: Any) -> EvoAgent:
    strategy = EvolvingStrategy({"name": ScriptedCoder.name, "script": script}, max_trials=10)
    return EvoAgent(strategy=strategy, evaluator=evaluator, store=store, progress=False, **kw)


def _item(*names: str) -> EvolvingItem:
    tasks = [make_task(n) for n in names]
    return EvolvingItem.from_tasks(tasks, [gt_workspace() for _ in tasks])


@pytest.fixture(autouse=True)
def _fresh_coders() -> None:
    _coder.cache_clear()


SCRIPT = {"demo/a": [BAD, BAD, BAD, GOOD], "demo/b": [BAD, CRASH, BAD, GOOD]}


def test_without_the_hook_the_repeating_task_goes_on(store: SQLiteStore, evaluator: Any) -> None:
    state = _agent(store, evaluator, SCRIPT, run_id="r").run(_item("a", "b"))
    assert state.succeeded == {"demo/a", "demo/b"} and state.trials["demo/a"] == 4
    assert store.count_records("context_task") == 0


def test_same_code_three_times_stops_the_task(store: SQLiteStore, evaluator: Any) -> None:
    hook = TaskContextHook()
    state = _agent(store, evaluator, SCRIPT, run_id="r", context=hook).run(_item("a", "b"))
    # demo/a submitted BAD three times: stopped before its fourth (good) attempt
    assert state.trials == {"demo/a": 3, "demo/b": 4}
    assert state.succeeded == {"demo/b"}
    a = hook.context("r", "demo/a")
    assert a is not None and a.task_id == "r/demo/a" and a.task_type == "coding_task"
    assert a.stop_reason is not None and a.stop_reason.startswith(
        "repeated_action: action 'implement' with the same inputs"
    )
    assert "taken 3 times" in a.stop_reason and not a.complete
    assert [x.type for x in a.actions] == ["implement", "evaluate"] * 3
    assert [x.context.reasoning for x in a.actions[:2]] == [
        "step 1: coder implementation", "step 1: evaluator verdict"
    ]  # fmt: skip
    assert all(x.context.plan_id == "r" for x in a.actions)
    assert a.files[0].path == "main.py" and a.files[0].metadata.functions[0].name == "f"
    validations = [e for e in a.evidence if e.type == "validation"]
    assert len(validations) == 3 and all(not e.metadata["passed"] for e in validations)
    # demo/b submitted BAD, CRASH, BAD, GOOD: BAD only twice, never stopped
    b = hook.context("r", "demo/b")
    assert b is not None and b.stop_reason is None and len(b.actions) == 9
    assert b.actions[-1].success and b.actions[-1].type == "evaluate"
    # the passing step's code ran in the evaluator (exit 0): only demo/b is complete
    assert b.actions[-2].type == "run" and b.actions[-2].outputs.metadata["returncode"] == 0
    assert {"execution", "evaluation"} <= set(Validator().validate(b).met)  # (+ documentation)
    assert {"execution", "evaluation"} <= set(Validator().validate(a).missing)
    assert hook.stop_reason("r", "demo/b") is None and hook.context("r", "demo/zz") is None
    # the contexts are queryable like any other
    mm = RichMemoryManager(store)
    assert {m.task_id for m in mm.find_functions("f")} == {"r/demo/a", "r/demo/b"}
    assert mm.list_tasks() == ["r/demo/a", "r/demo/b"]


def test_the_stop_survives_a_resume(store: SQLiteStore, evaluator: Any) -> None:
    script = {"demo/a": [BAD, BAD, BAD, GOOD]}
    first = _agent(store, evaluator, script, run_id="r", max_loop=3, context=TaskContextHook())
    assert first.run(_item("a")).trials == {"demo/a": 3}
    again = _agent(store, evaluator, script, run_id="r", max_loop=10, context=TaskContextHook())
    state = again.run(_item("a"))
    assert state.step == 3 and state.trials == {"demo/a": 3} and not state.succeeded


def test_steps_and_context_commit_together(store: SQLiteStore, evaluator: Any) -> None:
    """A step that fails after its context actions were written leaves neither behind."""

    class FailingRAG:
        def query(self, kb: Any, tasks: Any, last: Any, *, run_id: str, attempt: int) -> Any:
            from costeer_lab.records import QueriedKnowledge

            return QueriedKnowledge()

        def generate_knowledge(self, kb: Any, trace: Any, *, run_id: str) -> None:
            raise RuntimeError("knowledge store is full")

    class KB:
        def stats(self) -> dict[str, int]:
            return {}

    hook = TaskContextHook()
    agent = _agent(
        store, evaluator, {"demo/a": [BAD]}, run_id="r", context=hook, rag=FailingRAG(), kb=KB()
    )
    with pytest.raises(RuntimeError, match="knowledge store is full"):
        agent.run(_item("a"))
    assert store.count_records("evo_step") == 0
    assert store.count_records("context_action") == 0
