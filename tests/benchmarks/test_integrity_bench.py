"""Smoke test of the integrity benchmark: two attacks in each mode, the table, the JSON shape,
the per-attack trusted-process columns, the budget and the controls."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_integrity_benchmark_json_shape(tmp_path: Path) -> None:
    out = tmp_path / "not-yet" / "integrity.json"
    attacks = "early_os_exit,result_file_forge"
    cmd = [sys.executable, "-m", "benchmarks.integrity", "--attacks", attacks, "--json", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "| early_os_exit " in proc.stdout and "contained_ratio" in proc.stdout
    assert "cpu s" in proc.stdout and "rss MiB" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "integrity" and {"cpu_count", "python"} <= set(doc["machine"])
    rows = doc["results"]
    assert all(set(r) == {"case", "metric", "value", "unit"} for r in rows)
    assert all(math.isfinite(r["value"]) for r in rows)
    modes = ["root", "rootless"] if os.geteuid() == 0 else ["rootless"]
    names = ("forged_verdict/early_os_exit", "forged_verdict/result_file_forge")
    cases = {f"{mode}/{name}" for mode in modes for name in names}
    per_attack = {r["case"]: r["value"] for r in rows if r["metric"] == "contained"}
    assert set(per_attack) == cases
    assert set(per_attack.values()) <= {0.0, 1.0}
    metric = {(r["case"], r["metric"]): r["value"] for r in rows}
    for case in cases:
        assert metric[(case, "trusted_cpu_s")] >= 0
        assert (case, "trusted_peak_rss_mb") in metric
    for mode in modes:
        mine = [v for c, v in per_attack.items() if c.startswith(mode + "/")]
        assert metric[(f"{mode}/all attacks", "contained_ratio")] == sum(mine) / 2
        assert metric[(f"{mode}/benign controls", "control_success_ratio")] == 1.0
    total = metric[("all attacks", "contained_ratio")]
    assert total == sum(per_attack.values()) / len(per_attack)
    assert metric[("always-pass evaluator (baseline)", "contained_ratio")] == 0.0
    assert metric[("trusted budget", "trusted_cpu_s_limit")] > 0
    assert metric[("trusted budget", "trusted_peak_rss_mb_limit")] > 0
