"""Task priority and estimated complexity: stored with the task, filled in for tasks stored
before the fields existed, and used to order the open tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.context import Output, RichMemoryManager, TaskContext, estimate_complexity
from costeer_lab.context._persist import TASK_KIND
from costeer_lab.errors import InvalidInputError
from costeer_lab.store import SQLiteStore

from .conftest import Clock

LONG = "Implement a tokenizer, a parser and a printer for the config format:\n" + "\n".join(
    f"- step {i}" for i in range(4)
)


def test_priority_and_complexity_are_stored(tmp_path: Path) -> None:
    db = tmp_path / "ctx.db"
    with RichMemoryManager(str(db)) as mm:
        mm.create_task("Implement gcd in Python", task_id="a", priority=3, complexity=2)
        mm.create_task(LONG, task_id="b")
        mm.create_task("What is 6 * 7?", task_id="c")
    with RichMemoryManager(str(db)) as again:  # a fresh process would see the same
        a, b, c = (again.get_task(t) for t in "abc")
    assert (a.priority, a.complexity) == (3, 2)
    assert (b.priority, b.complexity) == (0, 4) == (0, estimate_complexity(LONG, "coding_task"))
    assert (c.priority, c.complexity) == (0, 1)
    assert TaskContext.from_dict(a.to_dict()) == a and a.to_dict()["priority"] == 3


def test_a_task_stored_without_the_fields_loads_with_defaults(store: SQLiteStore) -> None:
    mm = RichMemoryManager(store)
    mm.create_task("Implement gcd in Python", task_id="old")
    mm.add_action("old", "answer", {"q": 1}, Output(True, "draft"))
    head = store.get_record(TASK_KIND, "old")
    assert isinstance(head, dict)
    legacy = {k: v for k, v in head.items() if k not in ("priority", "complexity", "revision")}
    store.put_record(TASK_KIND, "old", legacy)  # as an older version wrote it
    ctx = RichMemoryManager(store).get_task("old")
    assert (ctx.priority, ctx.complexity) == (0, 3)
    assert [a.outputs.result for a in ctx.actions] == ["draft"]  # nothing stored is lost
    assert ctx.metadata["detected_type"] == "coding_task"
    assert RichMemoryManager(store).open_tasks() == ["old"]


def test_open_tasks_run_by_priority_then_complexity(mm: RichMemoryManager, clock: Clock) -> None:
    mm.create_task("Implement gcd in Python", task_id="low", complexity=3)
    clock.now += 1
    mm.create_task("Implement a parser", task_id="hard", priority=2, complexity=5)
    clock.now += 1
    mm.create_task("Implement a lexer", task_id="easy", priority=2, complexity=1)
    mm.create_task("What is 6 * 7?", task_id="done", priority=9)
    mm.add_action("done", "answer", {}, Output(True, "42"))
    assert mm.open_tasks() == ["easy", "hard", "low"]
    assert mm.open_tasks("simple_question") == []
    ctx = mm.set_priority("low", priority=5)
    assert ctx.priority == 5 and mm.get_task("low").priority == 5
    assert mm.open_tasks() == ["low", "easy", "hard"]
    mm.set_priority("hard", complexity=1)
    assert mm.open_tasks() == ["low", "hard", "easy"]  # equal: creation order


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"priority": "high"}, "priority must be an integer"),
        ({"complexity": 7}, "complexity must be an integer from 1 to 5; got 7"),
        ({"complexity": 0}, "complexity must be an integer from 1 to 5; got 0"),
    ],
)
def test_bad_metadata_is_refused(mm: RichMemoryManager, kw: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        mm.create_task("Implement gcd", **kw)  # type: ignore[arg-type]
    assert mm.list_tasks() == []
