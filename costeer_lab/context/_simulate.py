"""What a step would do to a context, assuming it succeeds: the planner's look-ahead.

:func:`apply_step` records a hypothetical action the way :class:`RichMemoryManager` records a
real one (files registered and documented, evidence extracted) without storing anything, so the
:class:`Validator` can say which open requirements the step would close.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costeer_lab.context._evidence import extract_evidence, register_file
from costeer_lab.context._records import Action, Output
from costeer_lab.context._task import TaskContext

__all__ = ["apply_step", "expected_output"]


def expected_output(tool: str, inputs: Mapping[str, Any]) -> Output:
    """The output ``tool`` gives when it succeeds (runs exit 0; a write writes its content).

    Example:
        >>> expected_output("write_file", {"path": "a.py", "content": "x = 1"}).files
        {'a.py': 'x = 1'}
    """
    if tool == "write_file":
        path, content = str(inputs.get("path", "")), str(inputs.get("content", ""))
        return Output(True, f"wrote {path}", files={path: content})
    if tool in ("run_python", "evaluate"):
        return Output(True, "", metadata={"returncode": 0})
    if tool == "answer":
        return Output(
            True, str(inputs.get("text", "")), metadata={"sources": inputs.get("sources", [])}
        )
    return Output(True, "")


def apply_step(
    ctx: TaskContext, tool: str, inputs: Mapping[str, Any], *, doc_min_chars: int = 50
) -> TaskContext:
    """``ctx`` after a successful ``tool`` call with ``inputs`` (nothing is stored).

    Example:
        >>> ctx = TaskContext("t", "simple_question", "6 * 7?")
        >>> [e.type for e in apply_step(ctx, "answer", {"text": "42"}).evidence]
        ['synthesis']
    """
    output = expected_output(tool, inputs)
    action_id = f"act-{len(ctx.actions) + 1:04d}"
    files = {f.path: f for f in ctx.files}
    new = []
    for path, content in output.files.items():
        ref = register_file(
            path,
            content,
            file_id=f"file-{len(files) + 1:04d}",
            action_id=action_id,
            now=ctx.updated_at,
            previous=files.get(path),
        )
        files[path] = ref
        new.append(ref)
    evidence = extract_evidence(
        tool,
        action_id,
        inputs,
        output,
        new,
        now=ctx.updated_at,
        first_index=len(ctx.evidence) + 1,
        doc_min_chars=doc_min_chars,
    )
    action = Action(action_id, tool, dict(inputs), output, ctx.updated_at, True,
                    tuple(e.id for e in evidence))  # fmt: skip
    return ctx.with_(
        actions=(*ctx.actions, action),
        evidence=(*ctx.evidence, *evidence),
        files=tuple(files.values()),
    )
