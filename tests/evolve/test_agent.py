"""EvoAgent loop: stopping, trial limits, fallback, resume, ground-truth isolation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from costeer_lab.errors import ConfigurationError
from costeer_lab.evolve import EvoAgent, EvolvingItem, EvolvingStrategy, make_executor
from costeer_lab.evolve._strategy import _coder
from costeer_lab.store import SQLiteStore
from costeer_lab.testing import ScriptedCoder

from .conftest import BAD, CANARY, CRASH, GOOD, gt_workspace, make_task

SCRIPTED = ScriptedCoder.name  # "costeer_lab.testing:ScriptedCoder", by import path


def _agent(store: SQLiteStore, evaluator: Any, script: dict[str, Any], **kw: Any) -> EvoAgent:
    strategy = EvolvingStrategy(
        {"name": SCRIPTED, "script": script}, max_trials=kw.pop("max_trials", 10)
    )
    return EvoAgent(strategy=strategy, evaluator=evaluator, store=store, progress=False, **kw)


def _item(*names: str) -> EvolvingItem:
    tasks = [make_task(n) for n in names]
    return EvolvingItem.from_tasks(tasks, [gt_workspace() for _ in tasks])


@pytest.fixture(autouse=True)
def _fresh_coders() -> None:
    _coder.cache_clear()  # scripted coders count calls; start every test from zero


def test_loop_stops_when_every_task_succeeds(store: SQLiteStore, evaluator: Any) -> None:
    script = {"demo/a": [BAD, CRASH, GOOD], "demo/b": [GOOD]}
    state = _agent(store, evaluator, script, max_loop=10, run_id="r").run(_item("a", "b"))
    assert state.step == 3
    assert state.succeeded == {"demo/a", "demo/b"}
    attempts = [(r["task_id"], r["step"]) for r in state.rows]
    assert attempts == [("demo/a", 1), ("demo/b", 1), ("demo/a", 2), ("demo/a", 3)]
    crash = state.rows[2]["feedback"]
    assert crash["final_decision"] is False and crash["error_fingerprints"]


def test_trial_limit_skips_the_task(store: SQLiteStore, evaluator: Any) -> None:
    script = {"demo/a": [BAD], "demo/b": [BAD, BAD, BAD, GOOD]}
    agent = _agent(store, evaluator, script, max_loop=10, max_trials=2, run_id="r")
    state = agent.run(_item("a", "b"))
    assert state.trials == {"demo/a": 2, "demo/b": 2}
    assert state.step == 2 and not state.succeeded


def test_max_loop_bounds_the_run_and_fallback_keeps_best(
    store: SQLiteStore, evaluator: Any
) -> None:
    script = {"demo/a": [CRASH, GOOD], "demo/b": [BAD]}
    item = _item("a", "b")
    state = _agent(store, evaluator, script, max_loop=2, run_id="r").run(item)
    assert state.step == 2
    assert item.implementations[0] is not None and "x + 1" in item.implementations[0].code
    assert item.implementations[1] is not None and item.implementations[1].code.endswith("x\n")


def test_resume_continues_from_the_last_completed_step(store: SQLiteStore, evaluator: Any) -> None:
    script = {"demo/a": [BAD, BAD, GOOD]}
    first = _agent(store, evaluator, script, max_loop=1, run_id="r").run(_item("a"))
    assert first.step == 1 and not first.succeeded
    # a new agent on the same store and run id picks up at step 2
    second = _agent(store, evaluator, script, max_loop=5, run_id="r").run(_item("a"))
    assert second.step == 3 and second.succeeded == {"demo/a"}
    assert [r["step"] for r in second.rows] == [1, 2, 3]
    # a finished run does no more work
    third = _agent(store, evaluator, script, max_loop=5, run_id="r").run(_item("a"))
    assert third.step == 3 and len(third.rows) == 3


def test_resume_refuses_a_different_task_set(store: SQLiteStore, evaluator: Any) -> None:
    _agent(store, evaluator, {"demo/a": [GOOD]}, max_loop=1, run_id="r").run(_item("a"))
    with pytest.raises(ConfigurationError, match="other tasks or seed"):
        _agent(store, evaluator, {"demo/b": [GOOD]}, max_loop=1, run_id="r").run(_item("b"))


def test_coder_never_receives_ground_truth(store: SQLiteStore, evaluator: Any) -> None:
    """Canary: the ground truth (and its hidden tests) never reach the coder."""
    script = {"demo/a": [BAD, GOOD], "demo/b": [CRASH, GOOD]}
    agent = _agent(store, evaluator, script, max_loop=3, run_id="r")
    agent.run(_item("a", "b"))
    coder = _coder(json.dumps({"name": SCRIPTED, "script": script, "seed": 0}, sort_keys=True))
    assert isinstance(coder, ScriptedCoder)
    assert len(coder.calls) == 4
    for call in coder.calls:
        seen = json.dumps(
            [
                call.task.to_dict(),
                call.queried_knowledge.to_dict(),
                None if call.last_feedback is None else call.last_feedback.to_dict(),
            ]
        )
        assert CANARY not in seen
    # ...while the evaluator did use it: the hidden tests ran
    assert any(
        "assert" in (r["feedback"]["return_checking"] or "") for r in agent.load_state().rows
    )


def test_dask_executor_path(store: SQLiteStore, evaluator: Any) -> None:
    pytest.importorskip("distributed")
    executor = make_executor("dask", 2)
    try:
        strategy = EvolvingStrategy(
            {"name": SCRIPTED, "script": {"demo/a": [GOOD], "demo/b": [GOOD], "demo/c": [BAD]}},
            executor=executor,
            max_trials=1,
        )
        agent = EvoAgent(
            strategy=strategy, evaluator=evaluator, store=store, run_id="dask", progress=False
        )
        state = agent.run(_item("a", "b", "c"))
    finally:
        executor.shutdown()
    assert state.succeeded == {"demo/a", "demo/b"}
    assert state.trials == {"demo/a": 1, "demo/b": 1, "demo/c": 1}


def test_process_pool_executor_path(store: SQLiteStore, evaluator: Any) -> None:
    with make_executor("process", 2) as executor:
        strategy = EvolvingStrategy(
            {"name": SCRIPTED, "script": {"demo/a": [GOOD], "demo/b": [BAD]}},
            executor=executor,
            max_trials=1,
        )
        agent = EvoAgent(
            strategy=strategy, evaluator=evaluator, store=store, run_id="p", progress=False
        )
        state = agent.run(_item("a", "b"))
    assert state.succeeded == {"demo/a"}
