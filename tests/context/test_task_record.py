"""The :class:`TaskContext` record pinned exactly: a stored header read back alone gets the
documented defaults, a bad task type is named, and evidence is looked up by id."""

from __future__ import annotations

import re

import pytest

from costeer_lab.context import TASK_TYPES, Evidence, TaskContext
from costeer_lab.errors import InvalidInputError


def test_a_record_with_only_the_required_fields_gets_every_default() -> None:
    ctx = TaskContext.from_dict({"task_id": "t1", "task_type": "coding_task", "task": "Add."})
    assert ctx == TaskContext("t1", "coding_task", "Add.")
    assert (ctx.actions, ctx.evidence, ctx.files, ctx.completion_evidence) == ((), (), (), ())
    assert (ctx.complete, ctx.created_at, ctx.updated_at, ctx.stop_reason) == (
        False, 0.0, 0.0, None
    )  # fmt: skip
    assert (dict(ctx.metadata), ctx.priority, ctx.complexity) == ({}, 0, 3)


def test_a_stored_header_reads_back_without_its_actions_evidence_and_files() -> None:
    ev = Evidence("ev-0001", "execution", "exit 0", 0.9, "run", 5.0)
    ctx = TaskContext(
        "t2", "research_task", "Compare two papers.", evidence=(ev,), complete=True,
        completion_evidence=("ev-0001",), created_at=1.5, updated_at=7.25, stop_reason="done",
        metadata={"owner": "ana"}, priority=2, complexity=4,
    )  # fmt: skip
    back = TaskContext.from_dict(ctx.header())  # the header record stored on its own
    assert back == ctx.with_(evidence=())
    assert TaskContext.from_dict(ctx.to_dict()) == ctx


def test_an_unknown_task_type_is_named_with_the_allowed_ones() -> None:
    message = f"task_type must be one of {', '.join(TASK_TYPES)}; got 'essay'"
    with pytest.raises(InvalidInputError, match=f"^{re.escape(message)}$"):
        TaskContext("t3", "essay", "Write an essay.")  # type: ignore[arg-type]


def test_evidence_is_found_by_its_id_and_a_missing_id_is_none() -> None:
    first = Evidence("ev-0001", "file_creation", "a.py (10 bytes)", 0.5, "a.py", 1.0)
    second = Evidence("ev-0002", "execution", "exit 0", 0.9, "run", 2.0)
    ctx = TaskContext("t4", "coding_task", "Write a.py.", evidence=(first, second))
    assert ctx.evidence_by_id("ev-0002") is second and ctx.evidence_by_id("ev-0001") is first
    assert ctx.evidence_by_id("ev-0003") is None
    assert TaskContext("t5", "general_task", "x").evidence_by_id("ev-0001") is None
