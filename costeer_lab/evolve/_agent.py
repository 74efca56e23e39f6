"""EvoAgent: query knowledge → implement → evaluate → generate knowledge → repeat.

Every completed step is one store transaction (knowledge written by the RAG strategy + the step
record), so a run killed at any moment resumes from its last completed step.

Infrastructure errors (the model endpoint failed, a replay miss) are not attempts: they are not
evaluated, not turned into knowledge, not counted as trials; the step record lists them under
``infra_errors`` and the task is tried again at the next step. A configuration error (refused
key, unknown model, rejected request) or a replay miss stops the run with that one error, after
the step's other attempts are saved; so does a transient error that hit every task of
:data:`INFRA_STREAK_LIMIT` steps in a row.

An attempt the evaluator could not judge (feedback with ``details["infrastructure_error"]``: the
reference implementation or the evaluator itself failed) is recorded once, as not evaluated,
and stops its task: it uses no more of the task's retries (another attempt of the coder cannot
help) and is not turned into knowledge.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Text bars, in notebooks one output per cell updated in place: a saved or exported notebook
# keeps each bar's final line (tqdm's widget bar would be saved as a stale "0 %" placeholder).
from costeer_lab._progress import progress_bar
from costeer_lab.errors import ConfigurationError, EndpointError
from costeer_lab.evolve._context import TaskContextHook
from costeer_lab.evolve._item import EvolvingItem
from costeer_lab.evolve._protocols import KnowledgeBaseLike, RAGLike, StepEvaluator
from costeer_lab.evolve._strategy import (
    EvolvingStrategy,
    ImplementOutcome,
    infra_exception,
    is_fatal,
)
from costeer_lab.knowledge import fix_relevant, tasks_related, trace_relevant
from costeer_lab.records import QueriedKnowledge, SingleFeedback, Task, Workspace
from costeer_lab.store import BaseStore

__all__ = [
    "EvoAgent",
    "RAGLike",
    "RunState",
    "StepEvaluator",
    "is_not_evaluated",
    "kb_size",
    "retrieved_summary",
]

STEP_KIND = "evo_step"
RUN_KIND = "evo_run"
#: Steps in a row in which every task hit a transient infrastructure error before the run stops.
INFRA_STREAK_LIMIT = 3


def retrieved_summary(
    qk: QueriedKnowledge,
    task_id: str,
    kinds: Sequence[str],
    *,
    task: Task | None = None,
    last_feedback: SingleFeedback | None = None,
) -> dict[str, Any]:
    """``{query_kind: [{"id", "score"[, "relevant"]}, …]}`` of what was retrieved for one task.

    ``kinds`` are the query kinds the strategy ran; a kind that ran and found nothing is present
    with an empty list (a miss), a kind that did not run is absent. With ``task`` (the target)
    each entry also says whether it is ``relevant`` to it (:func:`_relevance`): a retrieval
    *hit* is a relevant item, not merely a returned one. ``last_feedback`` is the feedback the
    coder is given (the current failure); the judgment reads no ground truth.
    """
    out: dict[str, list[dict[str, Any]]] = {}
    if "similar" in kinds:
        out["similar"] = [
            {"id": s.knowledge.id, "score": s.score}
            for s in qk.similar_successful.get(task_id, ())
        ]
    if "component" in kinds:
        out["component"] = [
            {"id": s.knowledge.id, "score": s.score} for s in qk.component_matches.get(task_id, ())
        ]
    if "former_trace" in kinds:
        out["former_trace"] = [
            {"id": k.id, "score": 1.0} for k in qk.former_traces.get(task_id, ())
        ]
    if "error" in kinds:
        out["error"] = [
            {"id": f.fixed.id or f.fingerprint, "score": f.score}
            for f in qk.error_fixes.get(task_id, ())
        ]
    if task is not None:
        for kind, flags in _relevance(qk, task, last_feedback).items():
            if kind in out:
                for entry, flag in zip(out[kind], flags, strict=True):
                    entry["relevant"] = flag
    return out


def _relevance(
    qk: QueriedKnowledge, task: Task, last_feedback: SingleFeedback | None
) -> dict[str, list[bool]]:
    """Per query kind, whether each retrieved item is relevant to ``task`` (same order as
    :func:`retrieved_summary`; rules in :mod:`costeer_lab.knowledge._relevance`)."""
    tid = task.id
    return {
        "similar": [
            tasks_related(s.knowledge.task, task) for s in qk.similar_successful.get(tid, ())
        ],
        "component": [
            tasks_related(s.knowledge.task, task) for s in qk.component_matches.get(tid, ())
        ],
        "former_trace": [trace_relevant(k, last_feedback) for k in qk.former_traces.get(tid, ())],
        "error": [fix_relevant(f.fingerprint, last_feedback) for f in qk.error_fixes.get(tid, ())],
    }


@dataclass
class RunState:
    """Where a run stands: rebuilt from the store's step records on resume."""

    step: int = 0
    succeeded: set[str] = field(default_factory=set)
    trials: dict[str, int] = field(default_factory=dict)
    last_feedback: dict[str, SingleFeedback | None] = field(default_factory=dict)
    best: dict[str, tuple[Workspace, SingleFeedback]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: Wall time of each step run by this process (resumed steps are not timed again).
    step_walls: list[float] = field(default_factory=list)
    #: Tasks the RAG strategy gave up on (past its trial limit): never selected again.
    given_up: set[str] = field(default_factory=set)
    #: Infrastructure errors (``step``, ``task_id``, ``kind``, ``message``): not attempts.
    infra_errors: list[dict[str, Any]] = field(default_factory=list)
    #: Steps in a row (this process) in which every task hit an infrastructure error.
    infra_streak: int = 0
    #: Tasks whose last attempt was not evaluated (``details["infrastructure_error"]``: the
    #: reference or the evaluator failed): stopped, since another attempt of the coder cannot
    #: help; the attempt is recorded once, as not evaluated.
    not_evaluated: set[str] = field(default_factory=set)


def is_not_evaluated(fb: SingleFeedback) -> bool:
    """Whether an attempt's feedback is "not evaluated": the evaluation infrastructure failed
    (``details["infrastructure_error"]``), so it says nothing about the code.

    Example:
        >>> is_not_evaluated(SingleFeedback(details={"infrastructure_error": "x"}))
        True
    """
    return "infrastructure_error" in fb.details


def kb_size(kb: KnowledgeBaseLike) -> int:
    """Size of a knowledge base: graph nodes (V2), else attempts + solved tasks (V1)."""
    stats: Mapping[str, int] = kb.stats()
    nodes = sum(v for k, v in stats.items() if k.startswith("nodes."))
    return int(nodes or stats.get("attempts", 0) + stats.get("successful_tasks", 0))


def _better(new: SingleFeedback, old: SingleFeedback) -> bool:
    """Fallback order: success beats failure; then a higher ``details['score']``; then newer."""
    if new.succeeded != old.succeeded:
        return new.succeeded
    ns, os_ = new.details.get("score"), old.details.get("score")
    if isinstance(ns, int | float) and isinstance(os_, int | float):
        return bool(ns >= os_)
    return True


class EvoAgent:
    """The CoSTEER evolution loop over one :class:`EvolvingItem`.

    Args:
        strategy: selects and implements tasks (holds the coder config and executor).
        evaluator: evaluates a step's implementations.
        store: where step records (and, through ``kb``, knowledge) are persisted.
        rag: a RAG strategy, or ``None`` for the no-knowledge baseline.
        kb: the knowledge base the RAG strategy reads and writes.
        run_id: identifies the run in the store; rerunning the same id resumes it.
        max_loop: maximum number of evolution steps.
        seed: seed handed to coders (in their config) and recorded with the run.
        query_kinds: the query kinds ``rag`` runs (recorded as hits/misses in results).
        context: records each step in the tasks' rich contexts and skips tasks its loop
            prevention stopped (see :class:`TaskContextHook`); ``None``: off.

    Example:
        See ``costeer_lab.experiment.run_experiment`` which wires every part.
    """

    def __init__(
        self,
        *,
        strategy: EvolvingStrategy,
        evaluator: StepEvaluator,
        store: BaseStore,
        rag: RAGLike[Any] | None = None,
        kb: KnowledgeBaseLike | None = None,
        run_id: str = "run",
        max_loop: int = 10,
        seed: int = 0,
        query_kinds: Sequence[str] = (),
        progress: bool = True,
        context: TaskContextHook | None = None,
    ) -> None:
        if max_loop < 1:
            raise ConfigurationError(f"max_loop must be >= 1, got {max_loop}")
        if rag is not None and kb is None:
            raise ConfigurationError("a RAG strategy needs a knowledge base (kb=...)")
        self.strategy, self.evaluator, self.store = strategy, evaluator, store
        self.rag, self.kb = rag, kb
        self.run_id, self.max_loop, self.seed = run_id, max_loop, seed
        self.query_kinds = tuple(query_kinds) if rag is not None else ()
        self.progress = progress
        self.context = context
        if context is not None:
            context.bind(store)

    # -- persistence -----------------------------------------------------------------------
    def _check_run_record(self, item: EvolvingItem) -> None:
        meta = {"task_ids": item.task_ids, "max_loop": self.max_loop, "seed": self.seed}
        old = self.store.get_record(RUN_KIND, self.run_id)
        if old is None:
            self.store.put_record(RUN_KIND, self.run_id, meta)
        elif old.get("task_ids") != meta["task_ids"] or old.get("seed") != meta["seed"]:
            raise ConfigurationError(
                f"run {self.run_id!r} exists in the store with other tasks or seed; "
                "use a new run_id or a fresh store"
            )

    def load_state(self) -> RunState:
        """Rebuild the run state from the completed steps (and the run record) in the store."""
        state = RunState()
        run = self.store.get_record(RUN_KIND, self.run_id) or {}
        state.given_up = set(run.get("given_up", ()))
        for _, rec in self.store.iter_records(STEP_KIND, where={"run_id": self.run_id}):
            state.step = max(state.step, int(rec["step"]))
            for row in rec["attempts"]:
                self._apply(state, row)
            state.infra_errors += [
                {"step": int(rec["step"]), **e} for e in rec.get("infra_errors", ())
            ]
        return state

    @staticmethod
    def _apply(state: RunState, row: dict[str, Any]) -> None:
        tid = row["task_id"]
        fb = SingleFeedback.from_dict(row["feedback"])
        ws = Workspace.from_dict(row["outcome"]["workspace"])
        state.trials[tid] = state.trials.get(tid, 0) + 1
        state.last_feedback[tid] = fb
        if fb.succeeded:
            state.succeeded.add(tid)
        if is_not_evaluated(fb):
            state.not_evaluated.add(tid)
        old = state.best.get(tid)
        if old is None or _better(fb, old[1]):
            state.best[tid] = (ws, fb)
        state.rows.append(row)

    # -- the loop ----------------------------------------------------------------------------
    def run(self, item: EvolvingItem) -> RunState:
        """Evolve ``item`` until every task succeeds, is given up, or ``max_loop`` steps ran.

        Returns the final :class:`RunState`; ``item.implementations`` is set to the best
        implementation seen per task (fallback to the best step when a task never succeeded).
        """
        self._check_run_record(item)
        state = self.load_state()
        by_id = {t.id: t for t in item.tasks}
        index = {t.id: i for i, t in enumerate(item.tasks)}
        bar = progress_bar(
            total=self.max_loop,
            initial=state.step,
            desc=f"evolve {self.run_id}",
            disable=not self.progress,
            leave=False,
        )
        try:
            while state.step < self.max_loop:
                given_up = QueriedKnowledge(failed_task_info_set=frozenset(state.given_up))
                todo = self.strategy.select(item.task_ids, state.succeeded, state.trials, given_up)
                todo = [t for t in todo if t not in state.not_evaluated]
                if self.context is not None:
                    todo = [t for t in todo if not self.context.stop_reason(self.run_id, t)]
                if not todo:
                    break
                t0 = time.perf_counter()
                if not self._step(item, state, [by_id[t] for t in todo], index):
                    continue  # the RAG strategy gave up on every task: nothing ran
                state.step_walls.append(time.perf_counter() - t0)
                bar.update(1)
                bar.set_postfix(solved=f"{len(state.succeeded)}/{len(item)}")
        finally:
            bar.close()
        for tid, (ws, _) in state.best.items():
            item.implementations[index[tid]] = ws
        return state

    def _give_up(self, state: RunState, task_ids: frozenset[str]) -> None:
        """Record tasks the RAG strategy gave up on (in the run record, for a resumed run)."""
        if task_ids <= state.given_up:
            return
        state.given_up |= task_ids
        run = self.store.get_record(RUN_KIND, self.run_id) or {}
        self.store.put_record(RUN_KIND, self.run_id, {**run, "given_up": sorted(state.given_up)})

    def _step(
        self, item: EvolvingItem, state: RunState, tasks: list[Task], index: dict[str, int]
    ) -> bool:
        """One step over ``tasks``; ``False`` when the RAG strategy gave up on all of them at
        the query, so no step ran (nothing implemented, evaluated or recorded)."""
        step = state.step + 1
        t0 = time.perf_counter()
        last = {t.id: state.last_feedback.get(t.id) for t in tasks}
        if self.rag is not None:
            queried = self.rag.query(self.kb, tasks, last, run_id=self.run_id, attempt=step)
            self._give_up(state, queried.failed_task_info_set)
            tasks = [t for t in tasks if t.id not in state.given_up]
            if not tasks:
                return False
        else:
            queried = QueriedKnowledge()
        t_query = time.perf_counter()
        all_outcomes: list[ImplementOutcome] = self.strategy.implement(
            tasks,
            queried,
            last,
            seed=self.seed,
            attempt=step,
            attempts={t.id: state.trials.get(t.id, 0) + 1 for t in tasks},
        )
        t_impl = time.perf_counter()
        infra = [
            {"task_id": o.task_id, "kind": o.infra_kind or "server", "message": o.infra_message}
            | ({"status": o.infra_status} if o.infra_status is not None else {})
            for o in all_outcomes
            if o.infra_error is not None
        ]
        done = [
            (t, o, o.workspace)
            for t, o in zip(tasks, all_outcomes, strict=True)
            if o.infra_error is None and o.workspace is not None
        ]
        tasks = [t for t, _, _ in done]
        outcomes = [o for _, o, _ in done]
        gts = [item.ground_truth_for_evaluation(index[t.id]) for t in tasks]
        feedbacks = (
            self.evaluator.evaluate_many(tasks, [ws for _, _, ws in done], gts) if done else []
        )
        t_eval = time.perf_counter()
        attempts = [
            {
                "run_id": self.run_id,
                "step": step,
                "task_id": t.id,
                "outcome": o.to_dict(),
                "feedback": fb.to_dict(),
                "retrieved": retrieved_summary(
                    queried, t.id, self.query_kinds, task=t, last_feedback=last.get(t.id)
                ),
            }
            for t, o, fb in zip(tasks, outcomes, feedbacks, strict=True)
        ]
        with self.store.transaction():
            if self.context is not None and tasks:
                self.context.record_step(self.run_id, step, tasks, outcomes, feedbacks)
            if self.rag is not None and done:
                trace = [  # a not-evaluated attempt says nothing about the code: no knowledge
                    (t, ws, fb)
                    for (t, _, ws), fb in zip(done, feedbacks, strict=True)
                    if not is_not_evaluated(fb)
                ]
                self.rag.generate_knowledge(self.kb, trace, run_id=self.run_id)
            kb_nodes = kb_size(self.kb) if self.rag is not None and self.kb is not None else 0
            t_gen = time.perf_counter()
            timing = {
                "query_s": t_query - t0,
                "implement_s": t_impl - t_query,
                "evaluate_s": t_eval - t_impl,
                "generate_s": t_gen - t_eval,
            }
            for a in attempts:
                a["kb_nodes"] = kb_nodes
                a["step_timing"] = timing
            record: dict[str, Any] = {
                "run_id": self.run_id,
                "step": step,
                "attempts": attempts,
                "timing": timing,
            }
            if infra:
                record["infra_errors"] = infra
            self.store.put_record(STEP_KIND, f"{self.run_id}/{step:05d}", record)
        state.step = step
        for a in attempts:
            self._apply(state, a)
        state.infra_errors += [{"step": step, **e} for e in infra]
        self._stop_on_infra(state, infra, every_task=not done)
        return True

    def _stop_on_infra(
        self, state: RunState, infra: list[dict[str, Any]], *, every_task: bool
    ) -> None:
        """Raise the step's infrastructure error when the run cannot go on (see the module
        docstring); the step is already saved."""
        fatal = [e for e in infra if is_fatal(e["kind"])]
        if fatal:
            e = fatal[0]
            raise infra_exception(e["kind"], e["message"], e.get("status"))
        state.infra_streak = state.infra_streak + 1 if infra and every_task else 0
        if state.infra_streak >= INFRA_STREAK_LIMIT:
            e = infra[0]
            raise EndpointError(
                f"run {self.run_id!r} stopped: every task hit an infrastructure error in "
                f"{INFRA_STREAK_LIMIT} steps in a row; last: {e['message']}",
                kind=e["kind"] if e["kind"] in ("unreachable", "timeout", "server") else "server",
                status=e.get("status"),
            )
