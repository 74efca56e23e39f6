"""One batch of attempts turned into the rows of the graph KB: nodes, edges and attempt records.

Per attempt the work is what the rows need and no more: each node id (a sha256) is computed
once (component and error ids are memoized by the knowledge base), the workspace text once,
and nodes and edges repeated inside the batch are merged the way one ``record`` call per
attempt would leave them (an attribute-less node or an edge already in the graph is skipped; a
node with attributes keeps the last attributes written, at the place of its first write).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from costeer_lab.graph import (
    COMPONENT,
    EDGE_HAS_COMPONENT,
    EDGE_HIT_ERROR,
    EDGE_IMPLEMENTS,
    EDGE_TRACE_OF,
    ERROR,
    TASK_DESCRIPTION,
    TASK_SUCCESS_IMPLEMENT,
    TASK_TRACE,
    node_id,
)
from costeer_lab.knowledge._attempts import attempt_errors, attempt_level
from costeer_lab.knowledge._kb_records import AttemptInput, feedback_score, files_text
from costeer_lab.store import NodeRecord

if TYPE_CHECKING:
    from costeer_lab.knowledge._kb_v2 import KnowledgeBaseV2
    from costeer_lab.records import Task

__all__ = ["Batch"]

_K = TypeVar("_K")
_V = TypeVar("_V")


def _merged(maps: Sequence[Mapping[_K, _V]]) -> Mapping[_K, _V]:
    """The keys of ``maps`` as one mapping (no copy for none or one)."""
    if len(maps) == 1:
        return maps[0]
    out: dict[_K, _V] = {}
    for m in maps:
        out.update(m)
    return out


class Batch:
    """Nodes, edges and ``kg_attempt`` rows of a batch of attempts (see ``record_many``).

    Example:
        >>> from costeer_lab.embed import get_embedder
        >>> from costeer_lab.knowledge import KnowledgeBaseV2
        >>> from costeer_lab.records import SingleFeedback, Task, Workspace
        >>> from costeer_lab.store import get_store
        >>> kb = KnowledgeBaseV2(get_store(":memory:"), get_embedder("hashing"))
        >>> b = Batch(kb)
        >>> t, ws = Task("t1", "MA5", "mean close"), Workspace({"main.py": "x"})
        >>> for a in (1, 2):
        ...     b.add(AttemptInput(t, ws, SingleFeedback(execution="ran"), "r", a))
        >>> len(b.rows), sorted(r.kind for r in b.nodes.values())
        (2, ['component', 'task_description', 'task_trace'])
    """

    def __init__(self, kb: KnowledgeBaseV2, after: Sequence[Batch] = ()) -> None:
        self.kb = kb
        #: Nodes of batches written before this one whose writes the graph has not taken in
        #: yet (``record_stream`` plans a batch while those before are being written).
        self._held: Mapping[str, NodeRecord] = _merged([b.nodes for b in after])
        self.nodes: dict[str, NodeRecord] = {}
        self.edges: dict[tuple[str, str], str] = {}
        self.rows: list[tuple[str, dict[str, Any]]] = []
        self._td: dict[str, str] = {}
        #: Task description → its component ids: those known before the batch, then its own.
        self.td_components: dict[str, list[str]] = {}
        #: The task of the previous attempt with its text and task-description id: a task's
        #: attempts usually come one after another, and the rows of its description are in the
        #: batch already (the same frozen ``Task`` gives the same node, attributes and edges).
        self._last: tuple[Task, str, str] | None = None
        #: Ids :meth:`_plain` has seen: each is present (graph, held batches, this batch) now.
        self._checked: set[str] = set()

    def _node(self, nid: str, kind: str, content: str, attrs: dict[str, Any]) -> None:
        self.nodes[nid] = NodeRecord(nid, kind, content, attrs)

    def _plain(self, nid: str, kind: str, content: str) -> None:
        """Add an attribute-less node unless it is present (a component or an error node: the
        same few recur in every task, so each is looked up once per batch)."""
        if nid in self._checked:
            return
        self._checked.add(nid)
        if nid not in self.nodes and nid not in self._held and not self.kb.graph.has(nid, kind):
            self.nodes[nid] = NodeRecord(nid, kind, content, {})

    def _edge(self, src: str, dst: str, kind: str) -> None:
        self.edges.setdefault((src, dst), kind)

    def _description(self, task: Task) -> tuple[str, str]:
        """Add the task-description node of ``task``, its component nodes and edges; returns
        its text and node id."""
        kb = self.kb
        info = task.get_task_information()
        td = self._td.get(info)
        if td is None:
            td = self._td[info] = node_id(TASK_DESCRIPTION, info)
        known = self.td_components.get(td)
        if known is None:
            known = self.td_components[td] = list(kb.td_components(td))
        self._node(td, TASK_DESCRIPTION, info, {"task": task.to_dict()})
        for comp in kb.components_of(task, info):
            cid = kb.component_id(comp)
            self._plain(cid, COMPONENT, comp)
            if cid not in known:  # an edge already stored is not written again
                known.append(cid)
                self._edge(td, cid, EDGE_HAS_COMPONENT)
        return info, td

    def add(self, e: AttemptInput) -> None:
        """Add the rows of one attempt."""
        kb = self.kb
        last = self._last
        if last is not None and last[0] is e.task:
            info, td = last[1], last[2]
        else:
            info, td = self._description(e.task)
            self._last = (e.task, info, td)
        errors = attempt_errors(e.feedback)
        succeeded = e.feedback.succeeded
        files = files_text(e.workspace)
        ws = e.workspace.to_dict()
        fb = e.feedback.to_dict()
        trace = ""
        if e.with_trace:
            content = f"{info}\n---\n{files}\n---\n{e.feedback.execution}"
            trace = node_id(TASK_TRACE, content)
            attrs = {
                "task_id": e.task.id,
                "task_name": e.task.name,
                "td": td,
                "workspace": ws,
                "feedback": fb,
            }
            self._node(trace, TASK_TRACE, content, attrs)
            self._edge(trace, td, EDGE_TRACE_OF)
            for fp, _ in errors:
                eid = kb.error_id(fp)
                self._plain(eid, ERROR, fp)
                self._edge(trace, eid, EDGE_HIT_ERROR)
        success = ""
        if succeeded:
            success = node_id(TASK_SUCCESS_IMPLEMENT, files)
            attrs = {"workspace": ws, "feedback": fb, "task_id": e.task.id}
            attrs["task_name"] = e.task.name  # traceable to its task
            self._node(success, TASK_SUCCESS_IMPLEMENT, files, attrs)
            self._edge(success, td, EDGE_IMPLEMENTS)
        self.rows.append(
            (
                f"{e.run_id}\x1f{e.task.id}\x1f{e.attempt}",
                {
                    "run_id": e.run_id,
                    "task_id": e.task.id,
                    "attempt": e.attempt,
                    "td": td,
                    "trace": trace,
                    "success": success,
                    "succeeded": succeeded,
                    "level": attempt_level(e.feedback, errors),
                    "score": feedback_score(e.feedback),
                    "errors": [list(x) for x in errors],
                    "provenance": e.provenance,
                },
            )
        )
