"""Smoke test of the document knowledge base benchmark (tiny synthetic corpus, hashing only)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_docs_benchmark_json_shape(tmp_path: Path) -> None:
    out = tmp_path / "docs.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.docs",
            *("--n", "300", "--queries", "8", "--embedders", "hashing", "--json", str(out)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "docs" and {"cpu_count", "versions"} <= set(doc["machine"])
    rows = {(r["case"], r["metric"]): r for r in doc["results"]}
    assert all(isinstance(r["value"], float) and math.isfinite(r["value"]) for r in rows.values())
    quality = "readmes hashing"
    # every label of the shipped query set names a section of the installed READMEs
    assert rows[(quality, "labels_missing")]["value"] == 0.0
    assert rows[(quality, "queries")]["value"] >= 40
    for mode in ("vector", "keyword", "hybrid"):
        for metric in (f"{mode}_recall@5", f"{mode}_mrr@10"):
            assert 0.0 < rows[(quality, metric)]["value"] <= 1.0, metric
    ratio = rows[(quality, "hybrid_vs_best_recall@5_ratio")]
    best = max(rows[(quality, f"{m}_recall@5")]["value"] for m in ("vector", "keyword"))
    assert ratio["unit"] == "x"
    assert math.isclose(ratio["value"], rows[(quality, "hybrid_recall@5")]["value"] / best)
    assert rows[(quality, "ingest_chunks_per_s")]["value"] > 0
    latency = "synthetic N=300"
    for metric in ("exact_hybrid_p50", "hnsw_hybrid_p99", "hnsw_hybrid_filter10%_p50"):
        assert rows[(latency, metric)]["unit"] == "ms"
    assert (latency, "hnsw_hybrid_p50_target_ratio") in rows
