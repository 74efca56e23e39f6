"""The RD-Agent benchmark path of the factor evaluator: HDF5 outputs and the comparison.

Cases (the example benchmark file ``data/rdagent_factor_example.json`` on tick prices):

* ``hdf5 output``: a sandboxed evaluation of a task whose candidate writes ``result.h5`` (run,
  then decode the HDF5 file in the sandbox, then check) against the same factor written as
  ``result.parquet`` (baseline: run, check). ``parquet_over_hdf5_ratio`` is the share of the
  Parquet path's speed the HDF5 path keeps (< 1: HDF5 costs a second sandbox run).
* ``comparison``: :func:`compare_to_truth` on a rejected mutant (NaN pattern, shift test, the
  mismatch classification and rows) against an accepted candidate (baseline: no
  classification). ``accepted_over_rejected_ratio`` is what the diagnosis of a mistake costs.

With ``--rdagent-file PATH`` (a benchmark file in RD-Agent's format, e.g.
``data/rdagent_factor_bench27.json``), instead: the file is loaded on synthetic data
(``daily_pv.h5``, and ``daily_f.h5``/``high_freq.h5`` when its references read them), every
reference is evaluated against itself (``<category> references``: ``accepted`` of ``total``,
``accepted_ratio``), then each planted mistake of :mod:`benchmarks._rdagent_mistakes` (fill,
shift, window, sign, cross_instrument) per reference (``<category> <mistake>``: ``rejected`` of
``applicable``, ``rejected_ratio``; a mistake that leaves the output unchanged or cannot run is
not applicable, ``crashed`` counts the latter: it fails or writes no usable factor). Category
``all`` sums every category. Sizes:
30 instruments x 250 days and 10 days of 240 minute bars (``--quick``: 20 x 120, 5 x 240;
``--tiny``: 6 x 80, 3 x 60).

Run: ``python -m benchmarks.factor_bench [--quick] [--rdagent-file PATH] [--json PATH|-]``.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import Results, finish, parse_args, percentile, time_calls
from benchmarks._rdagent_mistakes import MISTAKES, plant
from costeer_lab import Workspace
from costeer_lab.errors import ConfigurationError, GroundTruthError
from costeer_lab.evaluate import EvaluatorSettings, FactorEvaluator
from costeer_lab.evaluate._factor_compare import compare_to_truth
from costeer_lab.suites import Suite, load_suite

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "rdagent_factor_example.json"
_H5 = 'result.to_hdf("result.h5", key="data")'


def _bench_hdf5(results: Results, suite_dir: str, n: int, days: int, repeat: int) -> None:
    suite = load_suite(
        EXAMPLE, data="synthetic_tick", n_instruments=n, n_days=days, cache_dir=suite_dir
    )
    task = suite.task("ROC10")
    gt = suite.ground_truth(task.id)
    parquet_task = type(task).from_dict(
        {**task.to_dict(), "extra": {**task.extra, "output_file": "result.parquet"}}
    )
    parquet_code = Workspace(
        {"main.py": gt.code.replace(_H5, 'result.to_parquet("result.parquet")')}
    )
    ev = suite.evaluator()
    assert isinstance(ev, FactorEvaluator)
    try:
        ev.ground_truth_result(gt, "result.h5")
        ev.ground_truth_result(Workspace(parquet_code.files), "result.parquet")
        h5 = time_calls(lambda: ev.evaluate(task, gt, gt), repeat)
        pq = time_calls(lambda: ev.evaluate(parquet_task, parquet_code, parquet_code), repeat)
        assert ev.evaluate(task, gt, gt).final_decision
    finally:
        ev.close()
    case = f"hdf5 output {n}x{days}"
    results.add(case, "hdf5_p50", percentile(h5, 50) * 1e3, "ms")
    results.add(case, "parquet_p50", percentile(pq, 50) * 1e3, "ms")
    results.add_ratio(case, "parquet_over_hdf5_ratio", percentile(pq, 50), percentile(h5, 50))


def _bench_compare(results: Results, suite_dir: str, n: int, days: int, repeat: int) -> None:
    suite = load_suite(
        EXAMPLE, data="synthetic_tick", n_instruments=n, n_days=days, cache_dir=suite_dir
    )
    ev = suite.evaluator(runner="inprocess")
    assert isinstance(ev, FactorEvaluator)
    truth = ev.ground_truth_result(suite.ground_truth("RET_STD20"), "result.h5")
    s = EvaluatorSettings()
    good = truth.copy()
    bad = truth.groupby(level="instrument").shift(2)  # a lag: the whole diagnosis runs
    ok = time_calls(lambda: compare_to_truth(good, truth, s), repeat)
    ko = time_calls(lambda: compare_to_truth(bad, truth, s), repeat)
    assert compare_to_truth(bad, truth, s).mismatch == "lag"
    case = f"comparison {len(truth)} rows"
    results.add(case, "accepted_p50", percentile(ok, 50) * 1e3, "ms")
    results.add(case, "rejected_p50", percentile(ko, 50) * 1e3, "ms")
    results.add_ratio(case, "accepted_over_rejected_ratio", percentile(ok, 50), percentile(ko, 50))


def _same(a: pd.Series, b: pd.Series) -> bool:
    a, b = a.sort_index(), b.sort_index()
    return a.index.equals(b.index) and np.array_equal(
        a.to_numpy(dtype="float64"), b.to_numpy(dtype="float64"), equal_nan=True
    )


def _mistake_verdict(ev: FactorEvaluator, suite: Suite, task_id: str, code: str) -> str:
    """``"rejected"``, ``"accepted"``, ``"no-op"`` (output unchanged) or ``"crashed"``."""
    task = suite.task(task_id)
    gt = suite.ground_truth(task_id)
    out = ev.output_of(task)
    quiet = logging.getLogger("costeer_lab.evaluate._factor")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # a planted mistake that crashes is counted, not logged
    try:
        planted = ev.ground_truth_result(Workspace({"main.py": code}), out)
    except GroundTruthError:
        return "crashed"
    finally:
        quiet.setLevel(level)
    if _same(planted, ev.ground_truth_result(gt, out)):
        return "no-op"
    fb = ev.evaluate(task, Workspace({"main.py": code}), gt)
    if "infrastructure_error" in fb.details:
        return "crashed"
    return "accepted" if fb.final_decision else "rejected"


def bench_rdagent_file(
    results: Results, path: Path, cache: str, sizes: tuple[int, int, int, int], seed: int
) -> None:
    """The ``--rdagent-file`` mode (see the module docstring)."""
    n, days, hf_days, hf_minutes = sizes
    suite = load_suite(
        path, n_instruments=n, n_days=days, hf_days=hf_days, hf_minutes=hf_minutes,
        seed=seed, cache_dir=cache,
    )  # fmt: skip
    ev = suite.evaluator(runner="inprocess")
    assert isinstance(ev, FactorEvaluator)
    count: Counter[tuple[str, str, str]] = Counter()
    try:
        for task in suite.tasks:
            cats = (task.category or "uncategorized", "all")
            gt = suite.ground_truth(task.id)
            ok = bool(ev.evaluate(task, gt, gt).final_decision)
            for c in cats:
                count[c, "references", "total"] += 1
                count[c, "references", "accepted"] += int(ok)
            if not ok:
                print(f"reference {task.id} does not accept itself", file=sys.stderr)
                continue
            for mistake in MISTAKES:
                code = plant(mistake, gt.code, ev.output_of(task))
                verdict = "no-op" if code is None else _mistake_verdict(ev, suite, task.id, code)
                for c in cats:
                    count[c, mistake, verdict] += 1
                if verdict == "accepted":
                    print(f"planted {mistake} in {task.id} was accepted", file=sys.stderr)
    finally:
        ev.close()
    categories = list(dict.fromkeys(c for c, _, _ in count))
    for c in categories:
        case = f"{c} references"
        total, accepted = count[c, "references", "total"], count[c, "references", "accepted"]
        results.add(case, "accepted", accepted, "tasks")
        results.add(case, "total", total, "tasks")
        results.add_ratio(case, "accepted_ratio", accepted, total)
        for mistake in MISTAKES:
            case = f"{c} {mistake}"
            rejected = count[c, mistake, "rejected"]
            applicable = rejected + count[c, mistake, "accepted"]
            results.add(case, "rejected", rejected, "mistakes")
            results.add(case, "applicable", applicable, "mistakes")
            results.add(case, "crashed", count[c, mistake, "crashed"], "mistakes")
            if applicable:
                results.add_ratio(case, "rejected_ratio", rejected, applicable)
            else:
                results.skip(case, "no reference where this mistake changes the output")


def _options(parser: argparse.ArgumentParser) -> None:
    # hidden knob for tests: a tiny panel runs in seconds
    parser.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--rdagent-file",
        metavar="PATH",
        type=Path,
        default=None,
        help="check every reference of an RD-Agent benchmark file and planted mistakes",
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args("factor_bench", __doc__.splitlines()[0], argv, extra=_options)
    results = Results("factor_bench")
    if args.rdagent_file is not None:
        sizes = (30, 250, 10, 240)
        if args.tiny or args.quick:
            sizes = (6, 80, 3, 60) if args.tiny else (20, 120, 5, 240)
        with tempfile.TemporaryDirectory(prefix="costeer_fbench_") as tmp:
            try:
                bench_rdagent_file(results, args.rdagent_file, tmp, sizes, args.seed)
            except ConfigurationError as exc:  # e.g. PyTables missing: one line
                print(f"factor_bench: error: {exc}", file=sys.stderr)
                return 2
        return finish(results, args)
    with tempfile.TemporaryDirectory(prefix="costeer_fbench_") as tmp:
        if args.tiny:
            _bench_hdf5(results, tmp, 5, 40, repeat=2)
            _bench_compare(results, tmp, 5, 40, repeat=3)
        elif args.quick:
            _bench_hdf5(results, tmp, 20, 120, repeat=8)
            _bench_compare(results, tmp, 50, 250, repeat=10)
        else:
            _bench_hdf5(results, tmp, 50, 500, repeat=20)
            _bench_compare(results, tmp, 50, 500, repeat=20)
            _bench_compare(results, tmp, 300, 1000, repeat=10)
    return finish(results, args)


if __name__ == "__main__":
    raise SystemExit(main())
