"""Loop prevention: rules that stop a task going round in circles, each with its reason.

Checked in this order after every action (limits from
:class:`~costeer_lab.settings.ContextSettings`):

1. ``max_actions`` — the task has taken ``max_actions`` (40) actions;
2. ``repeated_action`` — the same action (type and inputs, compared as canonical JSON) was
   taken ``max_repeats`` (3) times;
3. ``max_validations`` — ``max_validations`` (5) ``validate`` actions;
4. ``no_new_evidence`` — more than ``stall_min_actions`` (5) actions and no new evidence during
   the last ``stall_seconds`` (60 s).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from costeer_lab.context._task import TaskContext
from costeer_lab.settings import ContextSettings, get_settings

__all__ = ["LOOP_RULES", "LoopVerdict", "action_key", "check_loops"]

#: Names of the loop-prevention rules, in the order they are checked.
LOOP_RULES: tuple[str, ...] = (
    "max_actions",
    "repeated_action",
    "max_validations",
    "no_new_evidence",
)


@dataclass(frozen=True)
class LoopVerdict:
    """A loop-prevention rule that fired: its name and a readable reason."""

    rule: str
    reason: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.reason}"


def action_key(action_type: str, inputs: Mapping[str, Any]) -> str:
    """A digest of an action's type and inputs (equal for equal actions).

    Example:
        >>> action_key("write_file", {"path": "a", "content": "x"}) == action_key(
        ...     "write_file", {"content": "x", "path": "a"})
        True
    """
    text = json.dumps([action_type, inputs], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def check_loops(
    ctx: TaskContext, *, now: float, settings: ContextSettings | None = None
) -> LoopVerdict | None:
    """The first loop-prevention rule ``ctx`` breaks at time ``now``, or ``None``.

    Example:
        >>> check_loops(TaskContext("t", "general_task", "tidy up"), now=0.0) is None
        True
    """
    s = settings or get_settings().context
    n = len(ctx.actions)
    if n >= s.max_actions:
        return LoopVerdict("max_actions", f"{n} actions taken; the limit is {s.max_actions}")
    counts = Counter(action_key(a.type, a.inputs) for a in ctx.actions)
    if counts:
        key, times = counts.most_common(1)[0]
        if times >= s.max_repeats:
            action = next(a for a in ctx.actions if action_key(a.type, a.inputs) == key)
            inputs = json.dumps(action.inputs, sort_keys=True, default=str)
            if len(inputs) > 120:
                inputs = inputs[:117] + "..."
            return LoopVerdict(
                "repeated_action",
                f"action {action.type!r} with the same inputs {inputs} taken {times} times; "
                f"the limit is {s.max_repeats}",
            )
    validations = sum(1 for a in ctx.actions if a.type == "validate")
    if validations >= s.max_validations:
        return LoopVerdict(
            "max_validations",
            f"{validations} validations without completing; the limit is {s.max_validations}",
        )
    if n > s.stall_min_actions:
        last = max((e.timestamp for e in ctx.evidence), default=ctx.created_at)
        idle = now - last
        if idle > s.stall_seconds:
            return LoopVerdict(
                "no_new_evidence",
                f"no new evidence for {idle:.0f} s after {n} actions; the limit is "
                f"{s.stall_seconds:.0f} s",
            )
    return None
