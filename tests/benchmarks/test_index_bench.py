"""Smoke test of the index benchmark (tiny sizes) and of the shared benchmark helpers."""

from __future__ import annotations

import argparse
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # ``benchmarks`` is a top-level folder, not an installed package
    sys.path.insert(0, str(ROOT))

from benchmarks._common import Results, parse_args, percentile  # noqa: E402

TINY = ["--n", "600", "--dim", "16", "--queries", "12", "--seed", "3"]


def test_index_benchmark_json_shape(tmp_path: Path) -> None:
    out = tmp_path / "index.json"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.index", *TINY, "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "| case" in proc.stdout and "exact_vs_numpy_ratio" in proc.stdout
    doc = json.loads(out.read_text())
    assert set(doc) == {"benchmark", "machine", "results"} and doc["benchmark"] == "index"
    assert {"cpu_count", "platform", "python", "versions"} <= set(doc["machine"])
    assert doc["machine"]["thread_env"]["OPENBLAS_NUM_THREADS"] is not None
    rows = doc["results"]
    assert all(set(r) == {"case", "metric", "value", "unit"} for r in rows)
    assert all(isinstance(r["value"], float) and math.isfinite(r["value"]) for r in rows)
    by_metric = {r["metric"]: r for r in rows if r["case"] == "N=600"}
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
    assert by_metric["exact_vs_numpy_ratio"]["unit"] == "x"
    assert 0.0 <= by_metric["hnsw_ef256_recall@10"]["value"] <= 1.0
    assert any(m.endswith("_ratio") for m in by_metric)


def test_index_benchmark_json_to_stdout() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.index", *TINY, "--json", "-"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["benchmark"] == "index"  # stdout is pure JSON
    assert "| case" in proc.stderr  # the table went to stderr


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
