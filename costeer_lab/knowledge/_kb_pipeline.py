"""The pipeline of ``KnowledgeBaseV2.record_stream``: a batch is written to the store by a
writer process while this process prepares the next one.

About half of a bulk insert's time is Python (rows, ids, embedding, JSON) and half is the
store's own work (B-tree pages, the commit). A writer process
(:meth:`~costeer_lab.store.BaseStore.writer_process`; a thread would share Python's lock)
gives the second half its own core. Per batch ``k``:

1. prepare ``k``: its rows, then its plan against the graph (what is new, the embeddings),
   counting the nodes and edges of the batches still being written as present, so ``k``
   writes what one ``record_many`` after them would; the component lists of ``k`` are
   taken in at once (``k + 1`` reads them). Reading the store meanwhile is safe: it sees what
   was committed;
2. hand ``k`` to the writer, which holds up to two batches (``k - 1`` being written, ``k``
   next: a batch that takes the writer longer than usual, such as one that checkpoints the
   WAL, leaves neither process waiting); when two are held already, first wait for the
   oldest (``k - 2``) and take it in (vector indexes, graph, lookups) while the writer goes
   on; then draw ``k + 1``.

The writer process is started before the first batch is prepared (it is ready in about 0.13
s, long before the batch), so every batch is written there; a stream of one short batch starts
none and is written here, as is every batch of a store without a writer process. (Writing the
first batch here while the writer started kept this process from preparing the second one:
0.2 s of a 100k-task build.)

A failure keeps what committed before it, as without the pipeline: a failing write keeps none
of its batch and no later batch is written; a failure while a batch is prepared (a bad entry,
the stream's source) lets the write in flight finish first. Either way the knowledge base's
lookups, which may hold parts of a batch that was not written, are read again from the store
on next use.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costeer_lab.graph import GraphWrite
    from costeer_lab.knowledge._kb_batch import Batch
    from costeer_lab.knowledge._kb_records import AttemptInput
    from costeer_lab.knowledge._kb_v2 import KnowledgeBaseV2
    from costeer_lab.store._writer import WriterProcess

__all__ = ["Pipeline"]

_log = logging.getLogger(__name__)


class Pipeline:
    """Batches of attempts written one behind the other (see the module); use as a context
    manager around the :meth:`push` calls, then :meth:`drain`.

    Example:
        >>> from costeer_lab.embed import get_embedder
        >>> from costeer_lab.knowledge import KnowledgeBaseV2
        >>> from costeer_lab.knowledge._kb_records import AttemptInput
        >>> from costeer_lab.records import SingleFeedback, Task, Workspace
        >>> from costeer_lab.store import get_store
        >>> kb = KnowledgeBaseV2(get_store(":memory:"), get_embedder("hashing"))
        >>> ok = SingleFeedback(final_decision=True)
        >>> with Pipeline(kb) as line:
        ...     for lo in (0, 3):
        ...         line.push([AttemptInput(Task(f"t{i}", f"f{i}", "d"),
        ...                                 Workspace({"m.py": f"{i}"}), ok, "r", 1)
        ...                    for i in range(lo, lo + 3)])
        ...     line.drain()
        >>> line.done, kb.is_solved("t5", run_id="r")
        (6, True)
    """

    def __init__(self, kb: KnowledgeBaseV2, batch_size: int | None = None) -> None:
        self.kb = kb
        #: The stream's batch size: a first batch shorter than that is the whole stream, and
        #: no writer is started for it (``None``: start one with the first batch).
        self.batch_size = batch_size
        #: Attempts written and taken in.
        self.done = 0
        self._writer: WriterProcess | None = None
        self._started = False  # a writer was asked for
        #: The batches handed to the writer and not taken in yet (oldest first), with plans.
        self._in_flight: deque[tuple[Batch, GraphWrite]] = deque()
        self._unsent = False  # a batch was prepared (its components taken in), not handed over
        self._failed = False  # a write failed

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is not None:
                self._abandon()
        finally:
            if self._writer is not None:
                self._writer.close()

    def push(self, chunk: Sequence[AttemptInput]) -> None:
        """Prepare ``chunk`` and hand it to the writer (written here when there is none)."""
        kb = self.kb
        held = self._in_flight
        if not self._started and (self.batch_size is None or len(chunk) == self.batch_size):
            self._started = True  # more may follow: the child starts while this batch is made
            self._writer = kb.store.writer_process()
        batch = kb._batch(chunk, [b for b, _ in held])
        self._unsent = True  # the lookups hold part of a batch not handed over
        kb._take_components(batch)  # the next batch reads them
        plan = kb.graph.plan_write(batch.nodes, batch.edges, [p for _, p in held])
        write = kb._batch_write(batch, plan)
        writer = self._writer
        if writer is None:  # a stream of one short batch, or a store without a writer
            self._take(batch, plan, kb.store.write_batch(write))
            self._unsent = False
            return
        oldest = None
        if len(held) == writer.depth:  # the writer's queue is full: take the oldest in first
            oldest = held.popleft()
            states = self._result()
        try:
            writer.submit(write)
            held.append((batch, plan))
            self._unsent = False
        finally:  # the oldest batch committed: taken in while the writer writes the others
            if oldest is not None:
                self._take(*oldest, states)

    def drain(self) -> None:
        """Wait for every write in flight (raising the first error) and take them in."""
        while self._in_flight:
            batch, plan = self._in_flight.popleft()
            self._take(batch, plan, self._result())

    def _result(self) -> list[tuple[tuple[int, str], tuple[int, str]]]:
        """The states of the oldest write in flight; a failed write leaves lookups that hold
        part of its batch."""
        assert self._writer is not None
        try:
            return self._writer.result()
        except BaseException:
            self._failed = True
            raise

    def _take(
        self,
        batch: Batch,
        plan: GraphWrite,
        states: Sequence[tuple[tuple[int, str], tuple[int, str]]],
    ) -> None:
        self.kb._finish(batch, plan, states)
        self.done += len(batch.rows)

    def _abandon(self) -> None:
        """After a failure: let a write in flight end (taken in if it committed); if the
        lookups hold part of a batch that was not written, have them read again from the
        store (a failure of the stream's source between batches leaves nothing to undo)."""
        while self._in_flight:
            try:
                self.drain()
            except BaseException as exc:  # the error being raised says what went wrong
                _log.warning("a batch written while another step failed failed too: %s", exc)
        if self._unsent or self._failed:
            self.kb._forget()
