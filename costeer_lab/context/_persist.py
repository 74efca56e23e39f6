"""Task contexts in the store: one JSON record per task, action, evidence item and file.

Kinds (generic store records, so every backend holds them): ``context_task`` (key: task id),
``context_action`` (``<task id>::<seq>``), ``context_evidence`` (``<task id>::<evidence id>``)
and ``context_file`` (``<task id>::<path>``). Each record names its ``task_id`` at the top level,
so queries filter in the backend (``iter_records(kind, where=…)``) and one task never sees
another's items unless asked to. The task's record also lists how many actions it has, its
evidence ids and its file paths, so loading one task reads its own records by key, however many
other tasks the store holds. Each write gives the task record a new random ``revision``; a
context this object wrote or read is reused while the stored revision is unchanged (so a write
by another process, or a rolled-back transaction, is always seen).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from costeer_lab.context._records import Action, Evidence, FileReference
from costeer_lab.context._task import TaskContext
from costeer_lab.errors import InvalidInputError, StoreError
from costeer_lab.store import BaseStore

__all__ = ["ACTION_KIND", "EVIDENCE_KIND", "FILE_KIND", "TASK_KIND", "ContextStore"]

TASK_KIND = "context_task"
ACTION_KIND = "context_action"
EVIDENCE_KIND = "context_evidence"
FILE_KIND = "context_file"
_SEP = "::"


def check_task_id(task_id: object) -> str:
    """Return ``task_id`` when it is a usable task id, else raise :class:`InvalidInputError`."""
    if not isinstance(task_id, str) or not task_id.strip() or _SEP in task_id:
        raise InvalidInputError(
            f"a task id must be a non-empty string without {_SEP!r}; got {task_id!r}"
        )
    return task_id


class ContextStore:
    """Reads and writes task contexts in a :class:`~costeer_lab.store.BaseStore`.

    Example:
        >>> from costeer_lab.store import get_store
        >>> cs = ContextStore(get_store(":memory:"))
        >>> cs.save(TaskContext("t1", "general_task", "tidy up"))
        >>> cs.load("t1").task
        'tidy up'
    """

    def __init__(self, store: BaseStore) -> None:
        self.store = store
        self._cache: dict[str, tuple[str, TaskContext]] = {}

    def save(
        self,
        ctx: TaskContext,
        *,
        actions: Sequence[Action] = (),
        evidence: Sequence[Evidence] = (),
        files: Sequence[FileReference] = (),
    ) -> None:
        """Write the task's record and the given new items in one transaction."""
        tid = ctx.task_id
        with self.store.transaction():
            head = ctx.header()
            head["n_actions"] = len(ctx.actions)
            head["evidence_ids"] = [e.id for e in ctx.evidence]
            head["file_paths"] = [f.path for f in ctx.files]
            head["revision"] = revision = uuid.uuid4().hex
            self.store.put_record(TASK_KIND, tid, head)
            start = len(ctx.actions) - len(actions)
            self.store.put_records(
                ACTION_KIND,
                [
                    (
                        f"{tid}{_SEP}{start + i + 1:05d}",
                        {
                            "task_id": tid,
                            "seq": start + i + 1,
                            "type": a.type,
                            "action": a.to_dict(),
                        },
                    )
                    for i, a in enumerate(actions)
                ],
            )
            self.store.put_records(
                EVIDENCE_KIND,
                [
                    (
                        f"{tid}{_SEP}{e.id}",
                        {
                            "task_id": tid,
                            "type": e.type,
                            "source": e.source,
                            "evidence": e.to_dict(),
                        },
                    )
                    for e in evidence
                ],
            )
            self.store.put_records(
                FILE_KIND,
                [
                    (
                        f"{tid}{_SEP}{f.path}",
                        {
                            "task_id": tid,
                            "path": f.path,
                            "file_type": f.file_type,
                            "language": f.metadata.language,
                            "file": f.to_dict(),
                        },
                    )
                    for f in files
                ],
            )
        self._cache[tid] = (revision, ctx)

    def exists(self, task_id: str) -> bool:
        """Whether a task with this id is stored."""
        return self.store.get_record(TASK_KIND, task_id) is not None

    def load(self, task_id: str) -> TaskContext | None:
        """The stored context of ``task_id`` (actions in order), or ``None``."""
        head = self.store.get_record(TASK_KIND, task_id)
        if not isinstance(head, dict):
            self._cache.pop(task_id, None)
            return None
        cached = self._cache.get(task_id)
        if cached is not None and cached[0] == head.get("revision"):
            return cached[1]
        get = self.store.get_record
        keys = {
            ACTION_KIND: [f"{i:05d}" for i in range(1, int(head.get("n_actions", 0)) + 1)],
            EVIDENCE_KIND: list(head.get("evidence_ids", [])),
            FILE_KIND: list(head.get("file_paths", [])),
        }
        rows: dict[str, list[Any]] = {}
        for kind, names in keys.items():
            rows[kind] = [get(kind, f"{task_id}{_SEP}{name}") for name in names]
            if any(not isinstance(r, dict) for r in rows[kind]):
                raise StoreError(
                    f"the stored context of task {task_id!r} is incomplete: a {kind} record "
                    f"listed by its task record is missing from {self.store.url}"
                )
        ctx = TaskContext.from_dict(
            {
                **head,
                "actions": [r["action"] for r in rows[ACTION_KIND]],
                "evidence": [r["evidence"] for r in rows[EVIDENCE_KIND]],
                "files": [r["file"] for r in rows[FILE_KIND]],
            }
        )
        if isinstance(head.get("revision"), str):
            self._cache[task_id] = (head["revision"], ctx)
        return ctx

    def task_ids(self, task_type: str | None = None) -> list[str]:
        """Ids of the stored tasks (of one type when given), in creation order."""
        where = None if task_type is None else {"task_type": task_type}
        return [key for key, _ in self.store.iter_records(TASK_KIND, where=where)]

    def headers(self, task_type: str | None = None) -> list[dict[str, Any]]:
        """The task records (of one type when given) in creation order, with ``priority`` and
        ``complexity`` filled in for records stored before those fields existed."""
        where = None if task_type is None else {"task_type": task_type}
        out = []
        for _, head in self.store.iter_records(TASK_KIND, where=where):
            if "priority" not in head or "complexity" not in head:
                task = TaskContext.from_dict({**head, "actions": [], "evidence": [], "files": []})
                head = {**head, "priority": task.priority, "complexity": task.complexity}
            out.append(head)
        return out

    def iter_files(self, where: Mapping[str, Any]) -> Iterator[tuple[str, FileReference]]:
        """``(task id, file)`` of the file records matching ``where`` (top-level fields:
        ``task_id``, ``path``, ``file_type``, ``language``)."""
        for _, r in self.store.iter_records(FILE_KIND, where=dict(where) or None):
            yield r["task_id"], FileReference.from_dict(r["file"])

    def iter_evidence(self, where: Mapping[str, Any]) -> Iterator[tuple[str, Evidence]]:
        """``(task id, evidence)`` of the evidence records matching ``where`` (top-level
        fields: ``task_id``, ``type``, ``source``)."""
        for _, r in self.store.iter_records(EVIDENCE_KIND, where=dict(where) or None):
            yield r["task_id"], Evidence.from_dict(r["evidence"])
