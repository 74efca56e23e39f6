"""Run a benchmark as ``make bench`` does and check the JSON every benchmark writes.

``run_benchmark("index", "--n", "600", out=tmp_path / "index.json")`` runs
``python -m benchmarks.index --n 600 --json <out>`` from the repository root (``out=None``:
``--json -``, the document read from stdout), fails the test unless it exits 0 and its document
has the shared shape (``{"benchmark", "machine", "results"}``, ``benchmark`` the module's name,
rows of exactly ``case``, ``metric``, float ``value`` and ``unit``, every value finite), and
returns the run for the benchmark's own checks.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "BenchmarkRun", "run_benchmark"]

ROOT = Path(__file__).resolve().parents[2]

Key = tuple[str, str]


@dataclass(frozen=True)
class BenchmarkRun:
    """One finished benchmark run.

    Attributes:
        doc: the whole JSON document.
        values: ``(case, metric) -> value`` of every row.
        units: ``(case, metric) -> unit`` of every row.
        stdout: the process's standard output (the JSON itself when ``out`` was ``None``).
        stderr: its standard error.
    """

    doc: dict[str, Any]
    values: dict[Key, float]
    units: dict[Key, str]
    stdout: str
    stderr: str

    def metrics(self, case: str) -> dict[str, float]:
        """``metric -> value`` of the rows of one ``case``."""
        return {m: v for (c, m), v in self.values.items() if c == case}

    @property
    def cases(self) -> set[str]:
        """Every case with at least one row."""
        return {c for c, _ in self.values}


def run_benchmark(
    name: str,
    *args: str,
    out: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> BenchmarkRun:
    """Run ``python -m benchmarks.<name> *args --json <out or ->`` and check its document.

    Args:
        name: the benchmark module (``benchmarks/<name>.py``), also the ``benchmark`` it reports.
        args: its own options (sizes, ``--quick``, …).
        out: where the JSON goes; ``None``: stdout.
        env: the process's environment (default: this one's).
        timeout: seconds before the run counts as hung.
    """
    target = "-" if out is None else str(out)
    proc = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", *args, "--json", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=None if env is None else dict(env),
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout if out is None else out.read_text())
    _check_shape(doc, name)
    rows = doc["results"]
    return BenchmarkRun(
        doc=doc,
        values={(r["case"], r["metric"]): r["value"] for r in rows},
        units={(r["case"], r["metric"]): r["unit"] for r in rows},
        stdout=proc.stdout,
        stderr=proc.stderr,
    )


def _check_shape(doc: dict[str, Any], name: str) -> None:
    """The JSON shape every benchmark shares (``benchmarks/_common.py``)."""
    assert set(doc) - {"skipped"} == {"benchmark", "machine", "results"}
    for skipped in doc.get("skipped", []):  # cases that could not run, each with its reason
        assert set(skipped) == {"case", "reason"} and skipped["reason"]
    assert doc["benchmark"] == name
    assert {"cpu_count", "python", "versions"} <= set(doc["machine"])
    rows = doc["results"]
    assert rows, "a benchmark reports at least one row"
    assert all(set(r) == {"case", "metric", "value", "unit"} for r in rows)
    assert all(isinstance(r["value"], float) and math.isfinite(r["value"]) for r in rows)
    keys = [(r["case"], r["metric"]) for r in rows]
    assert len(set(keys)) == len(keys), "a (case, metric) pair is reported once"
