"""An attempt record is folded into the knowledge base's lookups once, however often it is
written or read (the lookups keep no set of every record key: they find an attempt by its run,
task and number), and the lookups read back from the store are the ones the writes built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from costeer_lab.embed import get_embedder
from costeer_lab.knowledge import KnowledgeBaseV2
from costeer_lab.knowledge._kb_records import GROUND_TRUTH, Success
from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace
from costeer_lab.store import SQLiteStore

EMB = get_embedder("hashing")
TASK = Task("t1", "MA5", "mean of close over 5 days")
CRASH = SingleFeedback(
    execution="Traceback (most recent call last):\nKeyError: 'close'", final_decision=False
)
OK = SingleFeedback(execution="ran", final_decision=True)


def lookups(kb: KnowledgeBaseV2) -> dict[str, Any]:
    return {
        "attempts": kb.attempts,
        "success": {td: (s.node, s.provenance, s.runs) for td, s in kb.success.items()},
        "fixes": kb.error_fixes,
        "task_td": kb.task_td,
    }


def test_an_attempt_written_twice_is_one_attempt_with_one_fix(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    kb = KnowledgeBaseV2(SQLiteStore(db), EMB)
    for _ in range(2):  # a resumed run writes its last attempt again
        kb.record(TASK, Workspace({"main.py": "bad"}), CRASH, run_id="r", attempt=1)
    kb.record(TASK, Workspace({"main.py": "good"}), OK, run_id="r", attempt=2)
    kb.record(TASK, Workspace({"main.py": "good"}), OK, run_id="r", attempt=2)
    kb.record(TASK, Workspace({"main.py": "good"}), OK, run_id="r2", attempt=1)
    assert [a.attempt for a in kb.task_attempts("r", "t1")] == [1, 2]
    assert [len(fixes) for fixes in kb.error_fixes.values()] == [1]
    (entry,) = kb.success.values()
    assert entry.runs == ("r", "r2")  # each run once, in the order it earned the success
    assert kb.is_solved("t1", run_id="r2") and not kb.is_solved("t1", run_id="r3")
    built = lookups(kb)
    kb.reload()  # every record read again into the same object
    assert lookups(kb) == built
    assert lookups(KnowledgeBaseV2(SQLiteStore(db), EMB)) == built  # and by a new one


def test_seeds_added_twice_are_one_ground_truth_success() -> None:
    kb = KnowledgeBaseV2(SQLiteStore(":memory:"), EMB)
    seed = Knowledge(TASK, Workspace({"main.py": "gt"}), OK)
    kb.add_seed_knowledge([seed])
    kb.add_seed_knowledge([seed])
    (entry,) = kb.success.values()
    assert (entry.provenance, entry.runs) == (GROUND_TRUTH, ())
    assert kb.is_solved("t1", run_id="any run")


def test_a_success_adds_a_run_once() -> None:
    s = Success("n", "self")
    for run in ("a", "b", "a", "b", "c"):
        s.add_run(run)
    assert s.runs == ("a", "b", "c")
    assert not hasattr(s, "__dict__")  # slots: one per solved task, kept small
