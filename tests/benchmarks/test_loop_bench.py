"""Smoke test of the loop benchmark: tiny sizes, JSON shape, overhead below the whole."""

from __future__ import annotations

from pathlib import Path

from ._harness import run_benchmark


def test_loop_benchmark_json_shape(tmp_path: Path) -> None:
    out = tmp_path / "not-yet" / "loop.json"  # the directory is created
    run = run_benchmark("loop", "--tasks", "3", "--steps", "1", out=out)
    assert len(run.cases) == 3
    for case in run.cases:
        m = run.metrics(case)
        assert 0 <= m["framework_overhead_per_task"] <= m["iteration_wall_per_task"]
        assert 0 <= m["overhead_share_ratio"] <= 1
