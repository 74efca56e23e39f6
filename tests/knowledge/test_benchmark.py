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
