"""Smoke test of the loop benchmark: tiny sizes, JSON shape, overhead below the whole."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_loop_benchmark_json_shape(tmp_path: Path) -> None:
    out = tmp_path / "not-yet" / "loop.json"  # the directory is created
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.loop",
            "--tasks",
            "3",
            "--steps",
            "1",
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
    assert doc["benchmark"] == "loop" and {"cpu_count", "python"} <= set(doc["machine"])
    rows = doc["results"]
    assert all(set(r) == {"case", "metric", "value", "unit"} for r in rows)
    assert all(math.isfinite(r["value"]) for r in rows)
    cases = {r["case"] for r in rows}
    assert len(cases) == 3
    for case in cases:
        m = {r["metric"]: r["value"] for r in rows if r["case"] == case}
        assert 0 <= m["framework_overhead_per_task"] <= m["iteration_wall_per_task"]
        assert 0 <= m["overhead_share_ratio"] <= 1
