"""Smoke test of the factor benchmark (a tiny panel): JSON shape and its ratios."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_factor_benchmark_json_shape(tmp_path: Path) -> None:
    out = tmp_path / "factor.json"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.factor_bench", "--tiny", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "factor_bench"
    rows = {(r["case"], r["metric"]): r["value"] for r in doc["results"]}
    assert all(math.isfinite(v) and v > 0 for v in rows.values())
    h5 = [c for c, m in rows if m == "parquet_over_hdf5_ratio"]
    cmp = [c for c, m in rows if m == "accepted_over_rejected_ratio"]
    assert h5 == ["hdf5 output 5x40"] and len(cmp) == 1
    case = h5[0]
    ratio = rows[case, "parquet_p50"] / rows[case, "hdf5_p50"]
    assert rows[case, "parquet_over_hdf5_ratio"] == ratio
