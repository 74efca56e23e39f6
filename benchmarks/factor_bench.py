"""The RD-Agent benchmark path of the factor evaluator: HDF5 outputs and the comparison.

Cases (the example benchmark file ``data/rdagent_factor_example.json`` on tick prices):

* ``hdf5 output``: a sandboxed evaluation of a task whose candidate writes ``result.h5`` (run,
  then decode the HDF5 file in the sandbox, then check) against the same factor written as
  ``result.parquet`` (baseline: run, check). ``parquet_over_hdf5_ratio`` is the share of the
  Parquet path's speed the HDF5 path keeps (< 1: HDF5 costs a second sandbox run).
* ``comparison``: :func:`compare_to_truth` on a rejected mutant (NaN pattern, shift test, the
  mismatch classification and rows) against an accepted candidate (baseline: no
  classification). ``accepted_over_rejected_ratio`` is what the diagnosis of a mistake costs.

Run: ``python -m benchmarks.factor_bench [--quick] [--json PATH|-]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchmarks._common import Results, finish, parse_args, percentile, time_calls
from costeer_lab import Workspace
from costeer_lab.evaluate import EvaluatorSettings, FactorEvaluator
from costeer_lab.evaluate._factor_compare import compare_to_truth
from costeer_lab.suites import load_suite

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


def _options(parser: argparse.ArgumentParser) -> None:
    # hidden knob for tests: a tiny panel runs in seconds
    parser.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)


def main(argv: list[str] | None = None) -> int:
    args = parse_args("factor_bench", __doc__.splitlines()[0], argv, extra=_options)
    results = Results("factor_bench")
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
