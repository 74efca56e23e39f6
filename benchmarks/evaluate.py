"""Evaluations per second through the sandbox against a plain subprocess per evaluation.

Three cases, each run through every path in the same process, alternating call by call so
that all paths see the same machine load:

* ``print``: a one-line script — the pure per-run overhead.
* ``pandas-script``: reads a Parquet panel, group-by rolling mean, writes a Parquet result.
* ``alpha158``: :class:`FactorEvaluator` evaluations of Alpha158 ground-truth implementations
  (candidate execution + result checks against the cached truth). All paths run the same
  evaluator; only the runner differs.

The paths: ``sandbox`` (the default :class:`Sandbox`), ``cold`` (a sandbox whose waiting
children skip their idle-time warm-up, ``SandboxSettings(warm_spares=False)``), ``subprocess``
(the baseline) and ``inprocess`` (:class:`InProcessRunner`: trusted code run inside this
process, no isolation and no process at all — the floor: ``ceiling_ratio`` is the speed-up a
sandbox with zero overhead would reach, ``sandbox_overhead_mean`` what the isolation costs).

Interleaving hands the sandbox's waiting child the idle time of the other paths' calls, which
its warm-up uses; ``alpha158 back-to-back`` therefore repeats the alpha158 case with each path
running all its evaluations in a row (twice, in turn), as a user evaluating many tasks would.

The baseline writes the workspace and copies the inputs into a temporary directory and calls
``subprocess.run([sys.executable, main.py])`` there, then reads the output files back.

Run: ``python -m benchmarks.evaluate [--quick] [--json PATH|-]``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence

from benchmarks._common import Results, finish, parse_args, percentile
from costeer_lab import Workspace
from costeer_lab.evaluate import (
    FactorEvaluator,
    InProcessRunner,
    Limits,
    Runner,
    Sandbox,
    SandboxSettings,
)
from costeer_lab.evaluate._protocol import InProcessOutcome

PANDAS_SCRIPT = """\
import pandas as pd

panel = pd.read_parquet("daily_pv.parquet")
close = panel["close"]
ma = close.groupby(level="instrument").transform(lambda s: s.rolling(10, min_periods=1).mean())
(ma / close).to_frame("MA10").to_parquet("result.parquet")
print(len(panel))
"""


class PlainSubprocessRunner:
    """The baseline: a fresh ``python main.py`` per run, no isolation and no pre-import.

    Its result is the library's :class:`~costeer_lab.evaluate._protocol.InProcessOutcome`, the
    plain result with the attributes evaluators read (``ok`` as every runner defines it).
    """

    def __init__(self, timeout_s: float = 120.0) -> None:
        self.timeout_s = timeout_s

    def run(
        self,
        workspace: Workspace,
        *,
        inputs: Mapping[str, str | os.PathLike[str]] | None = None,
        collect: Sequence[str] = (),
    ) -> InProcessOutcome:
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="bench-plain-") as tmp:
            root = workspace.write_to(tmp)
            for name, src in (inputs or {}).items():
                shutil.copyfile(src, root / name)
            try:
                proc = subprocess.run(
                    [sys.executable, workspace.main_file],
                    cwd=root,
                    capture_output=True,
                    text=True,
                    timeout=self.timeout_s,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                return InProcessOutcome(None, "", "", time.perf_counter() - start, timed_out=True)
            outputs = {n: (root / n).read_bytes() for n in collect if (root / n).is_file()}
            return InProcessOutcome(
                proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start, outputs
            )


def _time_interleaved(paths: Sequence[Sequence[Callable[[], bool]]]) -> list[list[float]]:
    """Alternate the paths call by call (a, b, c, a, b, c, …) so that all see the same machine
    load; return the seconds of each call per path. Raises when a call fails."""
    times: list[list[float]] = [[] for _ in paths]
    for calls in zip(*paths, strict=True):
        for side, call in enumerate(calls):
            times[side].append(_timed(call, side))
    return times


def _time_blocks(paths: Sequence[Sequence[Callable[[], bool]]]) -> list[list[float]]:
    """Run each path's calls back to back (all of a, all of b, …), twice in turn, as a user
    evaluating many tasks in a row would: a sandbox child gets no idle time between calls
    here, while interleaving gives its warm-up the other paths' time."""
    times: list[list[float]] = [[] for _ in paths]
    for _ in range(2):
        for side, calls in enumerate(paths):
            times[side].extend(_timed(call, side) for call in calls)
    return times


def _timed(call: Callable[[], bool], side: int) -> float:
    start = time.perf_counter()
    if not call():
        raise RuntimeError(f"path {side} failed a run; the comparison would be unfair")
    return time.perf_counter() - start


Timer = Callable[[Sequence[Sequence[Callable[[], bool]]]], list[list[float]]]


def _ok_run(runner: Runner, workspace: Workspace) -> Callable[[], bool]:
    return lambda: runner.run(workspace).ok


def _compare(
    results: Results,
    case: str,
    paths: Mapping[str, Sequence[Callable[[], bool]]],
    timer: Timer = _time_interleaved,
) -> None:
    """Time the paths ``sandbox``, ``subprocess``, ``inprocess`` and optionally ``cold`` (a
    sandbox whose waiting children do not warm up). The in-process path (trusted code, no
    isolation, no process) is the floor: ``ceiling_ratio`` is the speed-up a zero-overhead
    sandbox would reach."""
    for calls in paths.values():
        calls[0]()  # warm-up (worker start, page cache, lazy imports of the checks)
    times = dict(zip(paths, timer(list(paths.values())), strict=True))
    rate = {name: len(t) / sum(t) for name, t in times.items()}
    for name, t in times.items():
        results.add(case, f"{name}_p50", percentile(t, 50) * 1e3, "ms")
    for name in times:
        if name != "inprocess":
            results.add(case, f"{name}_rate", rate[name], "evals/s")
    mean = {name: sum(t) / len(t) for name, t in times.items()}
    results.add(case, "sandbox_overhead_mean", (mean["sandbox"] - mean["inprocess"]) * 1e3, "ms")
    results.add_ratio(case, "speedup_ratio", rate["sandbox"], rate["subprocess"])
    if "cold" in rate:
        results.add_ratio(case, "cold_speedup_ratio", rate["cold"], rate["subprocess"])
    results.add_ratio(case, "ceiling_ratio", rate["inprocess"], rate["subprocess"])


def main(argv: list[str] | None = None) -> int:
    args = parse_args("evaluate", "Sandbox vs subprocess-per-evaluation throughput.", argv)
    from costeer_lab.suites import load_suite

    n_runs, n_tasks = (8, 8) if args.quick else (30, 30)
    n_inst, n_days = (30, 250) if args.quick else (50, 500)
    results = Results("evaluate")
    with tempfile.TemporaryDirectory(prefix="bench-evaluate-") as cache:
        suite = load_suite(
            "alpha158", n_instruments=n_inst, n_days=n_days, seed=args.seed, cache_dir=cache
        )
        inputs = dict(suite.inputs)
        plain = PlainSubprocessRunner()
        trusted = InProcessRunner()
        limits = Limits(wall_time_s=120, cpu_time_s=120)
        cold_settings = SandboxSettings(warm_spares=False)
        with Sandbox(limits) as sandbox, Sandbox(limits, settings=cold_settings) as cold:
            runners: dict[str, Runner] = {
                "sandbox": sandbox, "subprocess": plain, "inprocess": trusted, "cold": cold
            }  # fmt: skip
            trivial = Workspace({"main.py": "print(1)"})
            _compare(
                results,
                "print",
                {name: [_ok_run(r, trivial)] * n_runs for name, r in runners.items()},
            )
            script = Workspace({"main.py": PANDAS_SCRIPT})
            collect = ["result.parquet"]

            def script_run(runner: Runner) -> Callable[[], bool]:
                return lambda: runner.run(script, inputs=inputs, collect=collect).ok

            _compare(
                results,
                f"pandas-script {n_inst}x{n_days}",
                {name: [script_run(r)] * n_runs for name, r in runners.items()},
            )
            tasks = suite.tasks[:: max(1, len(suite.tasks) // n_tasks)][:n_tasks]
            gts = {t.id: suite.ground_truth(t.id) for t in tasks}
            evaluators = {
                name: FactorEvaluator(inputs, runner=r, gt_runner="inprocess")
                for name, r in runners.items()
            }
            for t in tasks:  # the truth is cached per process: compute it before timing
                evaluators["sandbox"].ground_truth_result(gts[t.id])

            def evaluation(ev: FactorEvaluator, task_id: str) -> Callable[[], bool]:
                task = suite.task(task_id)
                return lambda: ev.evaluate(task, gts[task_id], gts[task_id]).succeeded

            paths = {
                name: [evaluation(ev, t.id) for t in tasks] for name, ev in evaluators.items()
            }
            _compare(results, f"alpha158 {len(tasks)} tasks {n_inst}x{n_days}", paths)
            _compare(
                results,
                f"alpha158 back-to-back {len(tasks)} tasks {n_inst}x{n_days}",
                paths,
                timer=_time_blocks,
            )
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
