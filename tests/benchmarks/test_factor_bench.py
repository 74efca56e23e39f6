"""Smoke test of the factor benchmark (a tiny panel): JSON shape and its ratios."""

from __future__ import annotations

from pathlib import Path

from ._harness import run_benchmark


def test_factor_benchmark_json_shape(tmp_path: Path) -> None:
    run = run_benchmark("factor_bench", "--tiny", out=tmp_path / "factor.json")
    rows = run.values
    assert all(v > 0 for v in rows.values())
    h5 = [c for c, m in rows if m == "parquet_over_hdf5_ratio"]
    cmp = [c for c, m in rows if m == "accepted_over_rejected_ratio"]
    assert h5 == ["hdf5 output 5x40"] and len(cmp) == 1
    case = h5[0]
    ratio = rows[case, "parquet_p50"] / rows[case, "hdf5_p50"]
    assert rows[case, "parquet_over_hdf5_ratio"] == ratio
