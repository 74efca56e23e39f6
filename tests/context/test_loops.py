"""Loop prevention: each rule stops the task with its reason; completion takes precedence."""

from __future__ import annotations

from costeer_lab.context import (
    LOOP_RULES,
    ContextSettings,
    Output,
    RichMemoryManager,
    action_key,
    check_loops,
)
from costeer_lab.store import SQLiteStore

from .conftest import Clock


def test_rules_are_listed_in_order() -> None:
    assert LOOP_RULES == ("max_actions", "repeated_action", "max_validations", "no_new_evidence")


def test_forty_actions(mm: RichMemoryManager, clock: Clock) -> None:
    mm.create_task("Tidy the results folder", task_id="g")
    for i in range(39):
        clock.now += 1
        ctx = mm.add_action("g", "look", {"i": i}, Output(False, "nothing"))
        assert ctx.stop_reason is None, i
    ctx = mm.add_action("g", "look", {"i": 39}, Output(False, "nothing"))
    assert ctx.stop_reason == "max_actions: 40 actions taken; the limit is 40"
    assert ctx.metadata["stop_rule"] == "max_actions" and not ctx.complete


def test_same_action_three_times(mm: RichMemoryManager) -> None:
    mm.create_task("Tidy the results folder", task_id="g")
    mm.add_action("g", "look", {"dir": "a", "deep": True}, Output(False))
    mm.add_action("g", "look", {"dir": "b", "deep": True}, Output(False))  # other inputs
    ctx = mm.add_action("g", "peek", {"dir": "a", "deep": True}, Output(False))  # other type
    ctx = mm.add_action("g", "look", {"deep": True, "dir": "a"}, Output(False))  # key order
    assert ctx.stop_reason is None
    ctx = mm.add_action("g", "look", {"dir": "a", "deep": True}, Output(False))
    assert ctx.stop_reason == (
        "repeated_action: action 'look' with the same inputs "
        '{"deep": true, "dir": "a"} taken 3 times; the limit is 3'
    )
    assert action_key("look", {"dir": "a"}) != action_key("look", {"dir": "b"})


def test_five_validations(mm: RichMemoryManager) -> None:
    mm.create_task("Tidy the results folder", task_id="g")
    for i in range(4):
        ctx = mm.add_action("g", "validate", {"round": i}, Output(False, "not yet"))
        assert ctx.stop_reason is None
    ctx = mm.add_action("g", "validate", {"round": 4}, Output(False, "not yet"))
    assert ctx.stop_reason == ("max_validations: 5 validations without completing; the limit is 5")


def test_no_new_evidence_for_a_minute_after_five_actions(
    mm: RichMemoryManager, clock: Clock
) -> None:
    mm.create_task("Tidy the results folder", task_id="g")
    mm.add_action("g", "run_python", {"path": "a.py"}, Output(False, "exit code 1"))  # evidence
    for i in range(4):
        clock.now += 30
        ctx = mm.add_action("g", "look", {"i": i}, Output(False))
        assert ctx.stop_reason is None  # five actions or fewer: no time rule yet
    clock.now += 30
    ctx = mm.add_action("g", "look", {"i": 4}, Output(False))  # sixth action, 150 s idle
    assert ctx.stop_reason == (
        "no_new_evidence: no new evidence for 150 s after 6 actions; the limit is 60 s"
    )


def test_new_evidence_keeps_a_long_task_going(mm: RichMemoryManager, clock: Clock) -> None:
    mm.create_task("Tidy the results folder", task_id="g")
    for i in range(10):
        clock.now += 50
        ctx = mm.add_action("g", "run_python", {"i": i}, Output(False, "exit code 1"))
        assert ctx.stop_reason is None, i
    assert mm.check_loops("g") is None
    clock.now += 61
    verdict = mm.check_loops("g")
    assert verdict is not None and verdict.rule == "no_new_evidence"
    assert mm.get_task("g").stop_reason is None  # check_loops stores nothing


def test_completion_wins_and_a_stopped_task_keeps_its_reason(
    mm: RichMemoryManager, store: SQLiteStore
) -> None:
    mm.create_task("What is 6 * 7?", task_id="q")
    mm.add_action("q", "answer", {"text": ""}, Output(False))
    mm.add_action("q", "answer", {"text": ""}, Output(False))
    ctx = mm.add_action("q", "answer", {"text": ""}, Output(True, "42"))
    assert ctx.complete and ctx.stop_reason is None  # complete, although repeated 3 times
    mm.create_task("Tidy", task_id="g", task_type="general_task")
    for _ in range(3):
        ctx = mm.add_action("g", "look", {}, Output(False))
    reason = ctx.stop_reason
    ctx = mm.add_action("g", "run_python", {}, Output(True, "done"))
    assert ctx.stop_reason == reason and not ctx.complete and len(ctx.actions) == 4


def test_limits_come_from_settings(store: SQLiteStore, settings_env: object) -> None:
    settings = settings_env(CONTEXT__MAX_REPEATS="2", CONTEXT__MAX_ACTIONS="7")  # type: ignore[operator]
    assert settings.context == ContextSettings(max_repeats=2, max_actions=7)
    mm = RichMemoryManager(store)
    mm.create_task("Tidy", task_id="g", task_type="general_task")
    mm.add_action("g", "look", {}, Output(False))
    ctx = mm.add_action("g", "look", {}, Output(False))
    assert ctx.stop_reason is not None and "taken 2 times; the limit is 2" in ctx.stop_reason
    assert check_loops(ctx, now=0.0, settings=ContextSettings()) is None
