"""Smoke test of the store backend benchmark (tiny sizes, on the session's PostgreSQL)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

from costeer_lab.testing import PostgresTestServer

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--n", "1200", "--dim", "8", "--queries", "6", "--records", "15", "--inserts", "50"]


def test_pgstore_benchmark_json_shape(postgres_server: PostgresTestServer) -> None:
    env = {**os.environ, "COSTEER_LAB_TEST_POSTGRES_URL": postgres_server.admin_url}
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.pgstore", *TINY, "--json", "-"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["benchmark"] == "pgstore" and "| case" in proc.stderr
    rows = {(r["case"], r["metric"]): r for r in doc["results"]}
    assert all(isinstance(r["value"], float) and math.isfinite(r["value"]) for r in rows.values())
    for metric in (
        "sqlite_insert",
        "postgres_bulk_insert",
        "sqlite_exact_p50",
        "postgres_ef400_p50",
    ):
        assert ("n=1200", metric) in rows
    assert rows[("n=1200", "search_speedup_ratio")]["unit"] == "x"
    assert 0.5 <= rows[("n=1200", "postgres_recall_at_10")]["value"] <= 1.0
    assert ("4 processes x 15 records", "write_ratio") in rows
