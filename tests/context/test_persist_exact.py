"""Exact records of :class:`ContextStore` in a real SQLite file: the stored task, action,
evidence and file records field by field, the backend queries they serve, the reuse of
contexts while the stored revision is unchanged, and task records written before the
bookkeeping fields (``n_actions``, ``evidence_ids``, ``file_paths``, ``priority``,
``complexity``) existed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.context._persist import (
    ACTION_KIND,
    EVIDENCE_KIND,
    FILE_KIND,
    TASK_KIND,
    ContextStore,
    check_task_id,
)
from costeer_lab.context._records import Action, Evidence, FileMetadata, FileReference, Output
from costeer_lab.context._task import TaskContext
from costeer_lab.errors import InvalidInputError, StoreError
from costeer_lab.store import SQLiteStore


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    with SQLiteStore(tmp_path / "ctx.db") as s:
        yield s


def _action(n: int, type_: str) -> Action:
    return Action(
        id=f"act-{n:04d}",
        type=type_,
        inputs={"path": f"step{n}.py"},
        outputs=Output(True, f"result {n}"),
        timestamp=100.0 + n,
        success=True,
    )


def _evidence(n: int, type_: Any, source: str) -> Evidence:
    return Evidence(f"ev-{n:04d}", type_, f"seen {n}", 0.5, source, 200.0 + n)


def _file(path: str, file_type: Any, language: str) -> FileReference:
    return FileReference(
        id=f"file-{path}",
        path=path,
        file_type=file_type,
        content="x = 1\n",
        size=6,
        created_by="act-0001",
        created_at=1.0,
        modified_at=2.0,
        checksum="c" * 64,
        metadata=FileMetadata(language=language),
    )


def _ctx(tid: str, task_type: Any = "coding_task", **kw: Any) -> TaskContext:
    return TaskContext(tid, task_type, f"Implement {tid} in Python", created_at=5.0, **kw)


def _saved_pair(cs: ContextStore) -> tuple[TaskContext, TaskContext]:
    """Two coding tasks: ``a`` with three actions (saved two, then one), two evidence items and
    two files; ``b`` with one action, one evidence item and one file."""
    acts = (_action(1, "write_file"), _action(2, "run_python"), _action(3, "write_file"))
    evs = (
        _evidence(1, "file_creation", "gcd.py"),
        _evidence(2, "execution", "run_python"),
    )
    files = (_file("gcd.py", "code", "python"), _file("README.md", "documentation", "markdown"))
    a2 = _ctx("a", actions=acts[:2], evidence=evs, files=files)
    cs.save(a2, actions=acts[:2], evidence=evs, files=files)
    a3 = a2.with_(actions=acts)
    cs.save(a3, actions=acts[2:])
    b = _ctx(
        "b",
        actions=(_action(1, "write_file"),),
        evidence=(_evidence(1, "file_creation", "lcm.py"),),
        files=(_file("lcm.py", "code", "python"),),
    )
    cs.save(b, actions=b.actions, evidence=b.evidence, files=b.files)
    return a3, b


def test_save_writes_the_task_record_with_its_bookkeeping_fields(store: SQLiteStore) -> None:
    cs = ContextStore(store)
    a, _ = _saved_pair(cs)
    head = store.get_record(TASK_KIND, "a")
    assert isinstance(head, dict)
    revision = head.pop("revision")
    assert isinstance(revision, str) and re.fullmatch(r"[0-9a-f]{32}", revision)
    assert head == {
        **a.header(),
        "n_actions": 3,
        "evidence_ids": ["ev-0001", "ev-0002"],
        "file_paths": ["gcd.py", "README.md"],
    }
    assert cs.exists("a") and cs.exists("b") and not cs.exists("c")


def test_each_action_record_carries_its_sequence_number_and_type(store: SQLiteStore) -> None:
    cs = ContextStore(store)
    a, b = _saved_pair(cs)
    for seq, act in enumerate(a.actions, start=1):
        assert store.get_record(ACTION_KIND, f"a::{seq:05d}") == {
            "task_id": "a",
            "seq": seq,
            "type": act.type,
            "action": act.to_dict(),
        }
    assert store.get_record(ACTION_KIND, "a::00004") is None
    assert store.get_record(ACTION_KIND, "b::00001") == {
        "task_id": "b",
        "seq": 1,
        "type": "write_file",
        "action": b.actions[0].to_dict(),
    }
    # the top-level fields are what backend queries filter on
    rows = store.iter_records(ACTION_KIND, where={"task_id": "a", "type": "write_file"})
    assert [(k, r["seq"]) for k, r in rows] == [("a::00001", 1), ("a::00003", 3)]


def test_evidence_and_file_records_are_exact(store: SQLiteStore) -> None:
    cs = ContextStore(store)
    a, b = _saved_pair(cs)
    assert store.get_record(EVIDENCE_KIND, "a::ev-0002") == {
        "task_id": "a",
        "type": "execution",
        "source": "run_python",
        "evidence": a.evidence[1].to_dict(),
    }
    assert store.get_record(FILE_KIND, "a::README.md") == {
        "task_id": "a",
        "path": "README.md",
        "file_type": "documentation",
        "language": "markdown",
        "file": a.files[1].to_dict(),
    }
    assert store.get_record(FILE_KIND, "b::lcm.py") == {
        "task_id": "b",
        "path": "lcm.py",
        "file_type": "code",
        "language": "python",
        "file": b.files[0].to_dict(),
    }


def test_iter_files_and_iter_evidence_filter_on_each_top_level_field(
    store: SQLiteStore,
) -> None:
    cs = ContextStore(store)
    a, b = _saved_pair(cs)
    assert list(cs.iter_files({"path": "gcd.py"})) == [("a", a.files[0])]
    assert list(cs.iter_files({"task_id": "b"})) == [("b", b.files[0])]
    assert list(cs.iter_files({"file_type": "documentation"})) == [("a", a.files[1])]
    assert list(cs.iter_files({"language": "python"})) == [("a", a.files[0]), ("b", b.files[0])]
    assert list(cs.iter_files({})) == [("a", a.files[0]), ("a", a.files[1]), ("b", b.files[0])]
    assert list(cs.iter_evidence({"source": "run_python"})) == [("a", a.evidence[1])]
    assert list(cs.iter_evidence({"type": "file_creation"})) == [
        ("a", a.evidence[0]),
        ("b", b.evidence[0]),
    ]
    assert list(cs.iter_evidence({"task_id": "b"})) == [("b", b.evidence[0])]
    assert [t for t, _ in cs.iter_evidence({})] == ["a", "a", "b"]


def test_load_returns_the_stored_context_in_order(store: SQLiteStore) -> None:
    cs = ContextStore(store)
    a, b = _saved_pair(cs)
    fresh = ContextStore(store)
    assert fresh.load("a") == a
    assert fresh.load("b") == b
    assert fresh.load("missing") is None


def test_a_context_written_or_read_is_reused_while_the_revision_is_unchanged(
    store: SQLiteStore,
) -> None:
    cs = ContextStore(store)
    a, _ = _saved_pair(cs)
    assert cs.load("a") is a  # written by this object: reused, not read again
    reader = ContextStore(store)
    first = reader.load("a")
    assert first == a and first is not a
    assert reader.load("a") is first  # read by this object: reused
    # another writer changes the task: the reader sees the new revision
    changed = a.with_(complete=True)
    cs.save(changed)
    second = reader.load("a")
    assert second == changed and second is not first
    assert reader.load("a") is second


def test_a_task_whose_record_vanished_loads_as_none(store: SQLiteStore) -> None:
    cs = ContextStore(store)
    _saved_pair(cs)
    assert store.delete_records(TASK_KIND, ["a"]) == 1
    assert cs.load("a") is None
    assert not cs.exists("a")
    assert cs.load("b") is not None


def test_a_listed_record_that_is_missing_is_an_error_naming_it(store: SQLiteStore) -> None:
    cs = ContextStore(store)
    _saved_pair(cs)
    store.delete_records(FILE_KIND, ["a::README.md"])
    with pytest.raises(StoreError, match=r"task 'a' is incomplete: a context_file record"):
        ContextStore(store).load("a")


def test_a_task_record_without_bookkeeping_fields_loads_with_no_items(
    store: SQLiteStore,
) -> None:
    """A task record as the first version wrote it: the header only (no counts, ids, paths,
    revision, priority or complexity); its items are not listed, so none are read."""
    old = _ctx("old").header()
    del old["priority"], old["complexity"]
    store.put_record(TASK_KIND, "old", old)
    # an item record with the next key must not be picked up: the task record lists none
    store.put_record(ACTION_KIND, "old::00001", {"task_id": "old", "seq": 1})
    cs = ContextStore(store)
    ctx = cs.load("old")
    assert ctx == TaskContext("old", "coding_task", "Implement old in Python", created_at=5.0)
    assert (ctx.actions, ctx.evidence, ctx.files, ctx.priority) == ((), (), (), 0)
    again = cs.load("old")
    assert again == ctx and again is not ctx  # no revision: nothing to reuse it by


def _legacy(tid: str, task_type: Any, drop: tuple[str, ...], **kw: Any) -> dict[str, Any]:
    head = _ctx(tid, task_type, **kw).header()
    for key in drop:
        del head[key]
    return head


def test_headers_fill_priority_and_complexity_of_records_missing_either(
    store: SQLiteStore,
) -> None:
    cs = ContextStore(store)
    full = _ctx("full", priority=3, complexity=4)
    cs.save(full)
    rows = {
        "no_prio": _legacy("no_prio", "coding_task", ("priority",), priority=2, complexity=5),
        "no_cplx": _legacy("no_cplx", "research_task", ("complexity",), priority=7, complexity=5),
        "neither": _legacy("neither", "coding_task", ("priority", "complexity")),
    }
    for key, head in rows.items():
        store.put_record(TASK_KIND, key, head)
    estimate = _ctx("x", "research_task").complexity
    assert estimate != 5
    got = cs.headers()
    assert [h["task_id"] for h in got] == ["full", "no_prio", "no_cplx", "neither"]
    assert [(h["priority"], h["complexity"]) for h in got] == [
        (3, 4),
        (0, 5),
        (7, estimate),
        (0, _ctx("neither").complexity),
    ]
    stored_full = store.get_record(TASK_KIND, "full")
    assert got[0] == stored_full
    assert got[1] == {**rows["no_prio"], "priority": 0}
    assert got[2] == {**rows["no_cplx"], "complexity": estimate}


def test_task_ids_and_headers_filter_by_task_type(store: SQLiteStore) -> None:
    cs = ContextStore(store)
    cs.save(_ctx("c1"))
    cs.save(_ctx("r1", "research_task"))
    cs.save(_ctx("c2"))
    assert cs.task_ids() == ["c1", "r1", "c2"]
    assert cs.task_ids("coding_task") == ["c1", "c2"]
    assert cs.task_ids("research_task") == ["r1"]
    assert cs.task_ids("simple_question") == []
    assert [h["task_id"] for h in cs.headers()] == ["c1", "r1", "c2"]
    assert [h["task_id"] for h in cs.headers("coding_task")] == ["c1", "c2"]
    assert [h["task_id"] for h in cs.headers("research_task")] == ["r1"]
    assert cs.headers("simple_question") == []


@pytest.mark.parametrize("bad", ["", "   ", "a::b", "::", 7, None])
def test_check_task_id_refuses_unusable_ids(bad: object) -> None:
    with pytest.raises(InvalidInputError) as info:
        check_task_id(bad)
    assert str(info.value) == f"a task id must be a non-empty string without '::'; got {bad!r}"


@pytest.mark.parametrize("good", ["t1", "a:b", " x "])
def test_check_task_id_returns_usable_ids(good: str) -> None:
    assert check_task_id(good) == good
