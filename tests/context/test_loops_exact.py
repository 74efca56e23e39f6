"""Loop prevention pinned exactly: the action key's form and the repeated-action reason."""

from __future__ import annotations

from pathlib import Path

from costeer_lab.context import (
    Action,
    ContextSettings,
    LoopVerdict,
    Output,
    TaskContext,
    action_key,
    check_loops,
)


def test_action_keys_are_16_hex_digits_of_any_inputs() -> None:
    key = action_key("read_file", {"path": Path("a.txt")})  # not JSON: read as its str
    assert key == action_key("read_file", {"path": "a.txt"})
    assert len(key) == 16 and int(key, 16) >= 0
    # non-ASCII text is hashed as written (UTF-8), so keys of stored tasks stay the same
    assert action_key("write_file", {"content": "é"}) == "7e14d4045a0afdb1"


def test_a_long_repeated_input_is_cut_in_the_reason() -> None:
    inputs = {"content": "x" * 200}
    actions = tuple(
        Action(f"a{i}", "write_file", inputs, Output(True), 0.0, True) for i in range(3)
    )
    ctx = TaskContext("t", "coding_task", "write", actions=actions)
    verdict = check_loops(ctx, now=0.0, settings=ContextSettings())
    shown = '{"content": "' + "x" * 104 + "..."
    assert verdict == LoopVerdict(
        "repeated_action",
        f"action 'write_file' with the same inputs {shown} taken 3 times; the limit is 3",
    )


def _repeated(inputs: dict[str, str]) -> TaskContext:
    actions = tuple(
        Action(f"a{i}", "write_file", inputs, Output(True), 0.0, True) for i in range(3)
    )
    return TaskContext("t", "coding_task", "write", actions=actions)


def test_inputs_of_exactly_120_characters_are_shown_whole() -> None:
    inputs = {"content": "x" * 105}  # {"content": "xxx…"} is 120 characters
    verdict = check_loops(_repeated(inputs), now=0.0, settings=ContextSettings())
    assert verdict is not None and '"content": "' + "x" * 105 + '"} taken 3' in verdict.reason
    longer = check_loops(_repeated({"content": "x" * 106}), now=0.0, settings=ContextSettings())
    assert longer is not None and '"content": "' + "x" * 104 + "... taken 3" in longer.reason


def test_the_stall_rule_fires_only_past_stall_seconds() -> None:
    actions = tuple(Action(f"a{i}", "list", {"i": i}, Output(True), 0.0, True) for i in range(6))
    ctx = TaskContext("t", "general_task", "tidy", actions=actions, created_at=100.0)
    s = ContextSettings(stall_seconds=60.0, stall_min_actions=5)
    assert check_loops(ctx, now=160.0, settings=s) is None
    assert check_loops(ctx, now=161.0, settings=s) == LoopVerdict(
        "no_new_evidence", "no new evidence for 61 s after 6 actions; the limit is 60 s"
    )
