"""Smoke test of the memory benchmark (small sizes, both backends when PostgreSQL is here)."""

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
            "1200",
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
    case = "sqlite N=1,200"
    for metric in ("bulk_insert_throughput", "search_p50", "search_p99", "exact_scan_p50"):
        assert rows[(case, metric)]["value"] > 0
    assert rows[(case, "recall@10")]["value"] == 1.0  # exact FAISS below the HNSW threshold
    assert rows[(case, "recall@10_within_0.001")]["value"] == 1.0
    assert rows[(case, "recall@10_code_queries")]["value"] == 1.0
    assert rows[(case, "search_vs_exact_ratio")]["unit"] == "x"
    postgres = [r for r in doc["results"] if r["case"].startswith("postgres")]
    # FAISS is exact below 20k patterns: no ef_search sweep on that side
    assert not any("ef_search=" in r["case"] for r in doc["results"] if "sqlite" in r["case"])
    if postgres:
        assert {r["metric"] for r in postgres} >= {"search_p50", "recall@10"}
        pg = "postgres N=1,200"
        # every exact top-10 hit is also a hit within the tie tolerance
        assert rows[(pg, "recall@10_within_0.001")]["value"] >= rows[(pg, "recall@10")]["value"]
        assert 0 < rows[(pg, "recall@10_code_queries")]["value"] <= 1
        # pgvector's HNSW index exists from 1,000 vectors: the sweep trades latency for recall
        sweep = {
            int(r["case"].rsplit("=", 1)[1]): r["value"]
            for r in postgres
            if "ef_search=" in r["case"] and r["metric"] == "recall@10"
        }
        assert sorted(sweep) == [16, 32, 48, 64, 100, 128, 200, 400]
        assert sweep[400] >= sweep[16]
        assert sweep[400] > 0.9
        # the walk alone, measured on the server: a wider beam touches more buffers (at 1,200
        # rows and ef_search >= 100 the planner prefers scanning the table: not compared)
        visits = {
            int(r["case"].rsplit("=", 1)[1]): r["value"]
            for r in postgres
            if "ef_search=" in r["case"] and r["metric"] == "walk_visits_p50"
        }
        assert sorted(visits) == sorted(sweep) and visits[64] > visits[16] > 0
        walks = [r for r in postgres if r["metric"] in ("walk_p50", "walk_visits_p50")]
        assert len(walks) == 2 * len(sweep)
        assert all(r["unit"] == {"walk_p50": "ms"}.get(r["metric"], "buffers") for r in walks)
        assert all(0 < r["value"] < 50 for r in walks if r["metric"] == "walk_p50")
    else:
        assert "postgres N=1,200 skipped:" in proc.stderr
