"""An attempt the evaluator could not judge (its reference fails) is recorded once, as not
evaluated, and stops its task: it uses none of the task's retries and becomes no knowledge
(issue 25). A real loop: a factor suite in RD-Agent's format, a real FactorEvaluator, a SQLite
store and a V1 knowledge base."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costeer_lab.evaluate import MultiEvaluator
from costeer_lab.evolve import EvoAgent, EvolvingItem, EvolvingStrategy
from costeer_lab.evolve._strategy import _coder
from costeer_lab.knowledge import RAGSettings, RAGStrategyV1, open_kb
from costeer_lab.store import SQLiteStore
from costeer_lab.suites import load_suite
from costeer_lab.testing import ScriptedCoder

_CODE = (
    "import pandas as pd\n"
    'df = pd.read_hdf("daily_pv.h5", key="data")\n'
    'c = df["$close"]\n'
    'f = {sign}(c / c.groupby(level="instrument").shift(5) - 1)\n'
    'f.astype("float64").to_frame("{name}").to_hdf("result.h5", key="data")\n'
)
DOC = {
    "ROC5": {"description": "5-day return", "formulation": "-", "Category": "Momentum",
             "Difficulty": "Easy", "gt_code": _CODE.format(sign="", name="ROC5")},
    "L2_IMB": {"description": "order book imbalance", "formulation": "-", "Category": "HF",
               "Difficulty": "Hard", "gt_code": 'import pandas as pd\n'
               'q = pd.read_hdf("tick_l2.h5")\n'
               'q["bid"].to_frame("L2_IMB").to_hdf("result.h5", key="data")\n'},
}  # fmt: skip
WRONG = {"files": {"main.py": _CODE.format(sign="-", name="X")}, "main_file": "main.py"}
RIGHT = {"files": {"main.py": _CODE.format(sign="", name="X")}, "main_file": "main.py"}


@pytest.fixture(autouse=True)
def _fresh_coders() -> None:
    _coder.cache_clear()


def test_a_task_whose_reference_fails_is_tried_once_and_stopped(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(DOC))
    suite = load_suite(str(path), n_instruments=4, n_days=30, cache_dir=tmp_path / "cache")
    item = EvolvingItem.from_tasks(suite.tasks, [suite.ground_truth(t.id) for t in suite.tasks])
    store = SQLiteStore(tmp_path / "run.db")
    script = {"ROC5": [WRONG, WRONG, RIGHT], "L2_IMB": [WRONG]}
    rag = RAGStrategyV1(RAGSettings(trial_limit=10))
    kb = open_kb(store=store, version="v1")
    with MultiEvaluator(suite.evaluator(runner="inprocess"), kind="thread") as evaluator:

        def agent() -> EvoAgent:
            return EvoAgent(
                strategy=EvolvingStrategy(
                    {"name": ScriptedCoder.name, "script": script}, max_trials=10
                ),
                evaluator=evaluator,
                store=store,
                rag=rag,
                kb=kb,
                run_id="r",
                max_loop=6,
                query_kinds=rag.query_kinds,
                progress=False,
            )

        state = agent().run(item)
        seen = [(r["task_id"], r["step"]) for r in state.rows]
        assert seen == [("ROC5", 1), ("L2_IMB", 1), ("ROC5", 2), ("ROC5", 3)]
        assert state.not_evaluated == {"L2_IMB"} and state.succeeded == {"ROC5"}
        assert state.trials == {"ROC5": 3, "L2_IMB": 1}  # one attempt, not max_loop of them
        l2 = state.last_feedback["L2_IMB"]
        assert l2 is not None and l2.execution.startswith("Not evaluated")
        assert l2.details["infrastructure_error"].startswith(
            "the reference implementation failed (exit code 1)"
        )
        # no knowledge from the attempt that was not evaluated: only ROC5's traces
        assert kb.stats()["attempts"] == 3
        resumed = agent().run(item)  # a resumed run remembers the stopped task
        assert resumed.not_evaluated == {"L2_IMB"} and len(resumed.rows) == 4
    store.close()
