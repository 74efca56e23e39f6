"""Smoke test of the memory benchmark (tiny sizes, both backends when PostgreSQL is here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_memory_benchmark_json_shape(tmp_path: Path) -> None:
    out = tmp_path / "memory.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.memory",
            "--n",
            "400",
            "--queries",
            "12",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "memory"
    rows = {(r["case"], r["metric"]): r for r in doc["results"]}
    case = "sqlite N=400"
    for metric in ("bulk_insert_throughput", "search_p50", "search_p99", "exact_scan_p50"):
        assert rows[(case, metric)]["value"] > 0
    assert rows[(case, "recall@10")]["value"] == 1.0  # exact FAISS below the HNSW threshold
    assert rows[(case, "search_vs_exact_ratio")]["unit"] == "x"
    postgres = [r for r in doc["results"] if r["case"].startswith("postgres")]
    if postgres:
        assert {r["metric"] for r in postgres} >= {"search_p50", "recall@10"}
    else:
        assert "postgres N=400 skipped:" in proc.stderr
