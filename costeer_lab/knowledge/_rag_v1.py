"""``RAGStrategyV1``: similar successful implementations by embedding distance, and the task's
own failed attempts (so the coder does not repeat them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from costeer_lab.knowledge._attempts import as_triples
from costeer_lab.knowledge._kb_v1 import KnowledgeBaseV1
from costeer_lab.knowledge._querylog import QueryLogger
from costeer_lab.knowledge._sampler import KnowledgeSampler
from costeer_lab.records import (
    Knowledge,
    QueriedKnowledge,
    ScoredKnowledge,
    SingleFeedback,
    Task,
    Workspace,
)
from costeer_lab.settings import RAGSettings, get_settings

__all__ = ["RAGStrategyV1"]


class RAGStrategyV1:
    """The first CoSTEER RAG strategy over :class:`KnowledgeBaseV1`.

    :meth:`query` returns, per task, the most similar successful implementations
    (``similar_successful``) and the task's failed attempts in this run (``former_traces``, the
    last ``max_former_traces``); tasks past ``trial_limit`` failures are marked failed.

    Example:
        >>> from costeer_lab.knowledge import open_kb
        >>> kb = open_kb(store=":memory:", version="v1")
        >>> qk = RAGStrategyV1().query(kb, [Task("t", "T", "x")], {}, run_id="r", attempt=1)
        >>> qk.similar_successful["t"]
        ()
    """

    name = "v1"
    #: Every query kind of the strategy; ``query_kinds`` holds those the settings leave on.
    all_query_kinds: tuple[str, ...] = ("former_trace", "similar")

    def __init__(
        self, settings: RAGSettings | None = None, *, stream_id: str | None = None
    ) -> None:
        self.settings = settings or get_settings().rag
        #: Keys the sampler's random draws instead of the run id (common random numbers).
        self.stream_id = stream_id
        s = self.settings
        self.sampler = KnowledgeSampler(
            s.sampler,
            seed=s.seed,
            temperature=s.sampler_temperature,
            keep_probability=s.sampler_keep_probability,
        )
        self.query_kinds: tuple[str, ...] = tuple(
            k for k in self.all_query_kinds if getattr(s, f"{k}_query")
        )

    def generate_knowledge(
        self,
        kb: KnowledgeBaseV1,
        trace: Sequence[tuple[Task, Workspace, SingleFeedback] | Knowledge],
        *,
        run_id: str,
    ) -> None:
        """Remember each ``(task, implementation, feedback)`` of one step (one transaction)."""
        with kb.store.transaction():
            for task, ws, fb in as_triples(trace):
                n = len(kb.traces.get((run_id, task.id), ())) + 1
                kb.record(task, ws, fb, run_id=run_id, attempt=n)

    def query(
        self,
        kb: KnowledgeBaseV1,
        tasks: Sequence[Task],
        last_feedback: Mapping[str, SingleFeedback | None],
        *,
        run_id: str,
        attempt: int,
        stream: str | None = None,
    ) -> QueriedKnowledge:
        """Knowledge for one evolution step of ``tasks``.

        ``stream`` keys the sampler's draws (default: :attr:`stream_id`, else ``run_id``); see
        :class:`RAGStrategyV2`.
        """
        s = self.settings
        stream = stream or self.stream_id or run_id
        kb.collection.sync()  # the index kind logged is the one searched
        log = QueryLogger(
            kb.store,
            run_id,
            attempt,
            self.name,
            enabled=s.log_queries,
            index=kb.collection.kind,
        )
        solved: dict[str, Knowledge] = {}
        failed: set[str] = set()
        former: dict[str, tuple[Knowledge, ...]] = {}
        similar: dict[str, tuple[ScoredKnowledge, ...]] = {}
        for task in tasks:
            if kb.is_solved(task.id, run_id=run_id):
                solved[task.id] = kb.success[task.id][0]
                continue
            fails = [k for k in kb.traces.get((run_id, task.id), ()) if not k.feedback.succeeded]
            if len(fails) >= s.trial_limit:
                failed.add(task.id)
            keep = s.max_former_traces if s.former_trace_query else 0
            former[task.id] = tuple(fails[-keep:]) if keep else ()
            if s.former_trace_query:
                log.add(task.id, "former_trace", [(k.id, 1.0) for k in former[task.id]])
            if not s.similar_query:
                similar[task.id] = ()
                continue
            pool = s.max_similar * (1 if s.sampler == "top" else s.candidate_multiplier)
            ranked = kb.similar_successful(task.get_task_information(), pool, exclude=task.id)
            picked = self.sampler.sample(
                ranked, s.max_similar, scores=[x[1] for x in ranked],
                key=(stream, task.id, attempt, "similar"),
            )  # fmt: skip
            similar[task.id] = tuple(ScoredKnowledge(k, sc) for k, sc in picked)
            log.add(task.id, "similar", [(k.id, sc) for k, sc in picked])
        log.flush()
        return QueriedKnowledge(
            success_task_to_knowledge=solved,
            failed_task_info_set=frozenset(failed),
            former_traces=former,
            similar_successful=similar,
        )
