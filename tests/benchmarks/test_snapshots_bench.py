"""Smoke test of the snapshot benchmark (tiny sizes, SQLite only)."""

from __future__ import annotations

from pathlib import Path

from ._harness import run_benchmark


def test_snapshot_benchmark_json_shape(tmp_path: Path) -> None:
    run = run_benchmark("snapshots", "--n", "200", "400", out=tmp_path / "s.json", timeout=300)
    for metric in ("snapshot_ms", "file_copy_ms", "rollback_ms", "diff_ms", "view_open_ms"):
        assert metric in run.metrics("sqlite N=400"), metric
    assert run.units[("sqlite N=200", "copy_vs_snapshot_ratio")] == "x"
    assert set(run.metrics("sqlite scaling")) == {
        f"{m}_200_vs_400_ratio" for m in ("snapshot", "rollback", "diff", "copy")
    }
