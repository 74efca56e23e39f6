"""``evolve_arm``: one (arm, seed) of the runner, its run state, and ``run_arm`` on top of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from costeer_lab.evaluate import MultiEvaluator
from costeer_lab.evolve import make_executor
from costeer_lab.experiment import ExperimentSpec, evolve_arm, load_spec
from costeer_lab.experiment._runner import attempt_rows, run_arm
from costeer_lab.suites import Suite, load_suite

STEP_PARTS = {"query_s", "implement_s", "evaluate_s", "generate_s"}


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite("humaneval", limit=6)


def _spec() -> ExperimentSpec:
    return load_spec(
        {
            "name": "arm",
            "suite": "humaneval",
            "arms": [{"name": "rag_v2", "rag": "v2"}],
            "max_loop": 2,
        }
    )


def test_evolve_arm_returns_the_run_state_and_run_arm_resumes_it(
    suite: Suite, tmp_path: Path
) -> None:
    spec = _spec()
    arm = spec.arms[0]
    targets = [suite.task(i) for i in suite.split("test")]
    seed_tasks = [suite.task(i) for i in suite.split("train")]
    executor = make_executor("serial", 1)
    with MultiEvaluator(suite.evaluators(), kind="thread") as evaluator:
        kwargs: dict[str, Any] = {
            "suite": suite,
            "targets": targets,
            "seed_tasks": seed_tasks,
            "store_path": tmp_path / "arm.db",
            "executor": executor,
            "evaluator": evaluator,
            "progress": False,
        }
        state = evolve_arm(spec, arm, 3, **kwargs)
        assert 1 <= state.step <= spec.max_loop
        assert len(state.step_walls) == state.step  # one wall per step this call ran
        assert {r["run_id"] for r in state.rows} == {"rag_v2-seed3"}
        assert all(set(r["step_timing"]) == STEP_PARTS for r in state.rows)
        # the same (arm, seed) again resumes from the store: no new step, the same rows
        rows = run_arm(spec, arm, 3, **kwargs)
    executor.shutdown()
    assert rows == attempt_rows(state.rows, arm.name, 3)
    assert [r["attempt"] for r in rows] == [int(r["step"]) for r in state.rows]
