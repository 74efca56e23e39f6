"""How well error fingerprints group real failures by root cause, against two baselines.

The labelled set: every HumanEval reference solution (and a sample of Alpha158 factor scripts)
mutated by each operator of :mod:`benchmarks._mutants` (one planted cause per mutant), each
mutant run through the suite's own evaluator (the sandbox). Mutants that still pass are left
out (counted as ``equivalent``). For every failing mutant three keys are read from its
feedback:

* ``fingerprint``: the first of ``feedback.error_fingerprints`` (the error finally raised) —
  what the knowledge base groups errors by;
* ``exception_type`` (baseline): the exception type of that error alone;
* ``last_line`` (baseline): the last line of the traceback the run printed (the raw exception
  line), else the last line of the evaluator's report.

Pairwise F1 of "same key" against "same cause" over all pairs of failing mutants scores each
key; ``f1_ratio`` = fingerprint F1 / the better baseline's F1. The fingerprint rules were
written on the **design** functions (HumanEval numbers divisible by 4, even Alpha158 tasks);
the **held-out** functions are the rest, reported separately (and by suite).

Run: ``python -m benchmarks.fingerprints [--quick] [--json PATH|-] [--dump PATH]`` (``--dump``
writes the labelled set, one JSON object per mutant).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks._common import Results, finish, parse_args
from benchmarks._mutants import CAUSES, Mutant, mutants
from costeer_lab import SingleFeedback, Workspace

KEYS = ("fingerprint", "exception_type", "last_line")
SUITES = ("humaneval", "alpha158")


@dataclass(frozen=True)
class Row:
    """One failing mutant of the labelled set."""

    suite: str
    function: str
    split: str
    cause: str
    fingerprint: str
    exception_type: str
    last_line: str


def pairwise_f1(causes: Sequence[str], keys: Sequence[str]) -> tuple[float, float, float]:
    """(precision, recall, F1) of "same key" predicting "same cause" over all pairs.

    Example:
        >>> pairwise_f1(["a", "a", "b"], ["x", "x", "x"])
        (0.3333333333333333, 1.0, 0.5)
    """
    if len(causes) != len(keys):
        raise ValueError(f"{len(causes)} causes but {len(keys)} keys")

    def pairs(counts: Iterable[int]) -> int:
        return sum(n * (n - 1) // 2 for n in counts)

    both = pairs(Counter(zip(causes, keys, strict=True)).values())
    same_key = pairs(Counter(keys).values())
    same_cause = pairs(Counter(causes).values())
    precision = both / same_key if same_key else 1.0
    recall = both / same_cause if same_cause else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _stderr(execution: str) -> str:
    marker = "--- stderr ---"
    return execution.split(marker, 1)[1] if marker in execution else ""


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def keys_of(fb: SingleFeedback) -> tuple[str, str, str]:
    """(fingerprint, exception type, last traceback line) of a failed feedback.

    Example:
        >>> fb = SingleFeedback(execution="Execution failed: exit code 1.\\n--- stderr ---\\n"
        ...     "Traceback (most recent call last):\\n  File \\"main.py\\", line 1\\n"
        ...     "KeyError: 'Close'", final_decision=False, error_fingerprints=("KeyError: <str>",))
        >>> keys_of(fb)
        ('KeyError: <str>', 'KeyError', "KeyError: 'Close'")
    """
    fp = fb.error_fingerprints[0] if fb.error_fingerprints else ""
    head = fp.split(":", 1)[0] if ":" in fp else fp
    exc_type = head if " " not in head else ""
    stderr = _stderr(fb.execution)
    last = _last_line(stderr) if "Traceback" in stderr else _last_line(fb.return_checking or "")
    return fp, exc_type, last


def _split(suite: str, function: str) -> str:
    if suite == "humaneval":
        return "design" if int(function.rsplit("/", 1)[1]) % 4 == 0 else "held-out"
    return "design" if function.endswith(":even") else "held-out"


def _humaneval(quick: bool, limit: int | None) -> tuple[Any, list[tuple[str, str]]]:
    from costeer_lab.suites import load_suite

    suite = load_suite("humaneval")
    tasks = (suite.tasks[::5] if quick else suite.tasks)[:limit]
    return suite, [(t.id, suite.ground_truth(t.id).files["main.py"]) for t in tasks]


def _evaluate(
    suite: Any, name: str, items: Sequence[Mutant], ids: dict[str, str]
) -> tuple[list[Row], int]:
    """Run every mutant through the suite's evaluator; (failing rows, passing count)."""
    ev = suite.evaluator()
    rows: list[Row] = []
    passed = 0
    try:
        for m in items:
            task_id = ids[m.function]
            fb = ev.evaluate(
                suite.task(task_id), Workspace({"main.py": m.code}), suite.ground_truth(task_id)
            )
            if fb.final_decision:
                passed += 1
                continue
            if fb.details.get("infrastructure_error"):
                raise RuntimeError(f"{task_id}: {fb.details['infrastructure_error']}")
            rows.append(Row(name, task_id, _split(name, m.function), m.cause, *keys_of(fb)))
    finally:
        close = getattr(ev, "close", None)
        if callable(close):
            close()
    return rows, passed


def build(
    quick: bool, seed: int, cache_dir: str, limit: int | None = None
) -> tuple[list[Row], dict[str, int]]:
    """The labelled set: (failing mutants, counts of generated / equivalent mutants);
    ``limit``: at most this many functions per suite."""
    from costeer_lab.suites import load_suite

    counts: Counter[str] = Counter()
    he_suite, he_functions = _humaneval(quick, limit)
    he_mutants = list(mutants(he_functions, "humaneval", seed))
    rows, passed = _evaluate(he_suite, "humaneval", he_mutants, {f: f for f, _ in he_functions})
    counts.update({"generated": len(he_mutants), "equivalent": passed})
    alpha = load_suite("alpha158", n_instruments=6, n_days=40, seed=seed, cache_dir=cache_dir)
    step = 32 if quick else 4
    picked = alpha.tasks[::step][:limit]
    ids: dict[str, str] = {}
    functions = []
    for i, t in enumerate(picked):
        key = f"{t.id}:{'even' if i % 2 == 0 else 'odd'}"
        ids[key] = t.id
        functions.append((key, alpha.ground_truth(t.id).files["main.py"]))
    a_mutants = list(mutants(functions, "alpha158", seed))
    a_rows, a_passed = _evaluate(alpha, "alpha158", a_mutants, ids)
    counts.update({"generated": len(a_mutants), "equivalent": a_passed})
    return rows + a_rows, dict(counts)


def report(results: Results, rows: Sequence[Row], case: str) -> None:
    """Add the F1 rows of one subset of the labelled set."""
    causes = [r.cause for r in rows]
    results.add(case, "mutants", len(rows), "count")
    results.add(case, "causes", len(set(causes)), "count")
    results.add(case, "functions", len({r.function for r in rows}), "count")
    f1: dict[str, float] = {}
    for key in KEYS:
        p, r, f1[key] = pairwise_f1(causes, [getattr(row, key) for row in rows])
        results.add(case, f"{key}_f1", f1[key], "")
        if key == "fingerprint":
            results.add(case, "fingerprint_precision", p, "")
            results.add(case, "fingerprint_recall", r, "")
        results.add(case, f"{key}_distinct", len({getattr(row, key) for row in rows}), "count")
    results.add_ratio(
        case, "f1_ratio", f1["fingerprint"], max(f1["exception_type"], f1["last_line"])
    )


def _extra(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dump", metavar="PATH", help="write the labelled set as JSON lines")
    parser.add_argument(
        "--functions", type=int, default=None, help="at most this many functions per suite"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(
        "fingerprints", "Pairwise F1 of error fingerprints vs planted causes.", argv, _extra
    )
    with tempfile.TemporaryDirectory(prefix="bench-fingerprints-") as cache:
        rows, counts = build(args.quick, args.seed, cache, args.functions)
    results = Results("fingerprints")
    results.add("all", "generated", counts["generated"], "count")
    results.add("all", "equivalent", counts["equivalent"], "count")
    held_out = [r for r in rows if r.split == "held-out"]
    for case, subset in (
        ("held-out", held_out),
        ("design", [r for r in rows if r.split == "design"]),
        ("all", rows),
        *((f"held-out {s}", [r for r in held_out if r.suite == s]) for s in SUITES),
    ):
        report(results, subset, case)
    if args.dump:
        Path(args.dump).write_text("".join(json.dumps(asdict(r)) + "\n" for r in rows))
    return finish(results, args)


__all__ = ["CAUSES", "Row", "build", "keys_of", "main", "pairwise_f1", "report"]

if __name__ == "__main__":
    raise SystemExit(main())
