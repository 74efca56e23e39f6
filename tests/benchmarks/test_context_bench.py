"""Smoke test of the task-context benchmark: tiny sizes, JSON shape, every ratio present."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_context_benchmark_json_shape(tmp_path: Path) -> None:
    out = tmp_path / "context.json"
    cmd = [sys.executable, "-m", "benchmarks.context", "--tasks", "4", "--actions", "8"]
    proc = subprocess.run(
        [*cmd, "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "| case" in proc.stdout and "query_ratio" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "context" and {"cpu_count", "python"} <= set(doc["machine"])
    rows = doc["results"]
    assert all(set(r) == {"case", "metric", "value", "unit"} for r in rows)
    assert all(math.isfinite(r["value"]) and r["value"] > 0 for r in rows)
    assert {r["case"] for r in rows} == {"tasks=4,actions=8"}
    metrics = {r["metric"]: r for r in rows}
    for label in ("add_action", "load_task_warm", "load_task_cold", "query"):
        assert metrics[f"{label}_p50"]["unit"] == "ms"
        assert metrics[f"baseline_{label}_p50"]["unit"] == "ms"
        ratio = metrics[f"{label}_ratio"]
        assert ratio["unit"] == "x"
        expected = metrics[f"baseline_{label}_p50"]["value"] / metrics[f"{label}_p50"]["value"]
        assert math.isclose(ratio["value"], expected, rel_tol=1e-6)
