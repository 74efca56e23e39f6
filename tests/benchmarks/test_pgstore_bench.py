"""Smoke test of the store backend benchmark (tiny sizes, on the session's PostgreSQL)."""

from __future__ import annotations

import os

from costeer_lab.testing import PostgresTestServer

from ._harness import run_benchmark

TINY = ["--n", "1200", "--dim", "8", "--queries", "6", "--records", "15", "--inserts", "50"]


def test_pgstore_benchmark_json_shape(postgres_server: PostgresTestServer) -> None:
    env = {**os.environ, "COSTEER_LAB_TEST_POSTGRES_URL": postgres_server.admin_url}
    run = run_benchmark("pgstore", *TINY, env=env)  # JSON on stdout
    assert "| case" in run.stderr
    rows = run.values
    for metric in (
        "sqlite_insert",
        "postgres_bulk_insert",
        "sqlite_exact_p50",
        "postgres_ef400_p50",
    ):
        assert ("n=1200", metric) in rows
    assert run.units[("n=1200", "search_speedup_ratio")] == "x"
    assert 0.5 <= rows[("n=1200", "postgres_recall_at_10")] <= 1.0
    assert ("4 processes x 15 records", "write_ratio") in rows
