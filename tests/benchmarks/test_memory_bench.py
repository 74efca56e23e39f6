"""Smoke test of the memory benchmark (small sizes, both backends when PostgreSQL is here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._harness import run_benchmark


def test_memory_benchmark_json_shape(tmp_path: Path) -> None:
    run = run_benchmark("memory", "--n", "1200", "--queries", "12", out=tmp_path / "memory.json")
    doc, rows = run.doc, run.values
    case = "sqlite N=1,200"
    for metric in ("bulk_insert_throughput", "search_p50", "search_p99", "exact_scan_p50"):
        assert rows[(case, metric)] > 0
    assert rows[(case, "recall@10")] == 1.0  # exact FAISS below the HNSW threshold
    assert rows[(case, "recall@10_within_0.001")] == 1.0
    assert rows[(case, "recall@10_code_queries")] == 1.0
    assert run.units[(case, "search_vs_exact_ratio")] == "x"
    for name in ("hashing", "minilm"):  # the calibration section, per embedder
        cal = f"calibration {name}"
        assert rows[(cal, "precision")] >= 0.9 and 0.5 <= rows[(cal, "recall")] <= 1
        assert rows[(cal, "threshold")] == pytest.approx(rows[(cal, "stored_threshold")], abs=1e-3)
        assert rows[(cal, "recall_vs_specified_ratio")] > 1  # 0.7 keeps fewer matches
        rank = f"ranking {name}"
        assert (
            rows[(rank, "top_is_successful_share")]
            > rows[(rank, "top_is_successful_share_weight_0")]
        )
        assert run.units[(rank, "top_is_successful_vs_weight_0_ratio")] == "x"
    postgres = [r for r in doc["results"] if r["case"].startswith("postgres")]
    # FAISS is exact below 20k patterns: no ef_search sweep on that side
    assert not any("ef_search=" in r["case"] for r in doc["results"] if "sqlite" in r["case"])
    if postgres:
        assert {r["metric"] for r in postgres} >= {"search_p50", "recall@10"}
        pg = "postgres N=1,200"
        # every exact top-10 hit is also a hit within the tie tolerance
        assert rows[(pg, "recall@10_within_0.001")] >= rows[(pg, "recall@10")]
        assert 0 < rows[(pg, "recall@10_code_queries")] <= 1
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
        assert "postgres N=1,200 skipped:" in run.stderr
