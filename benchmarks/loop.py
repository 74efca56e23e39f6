"""The evolution loop's own overhead per task-iteration against the whole iteration time.

One EvoAgent run on Alpha158 tasks (ReuseCoder, sandboxed FactorEvaluator, SQLite store,
hashing embedder). Every step is timed as a whole (wall) and in its parts; the coder and the
evaluator are the work, everything else is the framework: the RAG query, knowledge generation,
the step record's transaction and bookkeeping. Per task-iteration::

    overhead = (step wall - implement wall - evaluate wall) / tasks in the step

and ``overhead_share_ratio = overhead / (step wall / tasks)``: the share of an iteration the
framework costs (the baseline is the whole iteration measured in the same run).

Run: ``python -m benchmarks.loop [--quick] [--json PATH|-]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks._common import Results, finish, parse_args
from costeer_lab._records import Knowledge, SingleFeedback
from costeer_lab.evaluate import MultiEvaluator
from costeer_lab.evolve import EvoAgent, EvolvingItem, EvolvingStrategy, make_executor
from costeer_lab.knowledge import make_rag_strategy, open_kb
from costeer_lab.store import SQLiteStore
from costeer_lab.suites import load_suite


def _extra(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", type=int, default=None, help="number of target tasks")
    p.add_argument("--steps", type=int, default=None, help="evolution steps")


def _run(arm: str, n_tasks: int, steps: int, work: Path, results: Results) -> None:
    suite = load_suite("alpha158", n_instruments=20, n_days=200, cache_dir=str(work / "cache"))
    targets = [suite.task(i) for i in suite.split("test")[:n_tasks]]
    store = SQLiteStore(work / f"{arm}.db")
    kb = rag = None
    kinds: tuple[str, ...] = ()
    if arm != "none":
        kb = open_kb(store=store, version=arm, embedder="hashing")
        seeds = [suite.task(i) for i in suite.split("train")]
        kb.add_seed_knowledge(
            [
                Knowledge(t, suite.ground_truth(t.id), SingleFeedback("gt", final_decision=True))
                for t in seeds
            ]
        )
        rag = make_rag_strategy(arm, seed=0)
        kinds = tuple(rag.query_kinds)
    executor = make_executor("thread", 2)
    evaluator = MultiEvaluator(suite.evaluators(critic=False), kind="thread", max_workers=2)
    try:
        agent = EvoAgent(
            strategy=EvolvingStrategy({"name": "reuse"}, executor=executor, max_trials=steps),
            evaluator=evaluator,
            store=store,
            rag=rag,
            kb=kb,
            run_id=arm,
            max_loop=steps,
            query_kinds=kinds,
            progress=False,
        )
        item = EvolvingItem.from_tasks(targets, [suite.ground_truth(t.id) for t in targets])
        t0 = time.perf_counter()
        state = agent.run(item)
        total = time.perf_counter() - t0
    finally:
        evaluator.close()
        executor.shutdown()
        store.close()
    recs = sorted((r for r in state.rows), key=lambda r: (r["step"], r["task_id"]))
    by_step: dict[int, dict[str, float]] = {}
    n_by_step: dict[int, int] = {}
    for r in recs:
        by_step[r["step"]] = r["step_timing"]
        n_by_step[r["step"]] = n_by_step.get(r["step"], 0) + 1
    iterations = sum(n_by_step.values())
    wall = sum(state.step_walls)
    work_s = sum(t["implement_s"] + t["evaluate_s"] for t in by_step.values())
    query_s = sum(t["query_s"] for t in by_step.values())
    gen_s = sum(t["generate_s"] for t in by_step.values())
    case = f"rag={arm} tasks={n_tasks} steps={len(by_step)}"
    per_iter = wall / iterations
    overhead = (wall - work_s) / iterations
    results.add(case, "task_iterations", iterations, "count")
    results.add(case, "iteration_wall_per_task", per_iter * 1e3, "ms")
    results.add(case, "framework_overhead_per_task", overhead * 1e3, "ms")
    results.add(case, "query_per_task", query_s / iterations * 1e3, "ms")
    results.add(case, "generate_knowledge_per_task", gen_s / iterations * 1e3, "ms")
    results.add(case, "run_total", total, "s")
    results.add_ratio(case, "overhead_share_ratio", overhead, per_iter)


def main(argv: list[str] | None = None) -> int:
    args = parse_args("loop", __doc__.splitlines()[0], argv, extra=_extra)
    n_tasks = args.tasks or (15 if args.quick else 100)
    steps = args.steps or (2 if args.quick else 3)
    results = Results("loop")
    with tempfile.TemporaryDirectory(prefix="costeer-bench-loop-") as tmp:
        for arm in ("none", "v1", "v2"):
            _run(arm, n_tasks, steps, Path(tmp), results)
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
