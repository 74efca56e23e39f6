"""Pure data behind the knowledge-graph explorer: what a KB knows about one task.

Reads the store (the source of truth) directly: a task's ``task_description`` node, the
``task_trace`` nodes of its attempts (code, verdict, feedback, error fingerprints), the ``error``
nodes they hit, the ``component`` nodes of the task and its successful implementation.

Example:
    >>> from costeer_lab.store import NodeRecord, SQLiteStore, EdgeRecord
    >>> st = SQLiteStore(":memory:")
    >>> st.put_nodes([NodeRecord("td:1", "task_description", "name: add",
    ...     {"task": {"id": "t1", "name": "add", "description": "Add."}})])
    >>> [t.label for t in list_tasks(st)]
    ['add (t1)']
    >>> get_task_knowledge(st, "t1").traces
    ()
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from costeer_lab.errors import NotFoundError, did_you_mean
from costeer_lab.store import BaseStore, NodeRecord

__all__ = [
    "TaskEntry",
    "TaskKnowledge",
    "TraceInfo",
    "get_task_knowledge",
    "knowledge_label",
    "list_tasks",
]

_KIND_WORDS = {
    "task_description": "task",
    "task_trace": "attempt",
    "task_success_implement": "success",
    "component": "component",
    "error": "error",
}


class TaskEntry(NamedTuple):
    task_id: str
    name: str
    node_id: str

    @property
    def label(self) -> str:
        return f"{self.name} ({self.task_id})"


class TraceInfo(NamedTuple):
    node_id: str
    code: str
    success: bool
    feedback: str
    errors: tuple[str, ...]


class TaskKnowledge(NamedTuple):
    task_id: str
    name: str
    description: str
    traces: tuple[TraceInfo, ...]
    errors: tuple[str, ...]
    components: tuple[str, ...]
    success_code: str | None


def _main_code(workspace: Any) -> str:
    if not isinstance(workspace, dict):
        return ""
    files = workspace.get("files") or {}
    main = workspace.get("main_file") or "main.py"
    return str(files.get(main) or next(iter(files.values()), ""))


def _task_of(node: NodeRecord) -> dict[str, Any]:
    task = node.attrs.get("task") if isinstance(node.attrs, dict) else None
    return task if isinstance(task, dict) else {}


def list_tasks(store: BaseStore) -> list[TaskEntry]:
    """Every task the KB describes, sorted by task id."""
    out = []
    for node in store.iter_nodes("task_description"):
        task = _task_of(node)
        tid = str(task.get("id") or node.id)
        out.append(TaskEntry(tid, str(task.get("name") or tid), node.id))
    return sorted(out, key=lambda t: t.task_id)


def knowledge_label(store: BaseStore, node_id: str) -> str:
    """A human label for a knowledge node: task name and kind (``add · success``).

    Seed ids (``seed:<task>``) and unknown ids come back shortened but recognisable.
    """
    node = store.get_node(node_id)
    if node is None:
        return node_id if len(node_id) <= 40 else node_id[:37] + "…"
    word = _KIND_WORDS.get(node.kind, node.kind)
    attrs = node.attrs if isinstance(node.attrs, dict) else {}
    if node.kind in ("component", "error"):
        text = " ".join(node.content.split())
        return f"{word}: {text[:48]}"
    name = _task_of(node).get("name") or attrs.get("task_name")
    if not name and isinstance(attrs.get("td"), str):
        td_node = store.get_node(attrs["td"])
        name = _task_of(td_node).get("name") if td_node else None
    name = name or attrs.get("task_id")
    if not name and node.kind == "task_success_implement":
        for e in store.iter_edges(node=node_id):
            if e.kind == "implements" and e.dst != node_id:
                td = store.get_node(e.dst)
                name = _task_of(td).get("name") if td else None
    return f"{name or node_id[:24]} · {word}"


def get_task_knowledge(store: BaseStore, task_id: str) -> TaskKnowledge:
    """Traces, errors, components and the successful implementation of ``task_id``.

    Raises:
        NotFoundError: the KB has no task of that id (the message lists the known ones).
    """
    tasks = {t.task_id: t for t in list_tasks(store)}
    if task_id not in tasks:
        raise NotFoundError(
            f"the knowledge base has no task {task_id!r}; {did_you_mean(task_id, list(tasks))}"
        )
    entry = tasks[task_id]
    td = store.get_node(entry.node_id)
    assert td is not None
    edges = list(store.iter_edges(node=entry.node_id))
    neighbours = {e.src if e.dst == entry.node_id else e.dst: e.kind for e in edges}
    ids = list(neighbours)
    nodes = {n.id: n for n in store.get_nodes(ids)}
    components = sorted(n.content for n in nodes.values() if n.kind == "component")
    success = [n for n in nodes.values() if n.kind == "task_success_implement"]
    traces: list[TraceInfo] = []
    errors: set[str] = set()
    for n in sorted((n for n in nodes.values() if n.kind == "task_trace"), key=lambda n: n.id):
        fb = n.attrs.get("feedback") or {}
        hit = [e.dst for e in store.iter_edges(node=n.id) if e.kind == "hit_error"]
        err_text = tuple(x.content for x in store.get_nodes(hit))
        errors.update(err_text)
        lines = [str(fb.get(k) or "") for k in ("return_checking", "code", "execution")]
        traces.append(
            TraceInfo(
                n.id,
                _main_code(n.attrs.get("workspace")),
                bool(fb.get("final_decision")),
                "\n".join(x for x in lines if x)[:2000],
                err_text,
            )
        )
    success_code = None
    if success:
        ws = success[0].attrs.get("workspace")
        success_code = _main_code(ws) if ws else _main_code(json.loads(success[0].content))
    task = _task_of(td)
    return TaskKnowledge(
        task_id,
        entry.name,
        str(task.get("description") or ""),
        tuple(traces),
        tuple(sorted(errors)),
        tuple(components),
        success_code,
    )
