"""Chat prompts of :class:`~costeer_lab.coders.LLMCoder`, built from the task and its knowledge."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from costeer_lab.coders._contracts import contract_for, task_family
from costeer_lab.records import Knowledge, QueriedKnowledge, SingleFeedback, Task, Workspace
from costeer_lab.settings import LLMSettings

__all__ = [
    "COMPLETION_STOP",
    "FENCE_STOP",
    "Prompt",
    "build_completion_prompt",
    "build_prompt",
    "function_stub",
]

_SYSTEM = """\
You are an expert Python developer implementing one task at a time. Follow this contract exactly:

{contract}

Reply with the complete program in a single ```python fenced block. Learn from the similar
successful implementations, your former failed attempts and the known error fixes below, but
implement THIS task (its own parameters, fields and names)."""

#: ``task.extra`` keys never shown in the task section (the contract goes to the system prompt).
_HIDDEN_EXTRA = frozenset({"contract", "family"})


@dataclass(frozen=True)
class Prompt:
    """Chat messages plus the ids of the knowledge items shown in them."""

    messages: tuple[dict[str, str], ...]
    used_knowledge_ids: tuple[str, ...]


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n... [{cut} characters cut] ...\n{text[-half:]}"


def _code(ws: Workspace, limit: int) -> str:
    parts = []
    for path, text in sorted(ws.files.items(), key=lambda kv: (kv[0] != ws.main_file, kv[0])):
        parts.append(f"# file: {path}\n```python\n{_clip(text.rstrip(), limit)}\n```")
    return "\n".join(parts) if parts else "(no files)"


def _task_text(task: Task) -> str:
    lines = [f"Name: {task.name}", f"Description: {task.description}"]
    if task.formulation:
        lines.append(f"Formulation: {task.formulation}")
    for key, meaning in task.variables.items():
        lines.append(f"Variable {key}: {meaning}")
    return "\n".join(lines)


def _feedback_text(fb: SingleFeedback, limit: int) -> str:
    parts = [f"Execution: {_clip(fb.execution.strip(), limit) or '(none)'}"]
    if fb.return_checking:
        parts.append(f"Return checking: {_clip(fb.return_checking.strip(), limit)}")
    if fb.code:
        parts.append(f"Code review: {_clip(fb.code.strip(), limit)}")
    verdict = {True: "SUCCESS", False: "FAIL", None: "UNDECIDED"}[fb.final_decision]
    parts.append(f"Final decision: {verdict}")
    return "\n".join(parts)


def _target_section(task: Task, limit: int) -> str:
    out = ["## Task to implement", _task_text(task)]
    extra = {k: v for k, v in sorted(task.extra.items()) if k not in _HIDDEN_EXTRA}
    prompt = extra.pop("prompt", None)
    if isinstance(prompt, str) and prompt.strip():
        out.append(f"Complete this code:\n```python\n{_clip(prompt.rstrip(), limit)}\n```")
    if extra:
        shown = json.dumps(extra, ensure_ascii=False, sort_keys=True, default=str)
        out.append(f"Other task information: {_clip(shown, limit)}")
    return "\n".join(out)


def _knowledge_items(items: Iterable[Knowledge], limit: int, with_feedback: bool) -> list[str]:
    out = []
    for i, k in enumerate(items, 1):
        text = f"### {i}. {k.task.name}\n{_task_text(k.task)}\n{_code(k.implementation, limit)}"
        if with_feedback:
            text += f"\nFeedback:\n{_feedback_text(k.feedback, limit)}"
        out.append(text)
    return out


def build_prompt(
    task: Task,
    qk: QueriedKnowledge,
    last_feedback: SingleFeedback | None,
    settings: LLMSettings,
) -> Prompt:
    """System + user messages for one task, with at most ``settings.max_*`` items per section.

    Example:
        >>> p = build_prompt(Task("t", "MA5", "mean"), QueriedKnowledge(), None, LLMSettings())
        >>> [m["role"] for m in p.messages]
        ['system', 'user']
    """
    lim = settings.max_chars_per_item
    used: list[str] = []

    def note(ids: Iterable[str]) -> None:
        used.extend(i for i in ids if i and i not in used)

    sections = [_target_section(task, lim)]
    similar = [s.knowledge for s in qk.similar_successful.get(task.id, ())][: settings.max_similar]
    if similar:
        sections.append("## Similar tasks that were implemented successfully")
        sections.extend(_knowledge_items(similar, lim, with_feedback=False))
        note(k.id for k in similar)
    comps = [s.knowledge for s in qk.component_matches.get(task.id, ())]
    comps = [k for k in comps if k not in similar][: settings.max_component_matches]
    if comps:
        sections.append("## Successful tasks that share components with this task")
        sections.extend(_knowledge_items(comps, lim, with_feedback=False))
        note(k.id for k in comps)
    traces = list(qk.former_traces.get(task.id, ()))
    traces = traces[-settings.max_former_traces :] if settings.max_former_traces else []
    if traces:
        sections.append("## Your former attempts at this task (oldest first) and their feedback")
        sections.extend(_knowledge_items(traces, lim, with_feedback=True))
        note(k.id for k in traces)
    fixes = list(qk.error_fixes.get(task.id, ()))[: settings.max_error_fixes]
    if fixes:
        sections.append("## Known fixes for errors like the ones you hit")
        for i, fx in enumerate(fixes, 1):
            sections.append(
                f"### Fix {i} ({fx.fixed.task.name})\nError: {_clip(fx.error_text.strip(), lim)}\n"
                f"Failing code:\n{_code(fx.failed.implementation, lim)}\n"
                f"Fixed code:\n{_code(fx.fixed.implementation, lim)}"
            )
            note((fx.failed.id, fx.fixed.id))
    if last_feedback is not None:
        sections.append("## Feedback on your last attempt")
        sections.append(_feedback_text(last_feedback, lim))
    sections.append(
        f"Now write the complete {task_family(task)} implementation of {task.name!r} "
        "in one ```python block."
    )
    system = _SYSTEM.format(contract=contract_for(task))
    messages = (
        {"role": "system", "content": system},
        {"role": "user", "content": "\n\n".join(sections)},
    )
    return Prompt(messages, tuple(used))


#: Stop sequences of plain completions when ``LLMSettings.stop`` is ``None``: the model has
#: finished the function body when it starts another top-level statement.
COMPLETION_STOP = ("\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#", "\n\n\n")
#: Stop sequence of the plain-text fallback prompt (it ends in an opened code fence).
FENCE_STOP = ("\n```",)
#: Characters of the last attempt's feedback kept in a completion prompt's comment block.
_FEEDBACK_CHARS = 600


def function_stub(task: Task) -> str | None:
    """The task's Python function stub (signature + docstring, HumanEval style), if it has one.

    Example:
        >>> function_stub(Task("t", "add", "", extra={"prompt": "def add(a, b):\\n"}))
        'def add(a, b):\\n'
        >>> function_stub(Task("t", "MA5", "mean")) is None
        True
    """
    stub = task.extra.get("prompt")
    if isinstance(stub, str) and re.search(r"^def \w+\(", stub, re.M):
        return stub
    return None


def _commented(text: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in text.strip().splitlines())


def _main_code(ws: Workspace) -> str:
    return ws.files.get(ws.main_file, "").strip("\n")


def build_completion_prompt(
    task: Task,
    queried_knowledge: QueriedKnowledge,
    last_feedback: SingleFeedback | None,
    settings: LLMSettings,
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """``(prompt_text, stop, used_knowledge_ids)`` of a plain completion (base models).

    For a task with a Python function stub (:func:`function_stub`): the solved similar
    examples' code (similar successful, component matches, known fixes — up to the settings'
    limits; a listing longer than ``max_chars_per_item`` is left out rather than cut), each a
    complete function; then the last failing attempt and its feedback (short) as a comment
    block; then the target stub, which the model continues. ``stop`` is ``settings.stop`` or
    :data:`COMPLETION_STOP`. The workspace is the stub followed by the completion.

    Any other task (factor tasks) gets the chat prompt rendered as plain text ending in an
    opened ```` ```python ```` fence; ``stop`` is ``settings.stop`` or :data:`FENCE_STOP`.

    Example:
        >>> stub = "def inc(x):\\n    '''Add one.'''\\n"
        >>> text, stop, used = build_completion_prompt(
        ...     Task("t", "inc", "", extra={"prompt": stub}), QueriedKnowledge(), None,
        ...     LLMSettings(api="completions"))
        >>> text.endswith(stub), stop[0], used
        (True, '\\ndef ', ())
    """
    qk, lim = queried_knowledge, settings.max_chars_per_item
    stub = function_stub(task)
    if stub is None:
        prompt = build_prompt(task, qk, last_feedback, settings)
        text = "\n\n".join(f"### {m['role'].title()}\n{m['content']}" for m in prompt.messages)
        stop = tuple(settings.stop) if settings.stop is not None else FENCE_STOP
        return f"{text}\n\n### Assistant\n```python\n", stop, prompt.used_knowledge_ids
    used: list[str] = []
    blocks: list[str] = []

    def add(k: Knowledge) -> None:
        code = _main_code(k.implementation)
        if k.id not in used and code and len(code) <= lim and code not in blocks:
            blocks.append(code)
            used.append(k.id)

    for s in list(qk.similar_successful.get(task.id, ()))[: settings.max_similar]:
        add(s.knowledge)
    for s in list(qk.component_matches.get(task.id, ()))[: settings.max_component_matches]:
        add(s.knowledge)
    for fx in list(qk.error_fixes.get(task.id, ()))[: settings.max_error_fixes]:
        add(fx.fixed)
    traces = list(qk.former_traces.get(task.id, ()))
    last = traces[-1] if traces and settings.max_former_traces else None
    if last is not None or last_feedback is not None:
        lines = ["A previous attempt at the function below failed."]
        if last is not None:
            used.append(last.id)
            lines += ["Attempt:", _clip(_main_code(last.implementation), lim)]
        fb = last_feedback if last_feedback is not None else last.feedback if last else None
        if fb is not None:
            lines += ["Feedback:", _clip(_feedback_text(fb, lim), _FEEDBACK_CHARS)]
        blocks.append(_commented("\n".join(lines)))
    blocks.append(stub.rstrip("\n") + "\n")
    stop = tuple(settings.stop) if settings.stop is not None else COMPLETION_STOP
    return "\n\n\n".join(blocks), stop, tuple(used)
