"""The experiment runner: arms × seeds, each with its own knowledge base, tidy results out.

Output directory layout (``out``)::

    spec.json            the validated spec (seeds included)
    settings.json        the effective settings (secrets redacted); a resume with settings that
                         change results is refused (``_settings_record``)
    llm_cache.db         the LLM response cache of an ``llm`` coder that names no ``store``
    infra_errors.json    infrastructure errors (model endpoint failures) per (arm, seed): not
                         attempts, so not in the results
    kb/<arm>-seed<s>.db  one SQLite store per (arm, seed): knowledge, query log, step records
    kb/<stage>/<arm>-seed<s>.db   the same per stage, for a staged spec (``stages``)
    shared.json          the run key and shared stores of a spec with ``knowledge``/``memory``
                         (``_shared``): those arms write there, not into ``kb/``
    start_snapshots.json the snapshot each (stage, arm, seed) of a stage with ``start_from``
                         started from (``_start_snapshot``)
    results.parquet      one row per (arm, seed, task, attempt) — see RESULT_COLUMNS — plus a
                         ``stage`` column (``""`` for a spec without stages)
    report.html          written by ``report_experiment``

Knowledge carry-over: a stage with ``carry_knowledge`` starts each (arm, seed) from a copy
(SQLite online backup) of its store at the end of the previous stage; ``start_from`` does the
same for the first stage from an earlier run's directory. A stage's own ``start_from``
(``{snapshot, store}``) starts it from a branch of a named snapshot instead, recorded in
``start_snapshots.json``; every stage of a staged spec ends with the snapshot ``stage:<name>``
in each (arm, seed)'s file (``_start_snapshot``).

Runs resume: rerunning the same spec into the same directory continues every (arm, seed) from
its last completed step (each step is one store transaction).

``.lock`` (``_outlock.py``) is held while a run writes the folder: one run per folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import pandas as pd

from costeer_lab._fs import atomic_write_bytes, replace_durably
from costeer_lab.errors import ConfigurationError
from costeer_lab.evolve import (
    EvoAgent,
    EvolvingItem,
    EvolvingStrategy,
    RAGLike,
    RunState,
    SeedableKnowledgeBase,
    StepEvaluator,
    make_executor,
)
from costeer_lab.experiment._benchmark import (
    BENCHMARK_COLUMNS,
    add_task_columns,
    coder_and_check_columns,
)
from costeer_lab.experiment._fresh import clear_previous_run
from costeer_lab.experiment._mainguard import check_main_guard
from costeer_lab.experiment._names import store_path
from costeer_lab.experiment._outlock import check_out_free, hold_out_lock
from costeer_lab.experiment._preflight import Preflight, coder_config, preflight, select_tasks
from costeer_lab.experiment._results import RESULT_COLUMNS, save_results
from costeer_lab.experiment._settings_record import write_settings_record
from costeer_lab.experiment._shared import (
    load_run_key,
    shared_for,
    shared_run_id,
    shared_target,
    write_shared_record,
)
from costeer_lab.experiment._spec import ArmSpec, ExperimentSpec, load_spec
from costeer_lab.experiment._start_snapshot import (
    record_start,
    start_from_snapshot,
    take_stage_snapshot,
)
from costeer_lab.llm import serve_for_coder
from costeer_lab.records import Knowledge, SingleFeedback, Task
from costeer_lab.settings import get_settings
from costeer_lab.store import BaseStore, get_store, read_only_uri

if TYPE_CHECKING:
    from costeer_lab.evaluate import MultiEvaluator
    from costeer_lab.knowledge import KnowledgeBaseV1, KnowledgeBaseV2
    from costeer_lab.memory import LoopMemory
    from costeer_lab.suites import SuiteLike

__all__ = [
    "attempt_rows",
    "copy_store",
    "evolve_arm",
    "run_arm",
    "run_experiment",
    "select_tasks",
    "stream_id",
]

SEEDED_META = "experiment.seed_knowledge"

KB = TypeVar("KB", bound=SeedableKnowledgeBase)

#: Columns of ``results.parquet``: the schema, the stage, then what the coder did and what the
#: factor checks found.
OUTPUT_COLUMNS = [*RESULT_COLUMNS, "stage", *BENCHMARK_COLUMNS]


def copy_store(src: Path, dst: Path) -> None:
    """Copy a SQLite store consistently (online backup) to ``dst``, replaced atomically and
    durably (the copy is fsync-ed before the rename, the directory after it).

    Raises:
        ConfigurationError: ``src`` does not exist.
    """
    if not src.is_file():
        raise ConfigurationError(f"cannot carry knowledge over: no store at {src}")
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.unlink(missing_ok=True)
    source = sqlite3.connect(read_only_uri(src), uri=True)  # writes nothing beside src
    target = sqlite3.connect(tmp)
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()
    replace_durably(tmp, dst)


def attempt_rows(
    attempts: Sequence[Mapping[str, Any]],
    arm: str,
    seed: int,
    stage: str = "",
    *,
    memory: bool = False,
) -> list[dict[str, Any]]:
    """Results rows (``RESULT_COLUMNS`` and ``stage``) from EvoAgent step records.

    ``memory``: the arm queried the pattern memory (fills the ``memory_*`` columns).
    """
    rows = []
    for a in attempts:
        fb = SingleFeedback.from_dict(a["feedback"])
        out = a["outcome"]
        total = fb.timings.get("total_s")
        evaluate_s = float(total) if isinstance(total, int | float) else 0.0
        rows.append(
            {
                "run_id": a["run_id"],
                "arm": arm,
                "seed": seed,
                "task_id": a["task_id"],
                "attempt": int(a["step"]),
                "success": fb.succeeded,
                "execution": fb.execution or "",
                "return_checking": fb.return_checking or "",
                "code_feedback": fb.code or "",
                "error_fingerprints": json.dumps(list(fb.error_fingerprints)),
                "retrieved": json.dumps(a.get("retrieved", {}), sort_keys=True),
                "duration_s": float(out["coder_s"]) + evaluate_s,
                "coder_s": float(out["coder_s"]),
                "evaluate_s": evaluate_s,
                "prompt_tokens": int(out.get("prompt_tokens", 0)),
                "completion_tokens": int(out.get("completion_tokens", 0)),
                "cost_usd": float(out.get("cost_usd", 0.0)),
                "kb_nodes": int(a.get("kb_nodes", 0)),
                "used_knowledge_ids": json.dumps(list(out.get("used_knowledge_ids", []))),
                "isolation": str(fb.details.get("isolation", "")),
                "feedback_detail": str(fb.details.get("feedback_detail", "")),
                "infra_error": str(fb.details.get("infrastructure_error", "")),
                **_memory_columns(a, memory),
                **coder_and_check_columns(out, fb),
                "stage": stage,
            }
        )
    return rows


def _memory_columns(attempt: Mapping[str, Any], memory: bool) -> dict[str, Any]:
    """``memory_queried``, ``memory_patterns``, ``memory_used`` of one attempt (memory ids are
    recognised by their ``pattern:`` / ``failure:`` prefixes)."""
    similar = attempt.get("retrieved", {}).get("similar", []) if memory else []
    used = attempt["outcome"].get("used_knowledge_ids", []) if memory else []
    return {
        "memory_queried": memory,
        "memory_patterns": json.dumps(
            [str(h["id"]) for h in similar if str(h["id"]).startswith("pattern:")]
        ),
        "memory_used": any(str(u).startswith(("pattern:", "failure:")) for u in used),
    }


@dataclass(frozen=True)
class _ArmKnowledge(Generic[KB]):
    """An arm's knowledge base with the RAG strategy that reads and writes it.

    Built per ``arm.rag`` branch, so the pairing is checked statically (``RAGStrategyV2``
    with ``KnowledgeBaseV2``, …); the loop itself takes any pair.
    """

    kb: KB
    rag: RAGLike[KB]
    query_kinds: tuple[str, ...]


def stream_id(seed: int, stage: str = "") -> str:
    """The random stream of a (seed, stage): what the RAG samplers key their draws by.

    It names no arm, so every arm of one experiment draws the same random numbers for the same
    seed, stage, task, attempt and purpose (common random numbers); run ids (storage) keep the
    arm. Example: ``stream_id(1, "learn") == "seed1-learn"``.
    """
    return f"seed{seed}" + (f"-{stage}" if stage else "")


def _open_knowledge(
    spec: ExperimentSpec, arm: ArmSpec, seed: int, store: BaseStore, stage: str = ""
) -> (
    _ArmKnowledge[KnowledgeBaseV1]
    | _ArmKnowledge[KnowledgeBaseV2]
    | _ArmKnowledge[LoopMemory]
    | None
):
    """The arm's knowledge base and RAG strategy on ``store`` (``None``: no knowledge).

    The V1/V2 strategies draw from :func:`stream_id` (common random numbers across arms); the
    pattern memory makes no random draw.
    """
    if arm.rag == "memory":
        from costeer_lab.memory import memory_arm

        kb_m, rag_m = memory_arm(store, embedder=spec.embedder, **arm.rag_options)
        return _ArmKnowledge(kb_m, rag_m, tuple(rag_m.query_kinds))
    if arm.rag == "none":
        return None
    from costeer_lab.knowledge import make_rag_strategy, open_kb

    # the KB gets the arm's settings too: rag_options such as index_kind, hnsw_* or extractor
    # act on the knowledge base, not on the strategy
    if arm.rag == "v1":
        rag1 = make_rag_strategy("v1", seed=seed, **arm.rag_options)
        rag1.stream_id = stream_id(seed, stage)
        kb1 = open_kb(store, "v1", spec.embedder, settings=rag1.settings)
        return _ArmKnowledge(kb1, rag1, rag1.query_kinds)
    rag2 = make_rag_strategy("v2", seed=seed, **arm.rag_options)
    rag2.stream_id = stream_id(seed, stage)
    kb2 = open_kb(store, "v2", spec.embedder, settings=rag2.settings)
    return _ArmKnowledge(kb2, rag2, rag2.query_kinds)


def seeded_meta_key(rag: str, seed_tasks: Sequence[Task], *, shared: bool) -> str:
    """The store meta key that marks seed knowledge as added.

    A store of its own (one arm) holds one kind of knowledge base and one seed set:
    :data:`SEEDED_META`. A shared store may hold several (a V1 and a V2 arm, experiments
    seeding other tasks), so its key names the knowledge kind and the seed task ids.

    Example:
        >>> seeded_meta_key("v2", [], shared=False)
        'experiment.seed_knowledge'
    """
    if not shared:
        return SEEDED_META
    ids = "\x1f".join(sorted(t.id for t in seed_tasks))
    return f"{SEEDED_META}.{rag}.{hashlib.sha256(ids.encode('utf-8')).hexdigest()[:16]}"


def _seed(
    kb: SeedableKnowledgeBase,
    store: BaseStore,
    seed_tasks: Sequence[Task],
    seed_source: SuiteLike,
    meta_key: str = SEEDED_META,
) -> None:
    """Add the ground truths of ``seed_tasks`` as seed knowledge, once per store and key.

    The check and the writes are one transaction holding the store's write lock, so two
    processes seeding one shared store add the seeds once (the second finds the key set).
    """
    if not seed_tasks or store.get_meta(meta_key) is not None:
        return
    with store.transaction():
        store.lock_for_update()
        if store.get_meta(meta_key) is not None:  # another process seeded meanwhile
            return
        kb.add_seed_knowledge(
            [
                Knowledge(
                    t,
                    seed_source.ground_truth(t.id),
                    SingleFeedback(execution="ground truth", final_decision=True),
                    id=f"seed:{t.id}",
                )
                for t in seed_tasks
            ]
        )
        store.set_meta(meta_key, str(len(seed_tasks)))


def run_arm(
    spec: ExperimentSpec,
    arm: ArmSpec,
    seed: int,
    *,
    suite: SuiteLike,
    targets: Sequence[Task],
    seed_tasks: Sequence[Task],
    store_path: Path | str,
    executor: Executor | None,
    evaluator: StepEvaluator,
    progress: bool = True,
    seed_suite: SuiteLike | None = None,
    stage: str = "",
    infra_errors: list[dict[str, Any]] | None = None,
    run_key: str = "",
) -> list[dict[str, Any]]:
    """Run (or resume) one (arm, seed) of a stage and return its results rows (seed
    knowledge: the ground truths of ``seed_tasks`` in ``seed_suite``, default ``suite``).

    The run itself is :func:`evolve_arm`'s; this turns its step records into results rows.
    Its infrastructure errors (not attempts) are appended to ``infra_errors`` when given.
    """
    state = evolve_arm(
        spec,
        arm,
        seed,
        suite=suite,
        targets=targets,
        seed_tasks=seed_tasks,
        store_path=store_path,
        executor=executor,
        evaluator=evaluator,
        progress=progress,
        seed_suite=seed_suite,
        stage=stage,
        run_key=run_key,
    )
    if infra_errors is not None:
        where = {"arm": arm.name, "seed": seed, "stage": stage}
        infra_errors += [{**where, **e} for e in state.infra_errors]
    return attempt_rows(state.rows, arm.name, seed, stage, memory=arm.rag == "memory")


def evolve_arm(
    spec: ExperimentSpec,
    arm: ArmSpec,
    seed: int,
    *,
    suite: SuiteLike,
    targets: Sequence[Task],
    seed_tasks: Sequence[Task],
    store_path: Path | str,
    executor: Executor | None,
    evaluator: StepEvaluator,
    progress: bool = True,
    seed_suite: SuiteLike | None = None,
    stage: str = "",
    run_key: str = "",
) -> RunState:
    """Run (or resume) one (arm, seed) of a stage in the store at ``store_path`` (a SQLite
    file, or a store URL such as a shared PostgreSQL's).

    ``run_key`` (a shared store, see ``_shared``) prefixes the run id, so runs of other folders
    or experiments in the same store are never resumed as this one; it also keys the seed
    marker by knowledge kind and seed tasks.

    Opens the arm's knowledge base (none, V1, V2 or the pattern memory), seeds it once with
    the ground truths of ``seed_tasks`` (from ``seed_suite``, default ``suite``), runs an
    :class:`~costeer_lab.evolve.EvoAgent` with ``spec``'s coder and limits on ``targets``,
    and closes the store. ``executor`` runs the coders, ``evaluator`` the step evaluations;
    both stay open for the caller.

    Returns:
        The agent's final :class:`~costeer_lab.evolve.RunState`: its step records (``rows``,
        with each step's timing) and the wall time of every step this call ran.
    """
    seed_source = suite if seed_suite is None else seed_suite
    run_id = f"{arm.name}-seed{seed}" + (f"-{stage}" if stage else "")
    if run_key:
        run_id = shared_run_id(run_key, run_id)
    if spec.shuffle_tasks:
        targets = list(targets)
        random.Random(f"task-order:{seed}").shuffle(targets)
    if isinstance(store_path, str) and "://" not in store_path:
        store_path = Path(store_path)
    store = get_store(store_path)
    knowledge = None
    try:
        knowledge = _open_knowledge(spec, arm, seed, store, stage)
        if knowledge is not None and arm.seed_knowledge:
            key = seeded_meta_key(arm.rag, seed_tasks, shared=bool(run_key))
            _seed(knowledge.kb, store, seed_tasks, seed_source, key)
        strategy = EvolvingStrategy(
            spec.coder, executor=executor, max_trials=spec.max_trials or spec.max_loop
        )
        agent = EvoAgent(
            strategy=strategy,
            evaluator=evaluator,
            store=store,
            rag=None if knowledge is None else knowledge.rag,
            kb=None if knowledge is None else knowledge.kb,
            run_id=run_id,
            max_loop=spec.max_loop,
            seed=seed,
            query_kinds=() if knowledge is None else knowledge.query_kinds,
            progress=progress,
        )
        item = EvolvingItem.from_tasks(targets, [suite.ground_truth(t.id) for t in targets])
        return agent.run(item)
    finally:
        if knowledge is not None:
            knowledge.kb.close()
        store.close()


@contextmanager
def _coder_executor(spec: ExperimentSpec) -> Iterator[Executor]:
    """The executor the coders run on (from ``spec.parallelism``), shut down on exit."""
    p = spec.parallelism
    executor = make_executor(p.executor, p.workers, address=p.dask_address)
    try:
        yield executor
    finally:
        executor.shutdown(wait=True)


def run_experiment(
    spec: str | Path | Mapping[str, Any] | ExperimentSpec,
    out: str | os.PathLike[str],
    *,
    progress: bool = True,
    resume: bool = True,
) -> Path:
    """Run every (arm, seed) of ``spec`` and write results into ``out``; returns the results path.

    An ``llm`` coder whose config names no ``store`` caches its responses in
    ``<out>/llm_cache.db`` (``cache_mode: replay_only`` replays them with no network). Its
    endpoint is probed before anything is written; an endpoint failure during the run is an
    infrastructure error (``infra_errors.json``), never an attempt, and a configuration error
    (key, model) stops the run with one :class:`~costeer_lab.errors.EndpointError`.

    One run per ``out``: a second run on the same folder while this one runs ends with a
    :class:`~costeer_lab.errors.ConfigurationError` naming this one (``<out>/.lock``). The
    run's worker processes die with it, even when it is killed.

    In a script, call it under ``if __name__ == "__main__":``. The process pools start their
    workers with ``spawn``, which re-imports the script's main module in each worker; without
    the guard every worker would start the run again. An unguarded call from a script's top
    level is refused (a ConfigurationError explaining the guard) before anything starts;
    notebooks, ``python -c`` and functions called under the guard need nothing::

        from costeer_lab.experiment import run_experiment

        if __name__ == "__main__":
            run_experiment("spec.yaml", "runs/x")

    Arms whose knowledge or memory the spec puts in a shared store (``knowledge`` /
    ``memory``, :class:`~costeer_lab.experiment.SharedStore`) open that store instead of
    ``kb/<arm>-seed<s>.db``; ``shared.json`` records the run key and the stores.

    Example:
        >>> spec = {"name": "tiny", "suite": "humaneval", "suite_options": {"limit": 4},
        ...         "tasks": {"split": "test"}, "seed_knowledge": {"split": "train"},
        ...         "arms": [{"name": "no_knowledge"}], "max_loop": 1,
        ...         "parallelism": {"executor": "serial"}}
        >>> import tempfile; path = run_experiment(spec, tempfile.mkdtemp(), progress=False)
        >>> path.name
        'results.parquet'
    """
    from costeer_lab.evaluate import MultiEvaluator

    spec = load_spec(spec)
    out_dir = Path(out)
    check_out_free(out_dir)  # another run holds --out: say so before any other check
    checked = preflight(spec, out_dir, resume=resume)  # validate before writing anything
    evaluator = MultiEvaluator(checked.suite.evaluators(), max_workers=spec.parallelism.workers)
    check_main_guard(spec.parallelism.executor == "process" or evaluator.kind == "process")
    with hold_out_lock(out_dir):
        return _run_checked(spec, out_dir, checked, evaluator, progress=progress, resume=resume)


def _arm_store(
    spec: ExperimentSpec,
    out_dir: Path,
    stages: Sequence[tuple[Any, Sequence[Task]]],
    i: int,
    arm: ArmSpec,
    seed: int,
    run_key: str,
) -> Path | str:
    """The store one (arm, seed) of stage ``i`` runs in.

    A shared store (``spec.knowledge`` / ``spec.memory``): its target for this arm, the same in
    every stage (knowledge carries over). Otherwise its SQLite file under ``out_dir``, made
    first from the previous stage's (``carry_knowledge``) or ``start_from``'s file, or for a
    stage with ``start_from`` a branch of its snapshot (``_start_snapshot``).
    """
    shared = shared_for(spec, arm)
    if shared is not None:
        return shared_target(shared.store, shared.scope, run_key, arm.name, seed)
    stage = stages[i][0]
    name = stage.name if spec.stages else ""
    path = store_path(out_dir, arm.name, seed, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        if stage.start_from is not None:
            start = stage.start_from
            source: Path | str | None = start.store
            if source is None:  # the (arm, seed)'s own store before this stage
                before = stages[i - 1][0].name if i else ""
                folder = out_dir if i else Path(str(spec.start_from))
                source = store_path(folder, arm.name, seed, before)
            took = start_from_snapshot(source, start, path)
            record_start(out_dir, {"stage": name, "arm": arm.name, "seed": seed, **took})
        elif i > 0 and stage.carry_knowledge:
            before = stages[i - 1][0].name
            copy_store(store_path(out_dir, arm.name, seed, before), path)
        elif i == 0 and spec.start_from is not None:
            copy_store(store_path(Path(spec.start_from), arm.name, seed), path)
    return path


def _run_checked(
    spec: ExperimentSpec,
    out_dir: Path,
    checked: Preflight,
    evaluator: MultiEvaluator,
    *,
    progress: bool,
    resume: bool,
) -> Path:
    """The body of :func:`run_experiment` once the spec passed preflight and ``out_dir`` is
    locked: write the spec, run every (arm, seed) of every stage, save the results."""
    suite, seed_tasks = checked.suite, checked.seed_tasks
    if not resume:
        clear_previous_run(out_dir)  # checked by preflight: only an earlier run's files
    (out_dir / "kb").mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out_dir / "spec.json", json.dumps(spec.to_dict(), indent=2).encode("utf-8"))
    write_settings_record(out_dir, get_settings())  # compared on resume (_settings_record)
    run_key = ""
    if spec.knowledge is not None or spec.memory is not None:
        run_key = load_run_key(out_dir)  # the same on resume; --fresh removed the old one
        write_shared_record(out_dir, spec, run_key)
    spec = spec.model_copy(update={"coder": coder_config(spec, out_dir)})
    infra: list[dict[str, Any]] = []

    seed_suite, stages = checked.seed_suite, checked.stages
    all_targets: list[Task] = []
    rows: list[dict[str, Any]] = []
    try:
        # A `local:` model is served for the run; spec.json keeps the `local:` name.
        with serve_for_coder(spec.coder) as coder, _coder_executor(spec) as executor:
            served = spec.model_copy(update={"coder": coder})
            for i, (stage, targets) in enumerate(stages):
                all_targets += targets
                name = stage.name if spec.stages else ""
                for arm in spec.arms:
                    for seed in spec.seeds:
                        shared = shared_for(spec, arm)
                        path = _arm_store(spec, out_dir, stages, i, arm, seed, run_key)
                        failed = len(infra)
                        rows += run_arm(
                            served,
                            arm,
                            seed,
                            suite=suite,
                            targets=targets,
                            seed_tasks=seed_tasks,
                            store_path=path,
                            executor=executor,
                            evaluator=evaluator,
                            progress=progress,
                            seed_suite=seed_suite,
                            stage=name,
                            infra_errors=infra,
                            run_key=run_key if shared is not None else "",
                        )
                        if spec.stages and isinstance(path, Path) and len(infra) == failed:
                            take_stage_snapshot(path, name)  # not after an incomplete stage
    finally:
        evaluator.close()
    summary = {"count": len(infra), "errors": infra}
    atomic_write_bytes(out_dir / "infra_errors.json", json.dumps(summary, indent=2).encode())
    add_task_columns(rows, all_targets)
    df = pd.DataFrame(rows, columns=OUTPUT_COLUMNS)
    return save_results(df, out_dir)
