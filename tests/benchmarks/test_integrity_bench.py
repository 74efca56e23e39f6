"""Smoke test of the integrity benchmark: two attacks, the table, the JSON shape, the controls."""

from __future__ import annotations

import json
import math
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
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "| early_os_exit " in proc.stdout and "contained_ratio" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "integrity" and {"cpu_count", "python"} <= set(doc["machine"])
    rows = doc["results"]
    assert all(set(r) == {"case", "metric", "value", "unit"} for r in rows)
    assert all(math.isfinite(r["value"]) for r in rows)
    per_attack = {r["case"]: r["value"] for r in rows if r["metric"] == "contained"}
    assert set(per_attack) == {"forged_verdict/early_os_exit", "forged_verdict/result_file_forge"}
    assert set(per_attack.values()) <= {0.0, 1.0}
    metric = {(r["case"], r["metric"]): r["value"] for r in rows}
    assert metric[("all attacks", "contained_ratio")] == sum(per_attack.values()) / 2
    assert metric[("always-pass evaluator (baseline)", "contained_ratio")] == 0.0
    assert metric[("benign controls", "control_success_ratio")] == 1.0
