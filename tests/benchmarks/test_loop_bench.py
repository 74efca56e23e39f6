"""Smoke tests of the loop benchmark: tiny sizes, JSON shape, overhead below the whole; the
real-model case runs against a local model when the ``llm`` extra is installed and is listed
as skipped, with the reason, when it is not."""

from __future__ import annotations

from pathlib import Path

from costeer_lab.errors import ConfigurationError
from costeer_lab.llm import require_local_llm

from ._harness import run_benchmark


def _llm_extra() -> str | None:
    """``None`` when the extra is installed, else the reason it is not."""
    try:
        require_local_llm("gemma3-270m")
    except ConfigurationError as exc:
        return str(exc)
    return None


def test_loop_benchmark_json_shape(tmp_path: Path) -> None:
    out = tmp_path / "not-yet" / "loop.json"  # the directory is created
    run = run_benchmark("loop", "--tasks", "3", "--steps", "1", "--no-real-model", out=out)
    assert len(run.cases) == 3
    assert "skipped" not in run.doc
    for case in run.cases:
        m = run.metrics(case)
        assert 0 <= m["framework_overhead_per_task"] <= m["iteration_wall_per_task"]
        assert 0 <= m["overhead_share_ratio"] <= 1


def test_the_real_model_case_runs_or_says_why_not() -> None:
    run = run_benchmark("loop", "--tasks", "1", "--steps", "1", "--real-tasks", "2")
    missing = _llm_extra()
    real = sorted(c for c in run.cases if c.startswith("real_model"))
    if missing is not None:
        assert real == []
        assert run.doc["skipped"] == [{"case": "real_model", "reason": missing}]
        assert "make setup-llm" in missing
        return
    assert "skipped" not in run.doc
    assert [c.split()[1] for c in real] == ["rag=none", "rag=v2"]
    for case in real:
        m = run.metrics(case)
        assert m["task_iterations"] == 2
        assert (
            m["completion_tokens_per_s"] > 0 and m["tokens_per_s"] >= m["completion_tokens_per_s"]
        )
        assert m["attempts_per_min"] > 0
        assert 0 <= m["overhead_share_ratio"] <= 1
        assert 0 <= m["success_share"] <= 1
