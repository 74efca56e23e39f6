"""The knowledge benchmark runs end to end at a tiny size and writes the agreed JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_knowledge_benchmark_tiny_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import knowledge

    out = tmp_path / "kb.json"
    args = ["--n", "300", "--queries", "6", "--naive-queries", "1", "--hnsw-from", "300"]
    assert knowledge.main([*args, "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["benchmark"] == "knowledge" and "cpu_count" in data["machine"]
    metrics = {r["metric"]: r for r in data["results"]}
    for name in ("insert_items_per_s", "insert_items_per_s_excl_embedding", "v2_query_p50",
                 "v2_query_p99", "naive_similar_p50", "v2_query_hnsw_p50"):  # fmt: skip
        assert metrics[name]["value"] > 0
    assert metrics["naive_over_v2_query_ratio"]["unit"] == "x"
    assert 1 <= metrics["v2_queries_with_error_and_component_hits"]["value"] <= 6
    assert "naive_queries" in capsys.readouterr().out


def test_knowledge_scale_tiny_run(tmp_path: Path) -> None:
    """``--scale`` measures every agreed quantity, each with its brute-force ratio."""
    from benchmarks import knowledge

    out = tmp_path / "scale.json"
    args = ["--scale", "--n", "200", "--queries", "4", "--naive-queries", "1"]
    assert knowledge.main([*args, "--json", str(out)]) == 0
    rows = {r["metric"]: r for r in json.loads(out.read_text())["results"]}
    assert {r["case"] for r in rows.values()} == {"scale n=200"}
    assert rows["tasks"]["value"] == 200 and 300 <= rows["attempts"]["value"] <= 500
    for name in ("insert_items_per_s", "v2_query_p50", "v2_query_exact_p99", "open_s",
                 "open_exact_s", "close_s", "first_use_s", "record_ms_p50",
                 "serve_peak_rss_mb", "rebuild_peak_rss_mb", "rebuild_whole_peak_rss_mb",
                 "store_bytes_per_task"):  # fmt: skip
        assert rows[name]["value"] > 0
    assert rows["insert_parent_cpu_us"]["unit"] == "us/attempt"
    assert rows["insert_parent_cpu_us"]["value"] > 0
    assert rows["insert_writer_cpu_us"]["value"] == 0  # one short batch: no writer process
    assert rows["index_hnsw"]["value"] == 0  # 200 tasks: below the auto threshold
    assert rows["naive_rows_share"]["value"] == 1
    for ratio in ("insert_bulk_over_single_ratio", "record_empty_over_full_ratio",
                  "reembed_over_open_ratio", "brute_over_v2_query_ratio",
                  "exact_over_v2_query_ratio", "whole_over_paged_rebuild_rss_ratio",
                  "naive_over_serve_rss_ratio"):  # fmt: skip
        assert rows[ratio]["unit"] == "x" and rows[ratio]["value"] > 0


def test_scale_attempts_average_two_per_task() -> None:
    from benchmarks.knowledge_scale import attempts

    items = attempts(2000, seed=1)
    assert len({e.task.id for e in items}) == 2000
    assert 1.9 <= len(items) / 2000 <= 2.1
    assert attempts(50, seed=1) == attempts(50, seed=1)
