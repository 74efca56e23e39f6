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
