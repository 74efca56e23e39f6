"""``KnowledgeBaseV1``: implementation traces per task, the successful tasks, and a vector
collection of successful task descriptions (the first CoSTEER knowledge base)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from costeer_lab.embed import BaseEmbedder
from costeer_lab.index import HNSW_ABOVE, VectorCollection
from costeer_lab.knowledge._kb_records import GROUND_TRUTH, SELF_EARNED
from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace
from costeer_lab.store import BaseStore

__all__ = ["KB1_KIND", "KnowledgeBaseV1"]

KB1_KIND = "kb1_attempt"
KB1_COLLECTION = "kb1:success_task_description"


class KnowledgeBaseV1:
    """Traces by task, the set of successful tasks, similarity retrieval of their implementations.

    Attempts are ``kb1_attempt`` records; successful task descriptions are embedded into one
    vector collection (ids are task ids). Everything is rebuilt from the store on open.
    ``index_kind`` (``exact``, ``hnsw`` or ``auto``) and ``hnsw_above`` choose that collection's
    index (:class:`~costeer_lab.index.VectorCollection`).

    Example:
        >>> from costeer_lab.embed import get_embedder
        >>> from costeer_lab.store import get_store
        >>> kb = KnowledgeBaseV1(get_store(":memory:"), get_embedder("hashing"))
        >>> t = Task("t1", "MA5", "mean of close over 5 days")
        >>> ws = Workspace({"main.py": "x"})
        >>> kb.add_seed_knowledge([Knowledge(t, ws, SingleFeedback(final_decision=True))])
        >>> [k.task.id for k, _ in kb.similar_successful("close mean", 1)]
        ['t1']
    """

    version = "v1"

    def _repr_html_(self) -> str:
        from costeer_lab._html import card
        from costeer_lab.graph import NODE_KINDS

        stats = {f"nodes.{k}": self.store.count_nodes(k) for k in NODE_KINDS}
        stats["edges"] = self.store.count_edges()
        return card(
            f"Knowledge base V1 in {getattr(self.store, 'url', self.store)}",
            [(k, v) for k, v in stats.items() if v],
        )

    def __init__(
        self,
        store: BaseStore,
        embedder: BaseEmbedder,
        *,
        index_kind: str = "exact",
        hnsw_above: int = HNSW_ABOVE,
    ):
        self.store = store
        self.collection = VectorCollection(
            store,
            KB1_COLLECTION,
            embedder,
            kind=index_kind,  # type: ignore[arg-type]  # exact / hnsw / auto, checked there
            hnsw_above=hnsw_above,
        )
        self.reload()

    def reload(self) -> None:
        """Rebuild the in-memory traces and successes from the store."""
        #: (run id, task id) -> attempts, oldest first
        self.traces: dict[tuple[str, str], list[Knowledge]] = {}
        #: task id -> (successful knowledge, provenance, runs that earned it)
        self.success: dict[str, tuple[Knowledge, str, set[str]]] = {}
        for _, d in self.store.iter_records(KB1_KIND):
            self._apply(d)

    def _apply(self, d: dict[str, Any]) -> None:
        k = Knowledge.from_dict(d["knowledge"])
        run = d["run_id"]
        if d["trace"]:
            self.traces.setdefault((run, k.task.id), []).append(k)
        if k.feedback.succeeded:
            prev = self.success.get(k.task.id)
            runs = prev[2] if prev else set()
            if run:
                runs.add(run)
            gt = d["provenance"] == GROUND_TRUTH or (prev is not None and prev[1] == GROUND_TRUTH)
            self.success[k.task.id] = (
                prev[0] if prev else k,
                GROUND_TRUTH if gt else SELF_EARNED,
                runs,
            )

    def record(
        self,
        task: Task,
        workspace: Workspace,
        feedback: SingleFeedback,
        *,
        run_id: str,
        attempt: int,
        provenance: str = SELF_EARNED,
        with_trace: bool = True,
        knowledge_id: str = "",
    ) -> None:
        """Remember one attempt (one transaction)."""
        key = f"{run_id}\x1f{task.id}\x1f{attempt}"
        kid = knowledge_id or f"kb1:{run_id}:{task.id}:{attempt}"
        k = Knowledge(task, workspace, feedback, id=kid)
        d = {
            "run_id": run_id,
            "knowledge": k.to_dict(),
            "trace": with_trace,
            "provenance": provenance,
        }
        with self.store.transaction():
            self.store.put_record(KB1_KIND, key, d)
            if feedback.succeeded and task.id not in self.success:
                self.collection.upsert_texts([task.id], [task.get_task_information()])
        self._apply(d)

    def add_seed_knowledge(self, items: Sequence[Knowledge]) -> None:
        """Add ground-truth implementations (provenance ``ground_truth``)."""
        with self.store.transaction():
            for k in items:
                fb = k.feedback if k.feedback.succeeded else SingleFeedback(final_decision=True)
                self.record(
                    k.task, k.implementation, fb, run_id="", attempt=0,
                    provenance=GROUND_TRUTH, with_trace=False, knowledge_id=k.id,
                )  # fmt: skip

    def is_solved(self, task_id: str, *, run_id: str) -> bool:
        """Solved by ground truth or by an attempt of this run."""
        entry = self.success.get(task_id)
        return entry is not None and (entry[1] == GROUND_TRUTH or run_id in entry[2])

    def similar_successful(
        self, text: str, k: int, *, exclude: str | None = None
    ) -> list[tuple[Knowledge, float]]:
        """Successful knowledge of the ``k`` tasks whose descriptions are most similar."""
        if k <= 0 or len(self.collection) == 0:
            return []
        known = self.success
        # Only what this KB has loaded: the index syncs with the store at every search, so it
        # also holds successes another process (a shared store) recorded since the last reload.
        res = self.collection.search_text(
            text, k + (exclude is not None), filter=lambda i: i in known
        )
        out = [(known[i][0], s) for i, s in zip(res.ids, res.scores, strict=True)]
        return [x for x in out if x[0].task.id != exclude][:k]

    def stats(self) -> dict[str, int]:
        """Attempts and successful tasks."""
        return {
            "attempts": sum(len(v) for v in self.traces.values()),
            "successful_tasks": len(self.success),
        }

    #: Whether :meth:`close` closes the store (set by ``open_kb`` when it opened the store).
    owns_store = False

    def close(self) -> None:
        """Close the store if this KB opened it (``open_kb`` from a URL); idempotent."""
        if self.owns_store:
            self.store.close()
