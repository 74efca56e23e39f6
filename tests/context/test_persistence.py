"""Contexts persist in the store: across processes, isolated per task, queryable."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from costeer_lab.context import Output, RichMemoryManager, TaskContext
from costeer_lab.errors import InvalidInputError, NotFoundError, StoreError
from costeer_lab.store import SQLiteStore

from .samples import DOCUMENTED, RAN_OK, SHAPES

CHILD = textwrap.dedent(
    """
    import json, sys
    from costeer_lab.context import Output, RichMemoryManager
    from costeer_lab.store import SQLiteStore

    store = SQLiteStore(sys.argv[1])
    mm = RichMemoryManager(store)
    if sys.argv[2] == "write":
        mm.create_task("Implement gcd in Python", task_id="child")
        mm.add_action("child", "write_file", {"path": "gcd.py"},
                      Output(True, "wrote", files={"gcd.py": sys.stdin.read()}),
                      plan_id="p-1", reasoning="first draft")
        mm.add_action("child", "run_python", {"path": "gcd.py"},
                      Output(True, "6", metadata={"returncode": 0}))
        mm.add_action("parent", "answer", {}, Output(True, "42"))
    else:
        ctx = mm.get_task(sys.argv[3])
        print(json.dumps(ctx.to_dict()))
    store.close()
    """
)


def _child(db: Path, *args: str, stdin: str = "") -> str:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return out.stdout


def test_context_written_in_one_process_is_read_in_another(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    with SQLiteStore(db) as store:
        mm = RichMemoryManager(store)
        mm.create_task("What is 6 * 7?", task_id="parent")
        # another process writes a task of its own and an action on ours
        _child(db, "write", stdin=DOCUMENTED)
        parent = mm.get_task("parent")
        assert parent.complete and [a.outputs.result for a in parent.actions] == ["42"]
        child = mm.get_task("child")
        assert child.complete and child.task_type == "coding_task"
        action, _ = child.actions
        assert (action.context.plan_id, action.context.reasoning) == ("p-1", "first draft")
        assert child.files[0].metadata.functions[0].name == "gcd"
        assert [e.type for e in child.evidence] == [
            "file_creation", "code_implementation", "documentation", "execution"
        ]  # fmt: skip
        # and ours is read back whole by a fresh process
        mm.add_action("child", "run_python", {"path": "gcd.py"}, Output(True, "6\n"))
        expected = mm.get_task("child")
    seen = TaskContext.from_dict(json.loads(_child(db, "read", "child")))
    assert seen == expected and len(seen.actions) == 3


def test_tasks_are_isolated(mm: RichMemoryManager) -> None:
    mm.create_task("Implement gcd in Python", task_id="a")
    mm.create_task("Implement shapes in Python", task_id="b")
    mm.add_action("a", "write_file", {}, Output(True, files={"gcd.py": DOCUMENTED}))
    mm.add_action("b", "write_file", {}, Output(True, files={"shapes.py": SHAPES}))
    a, b = mm.get_task("a"), mm.get_task("b")
    assert [f.path for f in a.files] == ["gcd.py"] and [f.path for f in b.files] == ["shapes.py"]
    assert len(a.actions) == len(b.actions) == 1
    assert [m.file.path for m in mm.find_files(task_id="a")] == ["gcd.py"]
    assert mm.find_functions("gcd", task_id="b") == []
    assert mm.list_tasks() == ["a", "b"] and mm.list_tasks("simple_question") == []


def test_queries_over_files_code_and_evidence(mm: RichMemoryManager) -> None:
    mm.create_task("Implement gcd in Python", task_id="a")
    mm.create_task("Implement shapes in Python", task_id="b")
    notes = "# Notes\n\nShapes are documented in shapes.py; gcd lives in gcd.py for now.\n"
    mm.add_action("a", "write_file", {}, Output(True, files={"gcd.py": DOCUMENTED}))
    mm.add_action("b", "write_file", {}, Output(True, files={"shapes.py": SHAPES}))
    mm.add_action("b", "write_file", {}, Output(True, files={"NOTES.md": notes}))
    mm.add_action("b", "run_python", {"path": "shapes.py"}, Output(False, "exit code 1"))

    assert {(m.task_id, m.file.path) for m in mm.find_files(file_type="code")} == {
        ("a", "gcd.py"), ("b", "shapes.py")
    }  # fmt: skip
    assert [m.file.path for m in mm.find_files(contains="Euclid")] == ["gcd.py"]
    assert [m.file.path for m in mm.find_files(language="markdown")] == ["NOTES.md"]
    assert [m.file.path for m in mm.find_files(dependencies="numpy")] == ["shapes.py"]
    assert [m.file.path for m in mm.find_files(purpose="Notes")] == ["NOTES.md"]

    (label,) = mm.find_functions("label")
    assert (label.task_id, label.path, label.doc.qualname) == ("b", "shapes.py", "Shape.label")
    assert [m.doc.qualname for m in mm.find_functions("Shape.Meta.Inner.depth")] == [
        "Shape.Meta.Inner.depth"
    ]
    assert [(m.task_id, m.doc.name) for m in mm.find_functions("gcd")] == [("a", "gcd")]
    assert [m.doc.qualname for m in mm.find_classes("Inner")] == ["Shape.Meta.Inner"]

    docs = mm.find_evidence(type="documentation")
    assert {(m.task_id, m.evidence.source) for m in docs} == {
        ("a", "gcd.py"), ("b", "shapes.py"), ("b", "NOTES.md")
    }  # fmt: skip
    assert [m.evidence.type for m in mm.find_evidence(task_id="b", min_confidence=0.95)] == [
        "file_creation", "file_creation"
    ]  # fmt: skip
    assert [m.evidence.confidence for m in mm.find_evidence(source="run_python")] == [0.2]
    with pytest.raises(InvalidInputError, match="'proof'"):
        mm.find_evidence(type="proof")
    with pytest.raises(InvalidInputError, match="'binary'"):
        mm.find_files(file_type="binary")


def test_cross_references_between_tasks(mm: RichMemoryManager) -> None:
    mm.create_task("Implement gcd in Python", task_id="a")
    mm.create_task("Port gcd to a module", task_id="b")
    mm.create_task("Unrelated question?", task_id="c")
    mm.add_action("a", "write_file", {}, Output(True, files={"gcd.py": DOCUMENTED}))
    mm.add_action("b", "write_file", {}, Output(True, files={"lib/gcd.py": DOCUMENTED}))
    mm.add_action("b", "write_file", {}, Output(True, files={"notes.md": "gcd"}))
    mm.add_action("c", "write_file", {}, Output(True, files={"notes.md": "other"}))
    mm.add_action("c", "answer", {}, Output(True, "no"))
    refs = {(r.other_task_id, r.kind, r.key) for r in mm.cross_references("b")}
    checksum = mm.get_task("a").files[0].checksum
    assert refs == {
        ("a", "same_content", checksum),
        ("a", "same_function", "gcd"),
        ("c", "same_path", "notes.md"),
        ("c", "same_source", "notes.md"),
    }
    assert all(r.task_id == "b" for r in mm.cross_references("b"))
    with pytest.raises(NotFoundError):
        mm.cross_references("zzz")


def test_writes_are_atomic_per_action(tmp_path: Path) -> None:
    """An action whose records cannot all be written leaves the stored context unchanged."""
    with SQLiteStore(tmp_path / "ctx.db") as store:
        mm = RichMemoryManager(store)
        mm.create_task("What is 6 * 7?", task_id="q")
        bad = Output(True, "42", metadata={"handle": object()})  # not JSON-serializable
        with pytest.raises(InvalidInputError, match="must be JSON-serializable"):
            mm.add_action("q", "answer", {}, bad)
        assert mm.get_task("q").actions == ()
        assert store.count_records("context_action") == 0
        assert store.count_records("context_evidence") == 0


ADDER = textwrap.dedent(
    """
    import os, sys, time
    from costeer_lab.context import Output, RichMemoryManager
    from costeer_lab.store import SQLiteStore

    store = SQLiteStore(sys.argv[1])
    mm = RichMemoryManager(store)
    while not os.path.exists(sys.argv[4]):  # start together
        time.sleep(0.005)
    for i in range(int(sys.argv[3])):
        mm.add_action("shared", "look", {"who": sys.argv[2], "i": i}, Output(True, "seen"))
    store.close()
    """
)


N_EACH = 40


def test_concurrent_writers_of_one_task_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    with SQLiteStore(db) as store:
        RichMemoryManager(store).create_task("Tidy", task_id="shared", task_type="general_task")
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", ADDER, str(db), who, str(N_EACH), str(go)])
        for who in ("p1", "p2")
    ]
    time.sleep(1.0)
    go.touch()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with SQLiteStore(db) as store:
        ctx = RichMemoryManager(store).get_task("shared")
    assert [a.id for a in ctx.actions] == [f"act-{i:04d}" for i in range(1, 2 * N_EACH + 1)]
    seen = sorted((a.inputs["who"], a.inputs["i"]) for a in ctx.actions)
    assert seen == sorted((w, i) for w in ("p1", "p2") for i in range(N_EACH))
    for who in ("p1", "p2"):  # each writer's own actions stay in its order
        mine = [a.inputs["i"] for a in ctx.actions if a.inputs["who"] == who]
        assert mine == list(range(N_EACH))


def test_a_missing_record_is_reported(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "ctx.db") as store:
        mm = RichMemoryManager(store)
        mm.create_task("What is 6 * 7?", task_id="q")
        mm.add_action("q", "answer", {}, Output(True, "42"))
        store.delete_records("context_evidence", ["q::ev-0001"])
        with pytest.raises(StoreError, match="'q' is incomplete: a context_evidence record"):
            RichMemoryManager(store).get_task("q")


def test_contexts_kept_in_memory_never_go_stale(store: SQLiteStore) -> None:
    """A manager reuses the contexts it wrote only while the store still holds them."""
    mm = RichMemoryManager(store)
    mm.create_task("What is 6 * 7?", task_id="q")
    with pytest.raises(RuntimeError, match="abort"), store.transaction():
        mm.add_action("q", "answer", {}, Output(True, "42"))
        raise RuntimeError("abort")
    assert mm.get_task("q").actions == () and not mm.get_task("q").complete
    other = RichMemoryManager(store)  # another writer (as another process would be)
    other.add_action("q", "answer", {}, Output(True, "42"))
    seen = mm.get_task("q")
    assert [a.outputs.result for a in seen.actions] == ["42"] and seen.complete
    store.delete_records("context_task", ["q"])
    assert not mm.has_task("q")
    with pytest.raises(NotFoundError):
        mm.get_task("q")


def test_a_manager_closes_only_the_store_it_opened(tmp_path: Path, store: SQLiteStore) -> None:
    url = f"sqlite:///{tmp_path / 'own.db'}"
    with RichMemoryManager(url) as mm:
        mm.create_task("What is 6 * 7?", task_id="q")
    with pytest.raises(StoreError):
        mm.get_task("q")  # its own store is closed
    with RichMemoryManager(url) as again:
        assert again.get_task("q").task == "What is 6 * 7?"
    with RichMemoryManager(store) as shared:
        shared.create_task("What is 6 * 7?", task_id="q")
    assert store.count_records("context_task") == 1  # a store passed in stays open


def test_context_on_postgres_is_seen_by_another_manager(postgres_url: str) -> None:
    pytest.importorskip("psycopg")
    from costeer_lab.store import get_store

    with get_store(postgres_url) as first, get_store(postgres_url) as second:
        writer, reader = RichMemoryManager(first), RichMemoryManager(second)
        writer.create_task("Implement gcd in Python", task_id="pg")
        writer.add_action("pg", "write_file", {}, Output(True, files={"gcd.py": DOCUMENTED}))
        writer.add_action("pg", "run_python", {}, RAN_OK)
        seen = reader.get_task("pg")
        assert seen == writer.get_task("pg") and seen.complete
        assert [f.path for f in seen.files] == ["gcd.py"]
        assert reader.list_tasks() == ["pg"]
