"""Smoke test of the task-context benchmark: tiny sizes, JSON shape, every ratio present."""

from __future__ import annotations

import math
from pathlib import Path

from ._harness import run_benchmark


def test_context_benchmark_json_shape(tmp_path: Path) -> None:
    run = run_benchmark("context", "--tasks", "4", "--actions", "8", out=tmp_path / "context.json")
    assert "| case" in run.stdout and "query_ratio" in run.stdout
    assert all(v > 0 for v in run.values.values())
    assert run.cases == {"tasks=4,actions=8"}
    metrics = run.metrics("tasks=4,actions=8")
    unit = {m: u for (_, m), u in run.units.items()}
    for label in ("add_action", "load_task_warm", "load_task_cold", "query"):
        assert unit[f"{label}_p50"] == "ms"
        assert unit[f"baseline_{label}_p50"] == "ms"
        assert unit[f"{label}_ratio"] == "x"
        expected = metrics[f"baseline_{label}_p50"] / metrics[f"{label}_p50"]
        assert math.isclose(metrics[f"{label}_ratio"], expected, rel_tol=1e-6)
