"""Smoke test of the key-layout benchmark (text vs integer keys on the KB's write pattern)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from benchmarks.key_layout import replay

from ._harness import run_benchmark


def test_key_layout_benchmark_json_shape(tmp_path: Path) -> None:
    run = run_benchmark("key_layout", "--n", "700", out=tmp_path / "k.json", timeout=300)
    metrics = run.metrics("sqlite N=700")
    for layout in ("text", "int"):
        assert run.values[("sqlite N=700", f"{layout}_cpu_us_per_attempt")] > 0
        assert f"{layout}_cpu_us_per_attempt_at_n" in metrics
    assert run.units[("sqlite N=700", "text_over_int_cpu_ratio")] == "x"
    assert run.values[("sqlite N=700", "attempts")] > 700


def test_both_layouts_write_the_same_rows(tmp_path: Path) -> None:
    counts = {}
    for layout in ("text", "int"):
        _, _, attempts = replay(tmp_path / f"{layout}.db", layout, 600, seed=3)
        db = sqlite3.connect(tmp_path / f"{layout}.db")
        tables = ("nodes", "edges", "vectors", "records")
        counts[layout] = (
            attempts,
            *(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables),
        )
        db.close()
    assert counts["text"] == counts["int"]
    nodes, attempts = counts["text"][1], counts["text"][0]
    assert nodes == 600 + attempts  # a description per task, a trace per attempt
