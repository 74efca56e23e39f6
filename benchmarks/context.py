"""Task-context benchmark: recording actions, loading a task and querying evidence in a store
that holds many task contexts.

The store is filled with ``--tasks`` coding-task contexts of ``--actions`` actions each (every
fourth action writes a small documented Python file, the others are runs and validations with
their evidence). Then it measures, on a new task in that store:

* ``add_action`` latency p50/p99 (record, extract evidence, document code, judge, persist);
* loading one task's context (``get_task``) p50, warm (the manager that wrote it: one key
  lookup confirms its copy is current) and cold (a fresh manager, as another process);
* a cross-task query, ``find_evidence(type="execution", min_confidence=0.5)``, p50.

Baseline, measured in the same run with the same manager logic: the straightforward layout that
keeps each task's whole context as one JSON record, rewritten on every action and scanned
(every context decoded in Python) by cross-task queries. ``*_ratio`` = baseline / ours (> 1:
ours is faster).

Run: ``python -m benchmarks.context [--quick] [--json PATH|-]``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from benchmarks._common import Results, finish, parse_args, percentile, time_calls
from costeer_lab.context import (
    ContextSettings,
    ContextStore,
    Evidence,
    FileReference,
    Output,
    RichMemoryManager,
    TaskContext,
)
from costeer_lab.store import SQLiteStore

WHOLE_KIND = "bench_context_whole"
#: Loop limits high enough that the benchmark's long tasks are never stopped.
SETTINGS = ContextSettings(max_actions=10_000, max_repeats=10_000, max_validations=10_000)


class WholeRecordContexts(ContextStore):
    """Baseline layout: a task's whole context in one record, rewritten on every change."""

    def save(self, ctx: TaskContext, **_: Any) -> None:
        self.store.put_record(WHOLE_KIND, ctx.task_id, ctx.to_dict())

    def exists(self, task_id: str) -> bool:
        return self.store.get_record(WHOLE_KIND, task_id) is not None

    def load(self, task_id: str) -> TaskContext | None:
        data = self.store.get_record(WHOLE_KIND, task_id)
        return TaskContext.from_dict(data) if isinstance(data, dict) else None

    def _all(self) -> Iterator[TaskContext]:
        for _, data in self.store.iter_records(WHOLE_KIND):
            yield TaskContext.from_dict(data)

    def iter_files(self, where: Mapping[str, Any]) -> Iterator[tuple[str, FileReference]]:
        for ctx in self._all():
            for f in ctx.files:
                row = {"task_id": ctx.task_id, "path": f.path, "file_type": f.file_type,
                       "language": f.metadata.language}  # fmt: skip
                if all(row.get(k) == v for k, v in where.items()):
                    yield ctx.task_id, f

    def iter_evidence(self, where: Mapping[str, Any]) -> Iterator[tuple[str, Evidence]]:
        for ctx in self._all():
            for e in ctx.evidence:
                row = {"task_id": ctx.task_id, "type": e.type, "source": e.source}
                if all(row.get(k) == v for k, v in where.items()):
                    yield ctx.task_id, e


def _code(rng: random.Random, i: int) -> str:
    window = rng.randint(2, 30)
    return (
        f'"""Rolling statistic number {i} of a price series, over {window} days."""\n\n\n'
        f"def stat_{i}(prices: list[float], window: int = {window}) -> list[float]:\n"
        f'    """Mean of the last ``window`` prices at each day (fewer at the start)."""\n'
        "    out = []\n"
        "    for k in range(len(prices)):\n"
        "        chunk = prices[max(0, k - window + 1) : k + 1]\n"
        "        out.append(sum(chunk) / len(chunk) if chunk else 0.0)\n"
        "    return out\n"
    )


def _step(rng: random.Random, task: int, i: int) -> tuple[str, dict[str, Any], Output]:
    if i % 4 == 0:
        path = f"stat_{task}_{i}.py"
        return "write_file", {"path": path}, Output(True, "wrote", files={path: _code(rng, i)})
    if i % 4 == 3:
        return (
            "validate",
            {"round": i},
            Output(False, "not complete", metadata={"confidence": 0.4}),
        )
    ok = rng.random() < 0.7
    return "run_python", {"path": f"stat_{task}_{i - i % 4}.py", "i": i}, Output(
        ok, "exit code 0 after 0.05 s" if ok else "exit code 1 after 0.02 s",
        metadata={"returncode": 0 if ok else 1},
    )  # fmt: skip


def _fill(mm: RichMemoryManager, n_tasks: int, n_actions: int, seed: int) -> None:
    rng = random.Random(seed)
    for t in range(n_tasks):
        tid = f"task-{t:05d}"
        mm.create_task(f"Implement rolling statistic {t} in Python", task_id=tid)
        for i in range(n_actions):
            mm.add_action(tid, *_step(rng, t, i))


def _measure(
    mm: RichMemoryManager, fresh: Callable[[], RichMemoryManager], n_actions: int, seed: int
) -> dict[str, list[float]]:
    rng = random.Random(seed + 1)
    mm.create_task("Implement the measured rolling statistic in Python", task_id="measured")
    adds = []
    for i in range(n_actions):
        step = _step(rng, 99_999, i)
        start = time.perf_counter()
        mm.add_action("measured", *step)
        adds.append(time.perf_counter() - start)
    loads = time_calls(lambda: mm.get_task("measured"), repeat=30)
    cold = time_calls(lambda: fresh().get_task("measured"), repeat=30)
    queries = time_calls(
        lambda: mm.find_evidence(type="execution", min_confidence=0.5), repeat=5, warmup=1
    )
    return {"add": adds, "load": loads, "cold": cold, "query": queries}


def _run(layout: str, directory: Path, args: argparse.Namespace) -> dict[str, list[float]]:
    with SQLiteStore(directory / f"{layout}.db") as store:

        def fresh() -> RichMemoryManager:
            mm = RichMemoryManager(store, settings=SETTINGS)
            if layout == "whole_record":  # same manager logic, the baseline's storage layout
                mm._contexts = WholeRecordContexts(store)
            return mm

        mm = fresh()
        _fill(mm, args.tasks, args.actions, args.seed)
        return _measure(mm, fresh, args.actions, args.seed)


def main(argv: list[str] | None = None) -> int:
    def extra(p: argparse.ArgumentParser) -> None:
        p.add_argument("--tasks", type=int, default=None, help="tasks in the store")
        p.add_argument("--actions", type=int, default=40, help="actions per task")

    args = parse_args("context", "Task-context store: record, load, query.", argv, extra)
    if args.tasks is None:
        args.tasks = 100 if args.quick else 1000
    results = Results("context")
    case = f"tasks={args.tasks},actions={args.actions}"
    with tempfile.TemporaryDirectory() as tmp:
        ours = _run("records", Path(tmp), args)
        base = _run("whole_record", Path(tmp), args)
    labels = (("add", "add_action"), ("load", "load_task_warm"), ("cold", "load_task_cold"),
              ("query", "query"))  # fmt: skip
    for what, label in labels:
        o50, b50 = percentile(ours[what], 50), percentile(base[what], 50)
        results.add(case, f"{label}_p50", o50 * 1e3, "ms")
        if what == "add":
            results.add(case, f"{label}_p99", percentile(ours[what], 99) * 1e3, "ms")
        results.add(case, f"baseline_{label}_p50", b50 * 1e3, "ms")
        results.add_ratio(case, f"{label}_ratio", b50, o50)
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
