"""A KB built, closed and reopened in another process answers queries identically."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from costeer_lab.knowledge import make_rag_strategy, open_kb
from costeer_lab.store import SQLiteStore

from ._kb_helpers import code, crash, factor, ok, seed, wrong

TASKS = [
    factor("MA5", "Mean($close, 5)/$close", "average close over 5 days", "MA"),
    factor("MA10", "Mean($close, 10)/$close", "average close over 10 days", "MA"),
    factor("STD5", "Std($close, 5)/$close", "standard deviation of close", "STD"),
    factor("VMA5", "Mean($volume, 5)/$volume", "average volume over 5 days", "VMA"),
    factor("CORR5", "Corr($close, Log($volume+1), 5)", "correlation of close and volume"),
]
LAST = {"f/VMA5": crash("KeyError: 'volume'"), "f/MA10": wrong(0.1)}

QUERY = """
import json
from tests.knowledge.test_persistence import TASKS, LAST
from costeer_lab.knowledge import make_rag_strategy, open_kb
from costeer_lab.store import SQLiteStore
store = SQLiteStore({path!r})
kb = open_kb(store=store, version={version!r})
rag = make_rag_strategy({version!r}, seed=3, sampler="random", log_queries=False)
qk = rag.query(kb, TASKS, LAST, run_id="r", attempt=3)
print(json.dumps(qk.to_dict(), sort_keys=True))
"""


def _build(path: Path, version: str) -> str:
    store = SQLiteStore(path)
    kb: Any = open_kb(store=store, version=version)  # V1 or V2, paired with the same strategy
    kb.add_seed_knowledge([seed(TASKS[0], "gt ma5"), seed(TASKS[4], "gt corr")])
    rag = make_rag_strategy(version, seed=3, sampler="random", log_queries=False)
    rag.generate_knowledge(
        kb,
        [(TASKS[2], code("bad std"), crash("KeyError: 'close'")), (TASKS[1], code("m"), wrong())],
        run_id="r",
    )
    rag.generate_knowledge(kb, [(TASKS[2], code("good std"), ok())], run_id="r")
    answer = json.dumps(
        rag.query(kb, TASKS, LAST, run_id="r", attempt=3).to_dict(), sort_keys=True
    )
    store.close()
    return answer


def _reopen(path: Path, version: str) -> str:
    script = QUERY.format(path=str(path), version=version)  # run from the repository root
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False,
        cwd=str(Path(__file__).parents[2]),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_v2_answers_identical_after_reopen_in_another_process(tmp_path: Path) -> None:
    before = _build(tmp_path / "kb.db", "v2")
    data = json.loads(before)
    assert data["error_fixes"]["f/VMA5"] and data["component_matches"]["f/MA10"]
    assert _reopen(tmp_path / "kb.db", "v2") == before


def test_v1_answers_identical_after_reopen_in_another_process(tmp_path: Path) -> None:
    before = _build(tmp_path / "kb1.db", "v1")
    assert json.loads(before)["similar_successful"]["f/MA10"]
    assert _reopen(tmp_path / "kb1.db", "v1") == before
