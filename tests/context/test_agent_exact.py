"""Exact behaviour of the agent loop and its timeline, without the sandbox (fast: the mutation
run of ``context/_agent.py`` runs these per mutant).

A scripted planner moves the test clock by 2.5 s per step, so every timeline row is known to the
character: the rows an agent builder tabulates or plots (``kind``, ``id``, ``type``, ``t``,
``success``, ``confidence``, ``detail``, ``action``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from costeer_lab.context import (
    Action,
    AgentResult,
    ContextSettings,
    Evidence,
    Output,
    PlannedStep,
    RichMemoryManager,
    TaskAgent,
    TaskContext,
    ToolBox,
    Validator,
    timeline,
)
from costeer_lab.context._agent import PLANNER_DONE
from costeer_lab.store import SQLiteStore

from .conftest import Clock

_PATH = "reports/factor_decay/momentum_and_value_summary.md"  # 50 characters
_SUMMARY = "Momentum decays within three months.\nValue decays slowly."
_ANSWER = "Momentum decays within three months; value decays over years."


class Scripted:
    """Plans the given steps in order, then nothing; each step moves the clock by 2.5 s."""

    def __init__(self, clock: Clock, steps: Sequence[PlannedStep]) -> None:
        self.clock = clock
        self.steps = list(steps)

    def plan(self, ctx: TaskContext) -> PlannedStep | None:
        self.clock.now += 2.5
        return self.steps.pop(0) if self.steps else None


def _research_steps() -> list[PlannedStep]:
    return [
        PlannedStep("write_file", {"path": _PATH, "content": _SUMMARY}, "write the summary"),
        PlannedStep("validate", {}, "check what is missing"),
        PlannedStep("answer", {"text": _ANSWER, "sources": ["a.md", "b.md"]}, "answer"),
        PlannedStep("write_file", {"path": "extra.md", "content": "never written"}, "more"),
    ]


def test_research_run_result_and_exact_timeline(
    mm: RichMemoryManager, clock: Clock, tmp_path: Path
) -> None:
    planner = Scripted(clock, _research_steps())
    agent = TaskAgent(mm, planner, ToolBox(tmp_path))
    result = agent.run("Research how factor returns decay", task_id="decay")
    assert result.task_id == "decay"
    assert result.completed and result.stop_reason is None
    # complete after the answer: the planner is not asked again, its last step is never taken
    assert result.n_actions == 3 and len(planner.steps) == 1
    assert not (tmp_path / "extra.md").exists()
    assert re.fullmatch(r"plan-[0-9a-f]{12}", result.plan_id)
    assert [a.context.plan_id for a in result.context.actions] == [result.plan_id] * 3
    assert mm.get_task("decay") == result.context
    # the validate tool saw the task's context as it was after the first action
    validate = result.context.actions[1]
    assert validate.outputs.result == (
        "research_task not complete; met summary: summary written to " + _PATH
        + "; missing sources: no sources named or read"
    )  # fmt: skip
    assert timeline(result.context) == [
        {"kind": "action", "id": "act-0001", "type": "write_file", "t": 2.5, "success": True,
         "confidence": None, "detail": "path='reports/factor_decay/momentum_and_value_'",
         "action": "act-0001"},
        {"kind": "evidence", "id": "ev-0001", "type": "file_creation", "t": 2.5, "success": None,
         "confidence": 1.0, "detail": f"wrote {_PATH} (57 bytes)", "action": "act-0001"},
        {"kind": "evidence", "id": "ev-0002", "type": "documentation", "t": 2.5, "success": None,
         "confidence": 0.9, "detail": "Momentum decays within three months.",
         "action": "act-0001"},
        {"kind": "action", "id": "act-0002", "type": "validate", "t": 5.0, "success": False,
         "confidence": None, "detail": "", "action": "act-0002"},
        {"kind": "evidence", "id": "ev-0003", "type": "validation", "t": 5.0, "success": None,
         "confidence": 0.45,
         "detail": "research_task not complete; met summary: summary written to "
                   "reports/factor_decay",
         "action": "act-0002"},
        {"kind": "action", "id": "act-0003", "type": "answer", "t": 7.5, "success": True,
         "confidence": None,
         "detail": "text='Momentum decays within three months; val', sources=\"['a.md', 'b.md']\"",
         "action": "act-0003"},
        {"kind": "evidence", "id": "ev-0004", "type": "synthesis", "t": 7.5, "success": None,
         "confidence": 0.8, "detail": _ANSWER, "action": "act-0003"},
    ]  # fmt: skip


def test_a_loop_rule_stops_the_run_with_its_reason(
    mm: RichMemoryManager, clock: Clock, tmp_path: Path
) -> None:
    """The same failing step again and again: stopped at the third (``max_repeats`` 3), the
    planner's remaining steps are not taken and the rule is the result's ``stop_reason``."""
    step = PlannedStep("read_file", {"path": "missing.txt"}, "look again")
    planner = Scripted(clock, [step] * 5)
    result = TaskAgent(mm, planner, ToolBox(tmp_path)).run("Tidy the results folder")
    assert not result.completed and result.n_actions == 3 and len(planner.steps) == 2
    assert result.stop_reason == result.context.stop_reason
    assert result.stop_reason == (
        "repeated_action: action 'read_file' with the same inputs "
        '{"path": "missing.txt"} taken 3 times; the limit is 3'
    )
    assert [r["detail"] for r in timeline(result.context)] == ["path='missing.txt'"] * 3


def test_timeline_of_a_hand_built_context_with_empty_evidence() -> None:
    """Evidence without content gives an empty detail; a first line is cut at 80 characters;
    an action without inputs has an empty detail; rows follow the actions' order."""
    long_line = "x" * 100
    ev = (
        Evidence("ev-1", "execution", "", 0.7, "run_python", 12.0),
        Evidence("ev-2", "execution", long_line + "\nsecond", 0.6, "run_python", 13.0),
    )
    act = Action("act-1", "validate", {}, Output(False), 11.0, False, ("ev-2", "ev-1"))
    ctx = TaskContext("t", "general_task", "x", actions=(act,), evidence=ev, created_at=10.0)
    assert timeline(ctx) == [
        {"kind": "action", "id": "act-1", "type": "validate", "t": 1.0, "success": False,
         "confidence": None, "detail": "", "action": "act-1"},
        {"kind": "evidence", "id": "ev-2", "type": "execution", "t": 3.0, "success": None,
         "confidence": 0.6, "detail": "x" * 80, "action": "act-1"},
        {"kind": "evidence", "id": "ev-1", "type": "execution", "t": 2.0, "success": None,
         "confidence": 0.7, "detail": "", "action": "act-1"},
    ]  # fmt: skip


def test_toolbox_without_validator_gets_the_managers(
    store: SQLiteStore, clock: Clock, tmp_path: Path
) -> None:
    """A summary of any length counts for this manager (doc_min_chars=0), not for the default
    validator (50): the validate tool must judge with the manager's settings."""
    mm = RichMemoryManager(store, settings=ContextSettings(doc_min_chars=0), clock=clock)
    steps = [
        PlannedStep("write_file", {"path": "summary.md", "content": "Momentum decays."}),
        PlannedStep("validate", {}),
    ]
    agent = TaskAgent(mm, Scripted(clock, steps), ToolBox(tmp_path))
    assert agent.tools.validator is mm.validator
    result = agent.run("Research how factor returns decay", task_id="r")
    assert result.context.actions[1].outputs.result == (
        "research_task not complete; met summary: summary written to summary.md; "
        "missing sources: no sources named or read"
    )
    assert result.stop_reason == PLANNER_DONE


def test_toolbox_keeps_its_own_validator(
    mm: RichMemoryManager, clock: Clock, tmp_path: Path
) -> None:
    own = Validator(ContextSettings(doc_min_chars=1000))
    steps = [
        PlannedStep("write_file", {"path": "summary.md", "content": _SUMMARY}),
        PlannedStep("validate", {}),
    ]
    agent = TaskAgent(mm, Scripted(clock, steps), ToolBox(tmp_path, validator=own))
    assert agent.tools.validator is own
    result = agent.run("Research how factor returns decay", task_id="r")
    assert result.context.actions[1].outputs.result == (
        "research_task not complete; missing summary: no synthesis evidence and no summary "
        "file; missing sources: no sources named or read"
    )


def test_tools_given_as_a_directory(mm: RichMemoryManager, clock: Clock, tmp_path: Path) -> None:
    work = tmp_path / "work"
    steps = [PlannedStep("write_file", {"path": "notes.txt", "content": "Paris"})]
    agent = TaskAgent(mm, Scripted(clock, steps), str(work))
    assert isinstance(agent.tools, ToolBox) and agent.tools.workdir == work.resolve()
    assert agent.tools.validator is mm.validator
    result = agent.run("What is the capital of France?", task_id="q")
    assert result.completed and (work / "notes.txt").read_text(encoding="utf-8") == "Paris"


def test_result_dict_round_trip_keeps_the_stop_reason(
    mm: RichMemoryManager, clock: Clock, tmp_path: Path
) -> None:
    agent = TaskAgent(mm, Scripted(clock, []), ToolBox(tmp_path))
    result = agent.run("Implement a parser", task_id="p")
    assert not result.completed and result.n_actions == 0
    d = result.to_dict()
    assert list(d) == ["task_id", "completed", "stop_reason", "report", "context", "plan_id"]
    assert d["stop_reason"] == PLANNER_DONE == "planner_done: the planner has no further step"
    back = AgentResult.from_dict(json.loads(json.dumps(d)))
    assert back == result and back.stop_reason == PLANNER_DONE


def test_result_from_an_old_dict_without_plan_id_or_stop_reason(
    mm: RichMemoryManager, clock: Clock, tmp_path: Path
) -> None:
    agent = TaskAgent(mm, Scripted(clock, []), ToolBox(tmp_path))
    d = agent.run("Implement a parser", task_id="p").to_dict()
    del d["plan_id"], d["stop_reason"]
    old = AgentResult.from_dict(d)
    assert old.plan_id == "" and old.stop_reason is None
    assert old.task_id == "p" and not old.completed
