"""Smoke test of the ``auto`` threshold benchmark (tiny sizes) and of its tie-aware recall."""

from __future__ import annotations

import sys

from ._harness import ROOT, run_benchmark

if str(ROOT) not in sys.path:  # ``benchmarks`` is a top-level folder, not an installed package
    sys.path.insert(0, str(ROOT))

from benchmarks.index_auto import recall
from costeer_lab.index import SearchResult


def test_index_auto_benchmark_rows() -> None:
    run = run_benchmark("index_auto", "--n", "300", "700", "--queries", "6", timeout=120)
    for case in ("N=300", "N=700"):
        got = run.metrics(case)
        assert {"exact_p50", "hnsw_m32_build_s", "m32_ef128_p50", "exact_over_m32_ef128_ratio",
                "m32_ef128_recall@64", "m16_ef64_recall@3"} <= set(got)  # fmt: skip
        assert all(0 <= got[m] <= 1 for m in got if "recall" in m)
        assert run.units[(case, "exact_over_m32_ef128_ratio")] == "x"


def test_recall_counts_ties_and_misses() -> None:
    exact = [SearchResult(("a", "b", "c"), (0.9, 0.5, 0.5), 3, 3)]
    tie = [SearchResult(("a", "c", "b"), (0.9, 0.5, 0.5), 3, 3)]
    miss = [SearchResult(("a", "d", "e"), (0.9, 0.4, 0.3), 3, 3)]
    assert recall(exact, tie, 3) == 1.0
    assert recall(exact, miss, 3) == 1 / 3
    assert recall(exact, miss, 1) == 1.0
