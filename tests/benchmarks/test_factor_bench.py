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


def test_factor_benchmark_rdagent_file_mode(tmp_path: Path) -> None:
    from ._harness import ROOT

    bench = ROOT / "data" / "rdagent_factor_bench27.json"
    run = run_benchmark("factor_bench", "--tiny", "--rdagent-file", str(bench))
    cats = ("Volume&Price", "Fundamentals", "High-Frequency")
    for cat in cats:  # every reference accepts itself
        refs = run.metrics(f"{cat} references")
        assert refs["accepted"] == refs["total"] == 9 and refs["accepted_ratio"] == 1.0
    assert run.metrics("all references")["total"] == 27
    for mistake in ("fill", "shift", "window", "sign", "cross_instrument", "grouping"):
        row = run.metrics(f"all {mistake}")
        assert 0 <= row["rejected"] <= row["applicable"] <= 27
        assert row["rejected_ratio"] == row["rejected"] / row["applicable"]
        assert sum(run.metrics(f"{c} {mistake}")["applicable"] for c in cats) == row["applicable"]
    assert run.metrics("all sign")["applicable"] == 27  # a nonzero factor always changes sign
    # the file's stacked references (diff / pct_change across instruments) get grouped
    assert run.metrics("Volume&Price grouping")["applicable"] >= 3
