"""Append one action to a task context: its files registered (and documented), its evidence
extracted, the action itself recorded. Used by :class:`RichMemoryManager` for real actions (it
then stores what changed) and by the planner's look-ahead (:func:`apply_step`, nothing stored).

Example:
    >>> from costeer_lab.context._records import Output
    >>> ctx = TaskContext("t", "coding_task", "Write a parser")
    >>> done = append_action(ctx, "write_file", {"path": "p.py"},
    ...     Output(True, "wrote p.py", files={"p.py": "x = 1"}), now=0.0, doc_min_chars=50)
    >>> done.action.id, [f.path for f in done.context.files], [f.path for f in done.new_files]
    ('act-0001', ['p.py'], ['p.py'])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from costeer_lab.context._evidence import extract_evidence, register_file
from costeer_lab.context._records import Action, ActionContext, Evidence, FileReference, Output
from costeer_lab.context._task import TaskContext

__all__ = ["Appended", "append_action"]


@dataclass(frozen=True)
class Appended:
    """A context with one more action, and what that action added."""

    context: TaskContext
    action: Action
    evidence: tuple[Evidence, ...]
    new_files: tuple[FileReference, ...]


def append_action(
    ctx: TaskContext,
    action_type: str,
    inputs: Mapping[str, Any],
    output: Output,
    *,
    now: float,
    doc_min_chars: int,
    action_context: ActionContext | None = None,
) -> Appended:
    """``ctx`` with the action appended (files, evidence, action), at time ``now``."""
    action_id = f"act-{len(ctx.actions) + 1:04d}"
    files = {f.path: f for f in ctx.files}
    new: list[FileReference] = []
    for path, content in output.files.items():
        ref = register_file(
            path,
            content,
            file_id=f"file-{len(files) + 1:04d}",
            action_id=action_id,
            now=now,
            previous=files.get(path),
        )
        files[path] = ref
        new.append(ref)
    evidence = tuple(
        extract_evidence(
            action_type,
            action_id,
            inputs,
            output,
            new,
            now=now,
            first_index=len(ctx.evidence) + 1,
            doc_min_chars=doc_min_chars,
        )
    )
    action = Action(
        id=action_id,
        type=action_type,
        inputs=dict(inputs),
        outputs=output,
        timestamp=now,
        success=output.success,
        evidence=tuple(e.id for e in evidence),
        context=action_context or ActionContext(),
    )
    updated = ctx.with_(
        actions=(*ctx.actions, action),
        evidence=(*ctx.evidence, *evidence),
        files=tuple(files.values()),
    )
    return Appended(updated, action, evidence, tuple(new))
