"""What a step would do to a context, assuming it succeeds: the planner's look-ahead.

:func:`apply_step` records a hypothetical action the way :class:`RichMemoryManager` records a
real one (files registered and documented, evidence extracted) without storing anything, so the
:class:`Validator` can say which open requirements the step would close.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costeer_lab.context._append import append_action
from costeer_lab.context._records import Output
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
    return append_action(
        ctx, tool, inputs, output, now=ctx.updated_at, doc_min_chars=doc_min_chars
    ).context
