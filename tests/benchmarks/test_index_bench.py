"""Smoke test of the index benchmark (tiny sizes) and of the shared benchmark helpers."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import pytest

from ._harness import ROOT, run_benchmark

if str(ROOT) not in sys.path:  # ``benchmarks`` is a top-level folder, not an installed package
    sys.path.insert(0, str(ROOT))

from benchmarks._common import Results, parse_args, percentile

TINY = ["--n", "600", "--dim", "16", "--queries", "12", "--seed", "3"]


def test_index_benchmark_json_shape(tmp_path: Path) -> None:
    run = run_benchmark("index", *TINY, out=tmp_path / "index.json", timeout=120)
    assert "| case" in run.stdout and "exact_vs_numpy_ratio" in run.stdout
    assert {"cpu_count", "platform", "python", "versions"} <= set(run.doc["machine"])
    assert run.doc["machine"]["thread_env"]["OPENBLAS_NUM_THREADS"] is not None
    by_metric = run.metrics("N=600")
    for metric in (
        "exact_add_throughput",
        "hnsw_add_throughput",
        "numpy_scan_p50",
        "exact_p99",
        "hnsw_ef64_p50",
        "hnsw_ef64_recall@10",
        "filter10%_exact_p50",
        "filter1%_hnsw_vs_numpy_ratio",
    ):
        assert metric in by_metric, metric
    assert run.units[("N=600", "exact_vs_numpy_ratio")] == "x"
    assert 0.0 <= by_metric["hnsw_ef256_recall@10"] <= 1.0
    assert any(m.endswith("_ratio") for m in by_metric)


def test_index_benchmark_json_to_stdout() -> None:
    run = run_benchmark("index", *TINY, timeout=120)  # stdout is pure JSON: it parsed
    assert run.doc["benchmark"] == "index"
    assert "| case" in run.stderr  # the table went to stderr


def test_percentile_matches_linear_interpolation() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(values, 0) == 1.0 and percentile(values, 100) == 5.0
    assert percentile(values, 50) == 3.0 and percentile(values, 25) == 2.0
    assert percentile([1.0, 2.0], 99) == pytest.approx(1.99)
    with pytest.raises(ValueError, match="empty"):
        percentile([], 50)
    with pytest.raises(ValueError, match="within"):
        percentile([1.0], 101)


def test_results_collect_ratio_table_and_json(tmp_path: Path) -> None:
    results = Results("demo")
    results.add("n=10", "numpy_ms", 3, "ms")
    results.add_ratio("n=10", "speed_ratio", 3.0, 1.5)
    with pytest.raises(ValueError, match="_ratio"):
        results.add_ratio("n=10", "speed", 1.0, 1.0)
    assert results.value("n=10", "speed_ratio") == 2.0
    buf = io.StringIO()
    results.print_table(buf)
    lines = buf.getvalue().splitlines()
    assert lines[0] == "benchmark: demo" and lines[1].startswith("| case")
    assert "speed_ratio" in lines[-1] and "2" in lines[-1]
    results.write_json(tmp_path / "r.json", machine={"cpu_count": 1})
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc == {
        "benchmark": "demo",
        "machine": {"cpu_count": 1},
        "results": [
            {"case": "n=10", "metric": "numpy_ms", "value": 3.0, "unit": "ms"},
            {"case": "n=10", "metric": "speed_ratio", "value": 2.0, "unit": "x"},
        ],
    }


def test_parse_args_defaults_and_extra() -> None:
    args = parse_args("x", "demo", [])
    assert (args.quick, args.json, args.seed) == (False, None, 0)

    def extra(p: argparse.ArgumentParser) -> None:
        p.add_argument("--k")

    args = parse_args("x", "demo", ["--quick", "--json", "-", "--k", "3"], extra=extra)
    assert (args.quick, args.json, args.k) == (True, "-", "3")
