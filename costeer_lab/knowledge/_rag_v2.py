"""``RAGStrategyV2``: former-trace, similar, component and error queries over the graph KB."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from costeer_lab.graph import TASK_DESCRIPTION
from costeer_lab.index import SearchResult
from costeer_lab.knowledge._attempts import as_triples, deteriorated
from costeer_lab.knowledge._error_query import error_fix_candidates
from costeer_lab.knowledge._harmful import harmful_items
from costeer_lab.knowledge._kb_v2 import (
    GROUND_TRUTH,
    Attempt,
    AttemptInput,
    Fix,
    KnowledgeBaseV2,
)
from costeer_lab.knowledge._querylog import QueryLogger
from costeer_lab.knowledge._retrieve import nearest, search_solved
from costeer_lab.knowledge._sampler import KnowledgeSampler
from costeer_lab.records import (
    ErrorFix,
    Knowledge,
    QueriedKnowledge,
    ScoredKnowledge,
    SingleFeedback,
    Task,
    Workspace,
)
from costeer_lab.settings import RAGSettings, get_settings

__all__ = ["RAGStrategyV2"]

Vector = npt.NDArray[np.float32]


class RAGStrategyV2:
    """The CoSTEER knowledge strategy on the graph KB (:class:`KnowledgeBaseV2`).

    Per task, :meth:`query` runs

    * **former trace**: the task's own last attempts in this run (deteriorated ones dropped,
      optionally keeping the latest); past ``trial_limit`` failed attempts the task is failed;
    * **similar**: successful tasks with the most similar descriptions (FAISS);
    * **component**: successful tasks sharing the most of the task's components first (the
      method's intersection tiers), description similarity breaking ties within a tier,
      balancing ground-truth and self-earned knowledge;
    * **error**: for the fingerprints of the last feedback, ``(error, failing code, fixed code)``
      triples from tasks that hit the same error node and later succeeded (falling back to
      errors with a similar fingerprint embedding).

    Every query is logged (``query_log`` records). :meth:`generate_knowledge` writes each attempt
    into the graph.

    Args:
        settings: limits and sampler (default: the ``rag`` section of the settings).

    Example:
        >>> from costeer_lab.knowledge import open_kb
        >>> kb = open_kb(store=":memory:")
        >>> t = Task("t1", "MA5", "mean close", formulation="Mean($close, 5)")
        >>> qk = RAGStrategyV2().query(kb, [t], {}, run_id="r", attempt=1)
        >>> qk.former_traces["t1"], qk.error_fixes["t1"]
        ((), ())
    """

    name = "v2"
    #: Every query kind of the strategy; ``query_kinds`` holds those the settings leave on.
    all_query_kinds: tuple[str, ...] = ("former_trace", "similar", "component", "error")

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

    # -- knowledge generation --------------------------------------------------------------------
    def generate_knowledge(
        self,
        kb: KnowledgeBaseV2,
        trace: Sequence[tuple[Task, Workspace, SingleFeedback] | Knowledge],
        *,
        run_id: str,
    ) -> None:
        """Write one evolution step (``(task, implementation, feedback)`` triples or
        :class:`Knowledge` records, one per task) into the KB.

        Each attempt becomes a trace node linked to its task description (and components) and
        to the error nodes it hit; a success adds a success node and turns the task's earlier
        errors into error fixes. Attempt numbers continue the task's count in this run.
        """
        counts: dict[str, int] = {}
        entries = []
        for task, ws, fb in as_triples(trace):
            n = counts.get(task.id, len(kb.task_attempts(run_id, task.id))) + 1
            counts[task.id] = n
            entries.append(AttemptInput(task, ws, fb, run_id, n))
        kb.record_many(entries)

    # -- queries ---------------------------------------------------------------------------------
    def query(
        self,
        kb: KnowledgeBaseV2,
        tasks: Sequence[Task],
        last_feedback: Mapping[str, SingleFeedback | None],
        *,
        run_id: str,
        attempt: int,
        stream: str | None = None,
    ) -> QueriedKnowledge:
        """Knowledge for one evolution step of ``tasks`` (see the class docstring).

        Args:
            kb: the graph knowledge base.
            tasks: the tasks of the step.
            last_feedback: task id → feedback of its previous attempt (``None``/absent: none).
            run_id: the run; former traces, trial counts and self-earned successes are per run.
            attempt: the step number (logged, and part of the sampler's seed).
            stream: the random stream of the sampler's draws; each draw is seeded by
                ``(settings.seed, stream, task id, attempt, purpose)``. Default: the strategy's
                :attr:`stream_id`, else ``run_id``. Arms of one experiment pass the same stream
                for the same seed and stage (``"seed<s>[-<stage>]"``, never the arm), so they
                draw common random numbers and a contrast measures the treatment, not the
                sampling noise.
        """
        s = self.settings
        stream = stream or self.stream_id or run_id
        kb.sync_indexes()
        log = QueryLogger(
            kb.store,
            run_id,
            attempt,
            self.name,
            enabled=s.log_queries,
            index=kb.graph.collections[TASK_DESCRIPTION].kind,
        )
        solved: dict[str, tuple[str, str]] = {}
        failed: set[str] = set()
        plans: dict[str, _Plan] = {}
        on = set(self.query_kinds)
        harmful = harmful_items(kb.store, s) if s.demote_harmful else None
        success = kb.success
        for task in tasks:
            td = kb.td_of(task)
            if kb.is_solved(task.id, run_id=run_id):
                solved[task.id] = (td, success[td].node)
                continue
            if self._trials(kb, task, run_id) >= s.trial_limit:
                failed.add(task.id)
            key = (stream, task.id, attempt)
            vec = kb.query_vector(task.get_task_information())
            near = nearest(kb, vec) if success else None
            plans[task.id] = _Plan(
                former=[(td, a.trace) for a in self._former(kb, task, run_id)]
                if "former_trace" in on
                else [],
                similar=self._similar(kb, task, vec, key, near, harmful, td=td)
                if "similar" in on
                else [],
                component=self._component(kb, task, vec, key, near, harmful, td=td)
                if "component" in on
                else [],
                errors=self._errors(kb, task, last_feedback.get(task.id), key, td=td)
                if "error" in on
                else [],
            )
        pairs = list(solved.values())
        for p in plans.values():
            pairs += p.former
            pairs += [(td, success[td].node) for td, _ in (*p.similar, *p.component)]
            pairs += [(f.td, f.failed_trace) for f, _ in p.errors]
            pairs += [(f.td, f.success) for f, _ in p.errors]
        ks = kb.knowledge(pairs)

        def scored(picked: list[tuple[str, float]]) -> tuple[ScoredKnowledge, ...]:
            return tuple(
                ScoredKnowledge(ks[(td, success[td].node)], sc)
                for td, sc in picked
                if (td, success[td].node) in ks
            )

        former: dict[str, tuple[Knowledge, ...]] = {}
        similar: dict[str, tuple[ScoredKnowledge, ...]] = {}
        comps: dict[str, tuple[ScoredKnowledge, ...]] = {}
        fixes: dict[str, tuple[ErrorFix, ...]] = {}
        for tid, p in plans.items():
            former[tid] = tuple(ks[x] for x in p.former if x in ks)
            similar[tid] = scored(p.similar)
            comps[tid] = scored(p.component)
            fixes[tid] = tuple(
                ErrorFix(
                    f.fingerprint,
                    f.error_text,
                    ks[(f.td, f.failed_trace)],
                    ks[(f.td, f.success)],
                    sc,
                )
                for f, sc in p.errors
                if (f.td, f.failed_trace) in ks and (f.td, f.success) in ks
            )
            logged = {
                "former_trace": [(k.id, 1.0) for k in former[tid]],
                "similar": [(x.knowledge.id, x.score) for x in similar[tid]],
                "component": [(x.knowledge.id, x.score) for x in comps[tid]],
                "error": [(f.fixed.id, f.score) for f in fixes[tid]],
            }
            for kind in self.query_kinds:
                log.add(tid, kind, logged[kind])
        log.flush()
        return QueriedKnowledge(
            success_task_to_knowledge={t: ks[p] for t, p in solved.items() if p in ks},
            failed_task_info_set=frozenset(failed),
            former_traces=former,
            similar_successful=similar,
            error_fixes=fixes,
            component_matches=comps,
        )

    @staticmethod
    def _trials(kb: KnowledgeBaseV2, task: Task, run_id: str) -> int:
        return sum(1 for a in kb.task_attempts(run_id, task.id) if not a.succeeded)

    def _former(self, kb: KnowledgeBaseV2, task: Task, run_id: str) -> list[Attempt]:
        """Former-trace query: the task's last attempts in this run, oldest first."""
        s = self.settings
        attempts = kb.task_attempts(run_id, task.id)
        if not attempts or s.max_former_traces == 0:
            return []
        kept: list[Attempt] = []
        best: tuple[int, float | None] | None = None
        for a in attempts:
            if s.drop_deteriorated and best is not None and deteriorated(a.level, a.score, best):
                continue
            kept.append(a)
            best = (a.level, a.score)
        chosen = kept[-s.max_former_traces :]
        if s.include_latest_attempt and attempts[-1] not in chosen:
            if len(chosen) >= s.max_former_traces:
                chosen = chosen[1:]
            chosen.append(attempts[-1])
        return chosen

    def _similar(
        self,
        kb: KnowledgeBaseV2,
        task: Task,
        vec: Vector,
        key: tuple[object, ...],
        near: SearchResult | None = None,
        harmful: Mapping[str, object] | None = None,
        *,
        td: str | None = None,
    ) -> list[tuple[str, float]]:
        """Similar query: successful task descriptions closest to the task's (itself excluded);
        with ``harmful`` (``demote_harmful``), flagged items move behind all others. ``td``:
        the task's description id when the caller has it."""
        s = self.settings
        success = kb.success
        if s.max_similar == 0 or not success:
            return []
        own = td or kb.td_of(task)
        widen = s.sampler != "top" or bool(harmful)
        pool = s.max_similar * (s.candidate_multiplier if widen else 1)
        ranked = search_solved(kb, vec, pool, lambda x: x != own and x in success, near=near)
        if harmful:
            ranked.sort(key=lambda x: success[x[0]].node in harmful)
        return self.sampler.sample(
            ranked, s.max_similar, scores=[x[1] for x in ranked], key=(*key, "similar")
        )

    def _component(
        self,
        kb: KnowledgeBaseV2,
        task: Task,
        vec: Vector,
        key: tuple[object, ...],
        near: SearchResult | None = None,
        harmful: Mapping[str, object] | None = None,
        *,
        td: str | None = None,
    ) -> list[tuple[str, float]]:
        """Component query: successful tasks sharing the most components with the task.

        The method's intersection tiers: tier ``m`` holds the successful tasks sharing exactly
        ``m`` of the task's components. Tiers are visited from the largest ``m`` down; within a
        tier, description similarity only breaks ties. The first ``k * candidate_multiplier``
        candidates form the pool; ``component_gt_ratio`` of the ``k`` picks come from ground
        truth (a side that runs short is filled from the other). The score of a pick is the
        fraction of the task's components it shares. With ``harmful`` (``demote_harmful``),
        flagged items move behind all others. ``td``: the task's description id when the
        caller has it.
        """
        s = self.settings
        success = kb.success
        k = s.max_component_matches
        comps = [kb.component_id(c) for c in kb.components_of(task)]
        shared = kb.solved.shared_counts(comps)  # ordinal -> components shared (postings)
        own = kb.solved.ordinal.get(td or kb.td_of(task))
        if own is not None:
            shared[own] = 0
        top = int(shared.max()) if shared.size else 0  # counts are at most len(comps)
        if k == 0 or top == 0:
            return []
        pool_size = k * s.candidate_multiplier
        pool: list[tuple[str, float, float]] = []  # (td, share, similarity)
        for m in range(top, 0, -1):  # tiers, largest share first (one vectorised pass each)
            if len(pool) >= pool_size:
                break
            tier = np.flatnonzero(shared == m)
            if not tier.size:
                continue
            want = min(pool_size - len(pool), len(tier))
            ranked = search_solved(kb, vec, want, _InTier(kb, shared, m), tier, near)
            pool += [(td, m / len(comps), sim) for td, sim in ranked]

        def order(x: tuple[str, float, float]) -> tuple[bool, float, float]:
            flagged = harmful is not None and success[x[0]].node in harmful
            return flagged, -x[1], -x[2]

        pool.sort(key=order)
        gt = [x for x in pool if success[x[0]].provenance == GROUND_TRUTH]
        earned = [x for x in pool if success[x[0]].provenance != GROUND_TRUTH]
        n_gt = min(len(gt), max(round(k * s.component_gt_ratio), k - len(earned)))
        picked = self.sampler.sample(gt, n_gt, scores=[x[2] for x in gt], key=(*key, "gt"))
        picked += self.sampler.sample(
            earned, k - len(picked), scores=[x[2] for x in earned], key=(*key, "self")
        )
        picked.sort(key=order)
        return [(td, share) for td, share, _ in picked]

    def _errors(
        self,
        kb: KnowledgeBaseV2,
        task: Task,
        feedback: SingleFeedback | None,
        key: tuple[object, ...],
        *,
        td: str | None = None,
    ) -> list[tuple[Fix, float]]:
        """Error query (see :func:`error_fix_candidates`), then the sampler."""
        s = self.settings
        if feedback is None or s.max_error_fixes == 0:
            return []
        ranked = error_fix_candidates(
            kb, td or kb.td_of(task), feedback, s.max_error_fixes * s.candidate_multiplier,
            s.error_similarity,
        )  # fmt: skip
        return self.sampler.sample(
            ranked, s.max_error_fixes, scores=[x[1] for x in ranked], key=(*key, "error")
        )


class _InTier:
    """Membership of a task description in tier ``m`` (shares exactly ``m`` components)."""

    def __init__(self, kb: KnowledgeBaseV2, shared: npt.NDArray[np.integer[Any]], m: int) -> None:
        self.ordinal, self.shared, self.m = kb.solved.ordinal, shared, m

    def __call__(self, td: str) -> bool:
        o = self.ordinal.get(td)
        return o is not None and int(self.shared[o]) == self.m


@dataclass
class _Plan:
    """What the queries chose for one task, as node ids (fetched in one store read)."""

    former: list[tuple[str, str]]
    similar: list[tuple[str, float]]
    component: list[tuple[str, float]]
    errors: list[tuple[Fix, float]]
