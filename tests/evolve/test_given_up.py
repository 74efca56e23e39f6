"""A task the RAG strategy gave up on (past its trial limit) stops: no empty steps, no queries."""

from __future__ import annotations

from typing import Any

import pytest

from costeer_lab.evolve import EvoAgent, EvolvingItem, EvolvingStrategy
from costeer_lab.evolve._agent import STEP_KIND
from costeer_lab.evolve._strategy import _coder
from costeer_lab.knowledge import RAGSettings, RAGStrategyV1, iter_query_log, open_kb
from costeer_lab.store import SQLiteStore
from costeer_lab.testing import ScriptedCoder

from .conftest import BAD, GOOD, gt_workspace, make_task

#: "demo/a" never passes; "demo/b" passes at once.
SCRIPT = {"demo/a": [BAD], "demo/b": [GOOD]}


@pytest.fixture(autouse=True)
def _fresh_coders() -> None:
    _coder.cache_clear()  # scripted coders count calls; start every test from zero


def _agent(store: SQLiteStore, evaluator: Any) -> EvoAgent:
    """RAG V1 that gives a task up after 2 failed attempts, in a loop allowed 10 steps."""
    rag = RAGStrategyV1(RAGSettings(trial_limit=2))
    return EvoAgent(
        strategy=EvolvingStrategy({"name": ScriptedCoder.name, "script": SCRIPT}, max_trials=10),
        evaluator=evaluator,
        store=store,
        rag=rag,
        kb=open_kb(store=store, version="v1"),
        run_id="r",
        max_loop=10,
        query_kinds=rag.query_kinds,
        progress=False,
    )


def _item() -> EvolvingItem:
    tasks = [make_task("a"), make_task("b")]
    return EvolvingItem.from_tasks(tasks, [gt_workspace() for _ in tasks])


def _queried_attempts(store: SQLiteStore, task_id: str) -> list[int]:
    """The attempts at which the RAG strategy queried for ``task_id`` (one per query round)."""
    rows = iter_query_log(store, run_id="r", task_id=task_id)
    return sorted({int(r["attempt"]) for r in rows})


def test_the_loop_stops_a_task_the_rag_strategy_gave_up_on(
    store: SQLiteStore, evaluator: Any
) -> None:
    state = _agent(store, evaluator).run(_item())
    # a fails at steps 1 and 2; the query of step 3 gives it up, and nothing is left to run
    assert [(r["task_id"], r["step"]) for r in state.rows] == [
        ("demo/a", 1),
        ("demo/b", 1),
        ("demo/a", 2),
    ]
    assert state.step == 2 and len(state.step_walls) == 2
    assert state.given_up == {"demo/a"} and state.succeeded == {"demo/b"}
    assert store.count_records(STEP_KIND) == 2  # no empty step records up to max_loop
    assert _queried_attempts(store, "demo/a") == [1, 2, 3]  # not once per step until 10
    assert _queried_attempts(store, "demo/b") == [1]


def test_a_resumed_run_remembers_what_was_given_up(store: SQLiteStore, evaluator: Any) -> None:
    _agent(store, evaluator).run(_item())
    queries = len(iter_query_log(store, run_id="r"))
    again = _agent(store, evaluator).run(_item())
    assert again.given_up == {"demo/a"} and again.step == 2 and again.step_walls == []
    assert len(iter_query_log(store, run_id="r")) == queries  # no new query round
