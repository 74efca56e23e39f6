"""``KnowledgeBaseV2``: the graph knowledge base of CoSTEER (nodes, edges and attempt records).

Each attempt is a ``kg_attempt`` record (the durable event log); the in-memory lookups (task →
attempts, task description → success, component → solved task descriptions as integer
postings, error → fixes) are rebuilt from the store on first use, not when the KB is opened: an
open loads the vector indexes (from their persisted files when they match the store) and
nothing else. Neither the lookups, the queries nor the writes use the networkx graph
(``kb.graph.G``): it is read from the store only when it is used itself (drawing, notebooks).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from sys import intern
from typing import Any

import numpy as np
import numpy.typing as npt

from costeer_lab.embed import BaseEmbedder
from costeer_lab.errors import InvalidInputError, StoreError
from costeer_lab.graph import (
    COMPONENT,
    EDGE_HAS_COMPONENT,
    ERROR,
    TASK_DESCRIPTION,
    GraphWrite,
    KnowledgeGraph,
    node_id,
)
from costeer_lab.knowledge._components import BuiltinComponentExtractor, ComponentExtractor
from costeer_lab.knowledge._kb_batch import Batch as _Batch
from costeer_lab.knowledge._kb_pipeline import Pipeline
from costeer_lab.knowledge._kb_records import (
    ATTEMPT_KIND,
    GROUND_TRUTH,
    QUERY_VECTOR_MEMO,
    SELF_EARNED,
    Attempt,
    AttemptInput,
    Fix,
    Success,
)
from costeer_lab.knowledge._kb_snapshots import KBSnapshotsMixin
from costeer_lab.knowledge._success_index import SuccessIndex
from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace
from costeer_lab.store import BaseStore, BatchWrite

#: Component and error node ids kept in memory (the memo is cleared when it is full).
_ID_MEMO = 65_536

__all__ = ["ATTEMPT_KIND", "GROUND_TRUTH", "Attempt", "AttemptInput", "Fix", "KnowledgeBaseV2"]

_log = logging.getLogger(__name__)


@contextmanager
def _collector_paused(settle: Callable[[], None] | None = None) -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block (if it was on).

    Each full collection walks every object the process holds, and a knowledge base's lookups
    are most of them, so during a bulk insert the collector's time grew with the KB (a fifth of
    the CPU at 30k tasks) while finding nothing: the objects a batch creates form no reference
    cycles and are freed by reference counting. Cycles made elsewhere meanwhile (another
    thread) wait for the first collection after the block.

    ``settle`` (see :func:`_settled_objects_frozen`) runs at the end of the block, before the
    collector is back on: the first allocation after it would otherwise start a collection of
    every object the block made (50-70 ms per batch of 5,000 attempts at 100k tasks, 10-12 µs
    per attempt, measured with ``gc.callbacks``).
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if settle is not None:
            settle()
        if was_on:
            gc.enable()


def _memo_id(memo: dict[str, str], kind: str, content: str) -> str:
    """The node id of ``content`` of ``kind``, computed and kept in ``memo`` (emptied when it
    holds :data:`_ID_MEMO` ids)."""
    if len(memo) >= _ID_MEMO:
        memo.clear()
    nid = memo[content] = node_id(kind, content)
    return nid


def _chunks(entries: Iterable[AttemptInput], size: int) -> Iterator[list[AttemptInput]]:
    """``entries`` in lists of ``size`` (the last one shorter)."""
    chunk: list[AttemptInput] = []
    for e in entries:
        chunk.append(e)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@contextmanager
def _settled_objects_frozen() -> Iterator[Callable[[], None]]:
    """Yield ``settle``: after each batch, before the collector is back on
    (:func:`_collector_paused`), move every object tracked so far into the collector's
    permanent generation, so the collections that run while the stream's source is
    drawn from (the collector is on then) no longer walk the lookups already built; they are
    given back to the collector when the block ends.

    Measured at 100k tasks: the collector took 11.6 µs of each attempt, mostly full
    collections walking the lookups. Nothing is frozen when the collector is off or another
    user of :func:`gc.freeze` has frozen objects (unfreezing would release theirs too).
    """
    mine = gc.isenabled() and gc.get_freeze_count() == 0
    try:
        yield gc.freeze if mine else (lambda: None)
    finally:
        if mine:
            gc.unfreeze()


class KnowledgeBaseV2(KBSnapshotsMixin):
    """The graph knowledge base: typed nodes linked as the CoSTEER method describes.

    * a ``task_description`` node per distinct task text, linked to its ``component`` nodes;
    * a ``task_trace`` node per distinct attempt, linked to its task and the ``error`` nodes
      (fingerprints) it hit;
    * a ``task_success_implement`` node per distinct successful implementation, linked to the
      task descriptions it solves (with provenance ``ground_truth`` for seeds, ``self`` else).

    Use :func:`~costeer_lab.knowledge.open_kb` to open one; queries live in the RAG strategies.

    Args:
        store: the store holding the graph.
        embedder: embeds task descriptions, components and error fingerprints.
        extractor: component extractor (default :class:`BuiltinComponentExtractor`).
        index_kind: FAISS index of the task-description collection: ``auto`` (exact below
            ``hnsw_above`` task descriptions, HNSW from there on), ``exact`` or ``hnsw`` (the
            component and error collections, which stay small, are always exact).
        index_kw: HNSW parameters (``hnsw_m``, ``ef_construction``, ``ef_search``; default
            those of :class:`~costeer_lab.settings.RAGSettings`).
        hnsw_above: the size from which ``auto`` uses HNSW (default that of ``RAGSettings``).
        persist_indexes: keep the vector indexes in files at the store's place for them (beside
            a SQLite file, in the cache directory for PostgreSQL; see
            :func:`~costeer_lab.index._location.index_file`), reused on open when they match the
            store's collection state and written again by :meth:`checkpoint` and :meth:`close`.

    Opening reads no graph and no attempt record: the lookups (:attr:`task_td`,
    :attr:`attempts`, :attr:`success`, :attr:`solved`, :attr:`error_fixes`) are read from the
    store on first use, all together (:meth:`reload`: the attempt records a page at a time,
    then the ``has_component`` edges), and a write reads them first. The networkx graph
    ``graph.G`` is read only on its own first use; once read, writes keep it up to date.

    Example:
        >>> from costeer_lab.embed import get_embedder
        >>> from costeer_lab.store import get_store
        >>> kb = KnowledgeBaseV2(get_store(":memory:"), get_embedder("hashing"))
        >>> t = Task("t1", "MA5", "mean close", formulation="Mean($close, 5)")
        >>> ws = Workspace({"main.py": "x"})
        >>> kb.add_seed_knowledge([Knowledge(t, ws, SingleFeedback(final_decision=True))])
        >>> kb.is_solved("t1", run_id="any")
        True
    """

    version = "v2"

    def _repr_html_(self) -> str:
        from costeer_lab._html import card
        from costeer_lab.graph import NODE_KINDS

        stats = {f"nodes.{k}": self.store.count_nodes(k) for k in NODE_KINDS}
        stats["edges"] = self.store.count_edges()
        return card(
            f"Knowledge base V2 in {getattr(self.store, 'url', self.store)}",
            [(k, v) for k, v in stats.items() if v],
        )

    def __init__(
        self,
        store: BaseStore,
        embedder: BaseEmbedder,
        *,
        extractor: ComponentExtractor | None = None,
        index_kind: str = "auto",
        index_kw: Mapping[str, Any] | None = None,
        hnsw_above: int | None = None,
        persist_indexes: bool = True,
    ) -> None:
        from costeer_lab.settings import RAGSettings

        rag = RAGSettings()
        if index_kw is None:
            index_kw = {
                "hnsw_m": rag.hnsw_m,
                "ef_construction": rag.hnsw_ef_construction,
                "ef_search": rag.hnsw_ef_search,
            }
        self.store = store
        self.extractor: ComponentExtractor = extractor or BuiltinComponentExtractor()
        self.graph = KnowledgeGraph(
            store,
            embedder,
            (TASK_DESCRIPTION, COMPONENT, ERROR),
            index_kinds={TASK_DESCRIPTION: index_kind},
            index_kw=index_kw,
            hnsw_above=rag.hnsw_above if hnsw_above is None else hnsw_above,
            persist_indexes=persist_indexes,
        )
        self._components: dict[str, tuple[str, ...]] = {}
        self._query_vectors: dict[str, npt.NDArray[np.float32]] = {}
        self._component_ids: dict[str, str] = {}
        self._error_ids: dict[str, str] = {}
        self._loaded = False
        self._closed = False
        self._task_td: dict[str, str] = {}
        self._attempts: dict[tuple[str, str], list[Attempt]] = {}
        self._success: dict[str, Success] = {}
        self._solved = SuccessIndex()
        self._error_fixes: dict[str, list[Fix]] = {}
        self._task_runs: dict[str, list[str]] = {}
        #: Task description → its component ids (the graph's ``has_component`` adjacency,
        #: one tuple per task description, component ids held once).
        self._td_comps: dict[str, tuple[str, ...]] = {}
        self._deferred = False  # reload: postings are linked after the records

    # -- in-memory lookups ---------------------------------------------------------------------
    def reload(self) -> None:
        """Rebuild the graph and every lookup from the store (done on first use otherwise).

        The attempt records are read first, the graph after them: every node and edge a record
        refers to was committed before the record, so the graph read later holds it even while
        another process (a second agent on a shared PostgreSQL) keeps writing.
        """
        self._task_td = {}
        self._attempts = {}
        self._success = {}
        #: Solved task descriptions as ordinals, with component postings (component query).
        self._solved = SuccessIndex()
        self._error_fixes = {}
        self._task_runs = {}
        self._td_comps = {}
        self._loaded = True
        self._deferred = True  # components are read after the records
        try:
            for _, data in self.store.iter_records(ATTEMPT_KIND):  # paged, never all at once
                self._apply(data)
        finally:
            self._deferred = False
        self._link_components()
        if self.graph.loaded:
            self.graph.reload()

    def _link_components(self) -> None:
        """Give every solved task description its component postings (in ordinal order), from
        the ``has_component`` edges read once after the attempt records (every edge a record
        refers to was committed before it)."""
        found: dict[str, list[str]] = {}
        names: dict[str, str] = {}  # one string per component id
        for src, dst, _ in self.store.iter_edge_keys(EDGE_HAS_COMPONENT):
            found.setdefault(intern(src), []).append(names.setdefault(dst, dst))
        self._td_comps = {td: tuple(comps) for td, comps in found.items()}
        del found
        for o, td in enumerate(self._solved.tds):
            self._solved.link(o, self._td_comps.get(td, ()))

    def td_components(self, td: str) -> tuple[str, ...]:
        """Component node ids of a task description (none for one not stored)."""
        self._ensure_loaded()
        return self._td_comps.get(td, ())

    @property
    def loaded(self) -> bool:
        """Whether the graph and the lookups have been read (first use, or :meth:`reload`)."""
        return self._loaded

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self.reload()

    @property
    def task_td(self) -> dict[str, str]:
        """Task id → task-description node id."""
        self._ensure_loaded()
        return self._task_td

    @property
    def attempts(self) -> dict[tuple[str, str], list[Attempt]]:
        """``(run id, task id)`` → attempts, oldest first."""
        self._ensure_loaded()
        return self._attempts

    @property
    def success(self) -> dict[str, Success]:
        """Task-description node id → its success (first success node, provenance, runs)."""
        self._ensure_loaded()
        return self._success

    @property
    def solved(self) -> SuccessIndex:
        """Solved task descriptions as ordinals, with their component postings."""
        self._ensure_loaded()
        return self._solved

    @property
    def error_fixes(self) -> dict[str, list[Fix]]:
        """Error node id → fixes (a failed trace that hit it and the success that followed)."""
        self._ensure_loaded()
        return self._error_fixes

    def _apply(self, d: dict[str, Any]) -> None:
        """Fold one attempt record into the lookups.

        Error → fix links cross runs: a success of a task links every error its failed attempts
        hit in any run (earlier ones), and a failed attempt of a task that already has a success
        links its errors to that success.

        A record already folded in (a record is keyed by its run, task and attempt number) is
        skipped: for a record with a trace, its number is found among the run's attempts of the
        task (no set of every key is kept: 20 MB at 100k tasks); one without a trace (a seed)
        only adds what is there already.
        """
        # ids repeated across records are held once (each decoded record has its own copies)
        task_id, td, run = intern(d["task_id"]), intern(d["td"]), intern(d["run_id"])
        number = int(d["attempt"])
        held = self._attempts.get((run, task_id), ())
        if d.get("trace") and any(a.attempt == number for a in held):
            return  # folded in already
        self._task_td[task_id] = td
        if d.get("trace"):
            att = Attempt(
                number,
                d["trace"],
                bool(d["succeeded"]),
                int(d["level"]),
                d.get("score"),
                tuple((intern(fp), intern(line)) for fp, line in d.get("errors", [])),
            )
            self._attempts.setdefault((run, task_id), []).append(att)
            runs = self._task_runs.setdefault(task_id, [])
            if run not in runs:  # each run once: a task has a few runs, and many attempts
                runs.append(run)
            done = self._success.get(td)
            if not att.succeeded and done is not None and att.errors:
                self._link_fixes([att], done, td)
        if not d["succeeded"]:
            return
        entry = self._success.get(td)
        if entry is None:
            entry = self._success[td] = Success(d["success"], intern(d["provenance"]))
            self._solved.add(td, () if self._deferred else self._td_comps.get(td, ()))
            failed = [
                a
                for r in self._task_runs.get(task_id, ())
                for a in self._attempts.get((r, task_id), ())
                if not a.succeeded
            ]
            self._link_fixes(failed, entry, td)
        elif d["provenance"] == GROUND_TRUTH:
            entry.provenance = GROUND_TRUTH
        if run:
            entry.add_run(run)

    def _link_fixes(self, failed: Sequence[Attempt], entry: Success, td: str) -> None:
        for a in failed:
            for fp, line in a.errors:
                self._error_fixes.setdefault(self._error_id(fp), []).append(
                    Fix(fp, line, a.trace, entry.node, td)
                )

    def _error_id(self, fp: str) -> str:
        return self.error_id(fp)

    def component_id(self, comp: str) -> str:
        """Node id of a component (memoized)."""
        nid = self._component_ids.get(comp)
        return nid if nid is not None else _memo_id(self._component_ids, COMPONENT, comp)

    def error_id(self, fp: str) -> str:
        """Node id of an error fingerprint (memoized)."""
        nid = self._error_ids.get(fp)
        return nid if nid is not None else _memo_id(self._error_ids, ERROR, fp)

    # -- writes ------------------------------------------------------------------------------
    def components_of(self, task: Task, text: str | None = None) -> tuple[str, ...]:
        """Components of a task (memoized by task text; ``text``: its
        ``get_task_information()`` when the caller has it)."""
        if text is None:
            text = task.get_task_information()
        comps = self._components.get(text)
        if comps is None:
            comps = self._components[text] = tuple(self.extractor.extract(task))
        return comps

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
    ) -> str:
        """Remember one attempt (one transaction); returns its record key."""
        entry = AttemptInput(task, workspace, feedback, run_id, attempt, provenance, with_trace)
        return self.record_many([entry])[0]

    def record_many(self, entries: Sequence[AttemptInput]) -> list[str]:
        """Remember attempts in one transaction with batched node, edge and vector writes.

        Per attempt: the task-description node and its component nodes, a trace node (unless
        ``with_trace`` is false) linked to the error nodes of its fingerprints, and for a
        success a success node; then the ``kg_attempt`` record. New nodes of the embedded kinds
        are embedded with one embedder call. The store, the graph and the lookups end exactly as
        after one :meth:`record` per attempt in order. If anything fails, nothing of the batch
        is kept (store, graph and lookups). Returns the record keys.
        """
        self._ensure_loaded()
        batch = self._batch(entries)
        plan = self.graph.plan_write(batch.nodes, batch.edges)
        self._finish(batch, plan, self.store.write_batch(self._batch_write(batch, plan)))
        return [key for key, _ in batch.rows]

    # The steps of a batch write, which ``record_stream`` runs as a pipeline (``_kb_pipeline``).
    def _batch(self, entries: Iterable[AttemptInput], after: Sequence[_Batch] = ()) -> _Batch:
        """The rows of ``entries``; ``after``: the batches before, if not finished yet."""
        batch = _Batch(self, after)
        for e in entries:
            batch.add(e)
        return batch

    def _batch_write(self, batch: _Batch, plan: GraphWrite) -> BatchWrite:
        """The store's transaction of ``batch``: its graph write, then its attempt records."""
        return plan.batch([(ATTEMPT_KIND, self.store.check_records(ATTEMPT_KIND, batch.rows))])

    def _take_components(self, batch: _Batch) -> None:
        """Hold the task descriptions' component lists of ``batch``."""
        for td, comps in batch.td_components.items():
            if len(comps) != len(self._td_comps.get(td, ())):
                self._td_comps[td] = tuple(comps)

    def _finish(
        self,
        batch: _Batch,
        plan: GraphWrite,
        states: Sequence[tuple[tuple[int, str], tuple[int, str]]],
    ) -> None:
        """Bring the graph, the indexes and the lookups along with a committed batch."""
        self.graph.finish_write(plan, states)
        self._take_components(batch)
        for _, data in batch.rows:
            self._apply(data)

    def record_stream(
        self, entries: Iterable[AttemptInput], *, batch_size: int = 5000, pipelined: bool = True
    ) -> int:
        """Remember a stream of attempts, one transaction per ``batch_size`` attempts.

        A few batches are held in memory at a time (one without ``pipelined``; with it, the one
        being prepared and two being written). A failure keeps the batches committed before it
        and none of the failing batch or any after it. Returns the number of attempts recorded.
        Meanwhile the store is tuned for bulk writes (:meth:`BaseStore.bulk_writes`), and
        while a batch is recorded (not while ``entries`` is drawn from) Python's cyclic garbage
        collector is paused: it would walk every lookup of the KB again and again and find
        nothing to free; while ``entries`` is drawn from, what the batches before built is
        frozen out of its reach (:func:`gc.freeze`, undone at the end).

        The default batch of 5,000 attempts: a larger transaction shares more of the random
        index pages it changes (a new id's entry in ``ids``, a record key) among its rows, so
        fewer pages are written per attempt. At 100k tasks (hashing embedder, 2 cores, before
        the writer process): 1,000 attempts per batch 5,808-5,876 items/s, 5,000 6,591-6,753,
        10,000 6,543, 20,000 6,934; a batch is held in memory, and other writers of the store
        wait for its transaction.

        ``pipelined``: from the second batch on, each batch is written by a writer process
        (:meth:`~costeer_lab.store.BaseStore.writer_process`: a SQLite store file has one)
        while this process prepares the next (``_kb_pipeline``); the store ends the same, and
        the same batches are kept when something fails. ``False``: every batch is written here.

        Example:
            >>> from costeer_lab.embed import get_embedder
            >>> from costeer_lab.store import get_store
            >>> kb = KnowledgeBaseV2(get_store(":memory:"), get_embedder("hashing"))
            >>> ok = SingleFeedback(final_decision=True)
            >>> gen = (AttemptInput(Task(f"t{i}", f"f{i}", "d"), Workspace({"m.py": f"{i}"}),
            ...                     ok, "r", 1) for i in range(5))
            >>> kb.record_stream(gen, batch_size=2), kb.is_solved("t4", run_id="r")
            (5, True)
        """
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be >= 1, got {batch_size!r}")
        with self.store.bulk_writes(), _settled_objects_frozen() as settle:
            if not pipelined:
                done = 0
                for chunk in _chunks(entries, batch_size):
                    with _collector_paused(settle):
                        done += len(self.record_many(chunk))
                return done
            self._ensure_loaded()
            with Pipeline(self, batch_size) as line:
                for chunk in _chunks(entries, batch_size):
                    with _collector_paused(settle):
                        line.push(chunk)
                with _collector_paused():
                    line.drain()
            return line.done

    def _forget(self) -> None:
        """Have the lookups (and the graph, if read) read again from the store on next use."""
        self._loaded = False

    def add_seed_knowledge(self, items: Sequence[Knowledge]) -> None:
        """Add ground-truth implementations (provenance ``ground_truth``, no trace node).

        A seed whose feedback is not a success is stored as a success all the same: seeds are
        ground truth by definition.
        """
        ok = SingleFeedback(execution="ground truth", final_decision=True)
        self.record_many(
            [
                AttemptInput(
                    k.task,
                    k.implementation,
                    k.feedback if k.feedback.succeeded else ok,
                    "",
                    0,
                    GROUND_TRUTH,
                    False,
                )
                for k in items
            ]
        )

    # -- reads -------------------------------------------------------------------------------
    def td_of(self, task: Task) -> str:
        """Task-description node id of a task (whether or not it is stored)."""
        return self.task_td.get(task.id) or node_id(TASK_DESCRIPTION, task.get_task_information())

    def is_solved(self, task_id: str, *, run_id: str) -> bool:
        """Solved by ground truth, or by an attempt of this run."""
        td = self.task_td.get(task_id)
        entry = self.success.get(td) if td else None
        return entry is not None and (entry.provenance == GROUND_TRUTH or run_id in entry.runs)

    def task_attempts(self, run_id: str, task_id: str) -> list[Attempt]:
        """Attempts of a task in a run, oldest first."""
        return list(self.attempts.get((run_id, task_id), ()))

    def knowledge(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Knowledge]:
        """Knowledge for ``(task-description id, trace or success id)`` pairs (one store read).

        The knowledge id is the trace / success node id; pairs whose nodes are missing are left
        out of the returned dict.
        """
        nodes = self.graph.get_nodes([n for pair in pairs for n in pair])
        out: dict[tuple[str, str], Knowledge] = {}
        for td, nid in pairs:
            t, n = nodes.get(td), nodes.get(nid)
            if t is None or n is None or (td, nid) in out:
                continue
            out[(td, nid)] = Knowledge(
                Task.from_dict(t.attrs["task"]),
                Workspace.from_dict(n.attrs["workspace"]),
                SingleFeedback.from_dict(n.attrs["feedback"]),
                id=nid,
            )
        return out

    def sync_indexes(self) -> None:
        """Reload a vector index another process or store object changed (one store read
        checks every kind)."""
        cols = list(self.graph.collections.values())
        states = self.store.collection_states([c.name for c in cols])
        for col in cols:
            col.sync(stored=states[col.name])

    def query_vector(self, text: str) -> npt.NDArray[np.float32]:
        """Embedding of a query text: memoized in memory, not written to the embedding cache."""
        vec = self._query_vectors.pop(text, None)
        if vec is None:
            col = next(iter(self.graph.collections.values()))
            vec = col.embedder.inner.embed([text])[0]
        self._query_vectors[text] = vec
        if len(self._query_vectors) > QUERY_VECTOR_MEMO:
            self._query_vectors.pop(next(iter(self._query_vectors)))
        return vec

    def stats(self) -> dict[str, int]:
        """Node counts per kind, attempts and solved task descriptions."""
        from costeer_lab.graph import NODE_KINDS

        out = {f"nodes.{k}": self.store.count_nodes(k) for k in NODE_KINDS}
        out["edges"] = self.store.count_edges()
        out["attempts"] = sum(len(v) for v in self.attempts.values())
        out["solved_task_descriptions"] = len(self.success)
        return out

    #: Whether :meth:`close` closes the store (set by ``open_kb`` when it opened the store).
    owns_store = False

    def checkpoint(self) -> None:
        """Write the persisted vector indexes that moved on since their files were written
        (atomically; the next open then loads them instead of rebuilding)."""
        self.graph.checkpoint()

    def close(self) -> None:
        """Write the persisted indexes (:meth:`checkpoint`), then close the store if this KB
        opened it (``open_kb`` from a URL); idempotent.

        An index that cannot be written (its store already closed by the caller) is logged
        and left stale: the next open rebuilds it from the store.
        """
        if not self._closed:
            self._closed = True
            try:
                self.checkpoint()
            except StoreError as exc:
                _log.warning("knowledge base closed without saving its indexes: %s", exc)
        if self.owns_store:
            self.store.close()
