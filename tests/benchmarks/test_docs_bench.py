"""Smoke test of the document knowledge base benchmark (tiny synthetic corpus, hashing only)."""

from __future__ import annotations

import math
from pathlib import Path

from ._harness import run_benchmark


def test_docs_benchmark_json_shape(tmp_path: Path) -> None:
    args = ("--n", "300", "--queries", "8", "--embedders", "hashing")
    run = run_benchmark("docs", *args, out=tmp_path / "docs.json")
    values = run.values
    quality = "readmes hashing"
    # every label of the shipped query set names a section of the installed READMEs
    assert values[(quality, "labels_missing")] == 0.0
    assert values[(quality, "queries")] >= 40
    for mode in ("vector", "keyword", "hybrid"):
        for metric in (f"{mode}_recall@5", f"{mode}_mrr@10"):
            assert 0.0 < values[(quality, metric)] <= 1.0, metric
    ratio = (quality, "hybrid_vs_best_recall@5_ratio")
    best = max(values[(quality, f"{m}_recall@5")] for m in ("vector", "keyword"))
    assert run.units[ratio] == "x"
    assert math.isclose(values[ratio], values[(quality, "hybrid_recall@5")] / best)
    assert values[ratio] >= 1.0  # issue 26: hybrid at least as good as the best single mode
    # issue 26: scores with a meaning, unrelated queries fall below min_score
    assert values[(quality, "unrelated_max_score_hybrid")] < values[(quality, "min_score")]
    assert values[(quality, "unrelated_below_min_score_ratio")] > 1.0
    assert values[(quality, "relevant_kept_by_min_score")] >= 0.8
    assert values[(quality, "ingest_chunks_per_s")] > 0
    # issue 26: the reranker's gain, with and without it on the same queries
    for metric in ("hybrid_rerank_recall@5", "hybrid_rerank_mrr@10"):
        assert 0.0 < values[(quality, metric)] <= 1.0, metric
    for name, base, reranked in (
        ("rerank_gain_recall@5_ratio", "hybrid_recall@5", "hybrid_rerank_recall@5"),
        ("rerank_gain_mrr_ratio", "hybrid_mrr@10", "hybrid_rerank_mrr@10"),
    ):
        assert run.units[(quality, name)] == "x"
        expected = values[(quality, reranked)] / values[(quality, base)]
        assert math.isclose(values[(quality, name)], expected)
    assert values[(quality, "unrelated_max_score_hybrid_rerank")] < values[(quality, "min_score")]
    assert (quality, "rerank_query_time_ratio") in values
    latency = "synthetic N=300"
    for metric in ("exact_hybrid_p50", "hnsw_hybrid_p99", "hnsw_hybrid_filter10%_p50"):
        assert run.units[(latency, metric)] == "ms"
    assert (latency, "hnsw_hybrid_p50_target_ratio") in values
