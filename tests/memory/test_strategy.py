"""The "pattern memory" arm: MemoryStrategy learning from steps, and a real experiment run."""

from __future__ import annotations

import json
from pathlib import Path

from costeer_lab._fingerprint import error_fingerprint
from costeer_lab.experiment import load_results, memory_metrics, run_experiment
from costeer_lab.memory import LoopMemory, MemoryStrategy, memory_arm, open_memory
from costeer_lab.records import SingleFeedback, Task, Workspace
from costeer_lab.store import get_store
from costeer_lab.viz import build_report

TASK = Task("s/rev", "reverse", "reverse a string", category="strings")
OTHER = Task("s/rev2", "reverse words", "reverse a string of words", category="strings")
GOOD = Workspace({"main.py": "def rev(s):\n    return s[::-1]\n"})
BAD = Workspace({"main.py": "def rev(s):\n    return s.reverse()\n"})
FAILED = SingleFeedback(
    "AttributeError: 'str' object has no attribute 'reverse'",
    final_decision=False,
    error_fingerprints=(error_fingerprint("AttributeError: 'str' object has no attribute 'x'"),),
)
OK = SingleFeedback("ok", final_decision=True)


def test_strategy_stores_failures_solves_them_and_records_outcomes() -> None:
    kb, rag = memory_arm(get_store(":memory:"), embedder="hashing", threshold=0.3)
    memory = kb.memory
    qk = rag.query(kb, [TASK], {TASK.id: None}, run_id="r", attempt=1)
    assert qk.similar_successful[TASK.id] == ()  # empty memory: a miss
    rag.generate_knowledge(kb, [(TASK, BAD, FAILED)], run_id="r")
    (fid,) = memory.failures.open_failures(TASK.id)
    rec = memory.failures.get_failure(fid)
    assert (rec["fingerprint"], rec["iteration"], rec["solved"]) == (
        FAILED.error_fingerprints[0], 1, False
    )  # fmt: skip
    rag.query(kb, [TASK], {TASK.id: FAILED}, run_id="r", attempt=2)
    rag.generate_knowledge(kb, [(TASK, GOOD, OK)], run_id="r")
    assert memory.failures.open_failures(TASK.id) == []
    assert memory.failures.get_failure(fid)["solution"] == GOOD.code
    assert len(memory.patterns) == 1 and kb.stats() == {"nodes.patterns": 1, "nodes.failures": 1}
    # another task now finds the pattern and, after the same error, the fix
    qk = rag.query(kb, [OTHER], {OTHER.id: FAILED}, run_id="r", attempt=1)
    (sk,) = qk.similar_successful[OTHER.id]
    assert sk.knowledge.id.startswith("pattern:") and sk.knowledge.task == TASK
    assert sk.knowledge.implementation == GOOD
    (fix,) = qk.error_fixes[OTHER.id]
    assert (fix.fixed.implementation.code, fix.score) == (GOOD.code, 1.0)
    rag.generate_knowledge(kb, [(OTHER, GOOD, OK)], run_id="r")
    st = memory.patterns.stats(sk.knowledge.id)
    assert (st.usage_count, st.successes, st.failures) == (1, 1, 0)
    kb.memory.close()


def test_seed_knowledge_becomes_patterns(sqlite_url: str) -> None:
    from costeer_lab.records import Knowledge

    kb = LoopMemory(open_memory(sqlite_url, embedder="hashing"))
    ids = kb.add_seed_knowledge([Knowledge(TASK, GOOD, OK, id="seed:x")])
    assert len(ids) == 1 and ids[0].startswith("pattern:")
    assert MemoryStrategy().query_kinds == ("similar", "error")
    kb.memory.close()


def test_memory_arm_in_an_experiment(tmp_path: Path) -> None:
    spec = {
        "name": "memory-arm",
        "suite": "alpha158",
        "suite_options": {"n_instruments": 6, "n_days": 80, "cache_dir": str(tmp_path / "c")},
        "tasks": {"ids": [f"alpha158/{n}" for n in ("MA10", "KLEN", "MAX10")]},
        "seed_knowledge": {"split": "train"},
        "arms": [
            {"name": "no_knowledge"},
            {"name": "memory", "rag": "memory", "rag_options": {"limit": 1}},
        ],
        "max_loop": 2,
        "parallelism": {"executor": "thread", "workers": 2},
    }
    df = load_results(run_experiment(spec, tmp_path / "out", progress=False))
    nk, mem = df[df["arm"] == "no_knowledge"], df[df["arm"] == "memory"]
    assert not nk["memory_queried"].any() and (nk["memory_patterns"] == "[]").all()
    assert mem["memory_queried"].all() and (mem["kb_nodes"] > 0).all()
    ma10 = mem[mem["task_id"] == "alpha158/MA10"].iloc[0]
    (pid,) = json.loads(ma10["memory_patterns"])
    assert bool(ma10["success"]) and bool(ma10["memory_used"])
    assert json.loads(ma10["used_knowledge_ids"]) == [pid]
    klen = mem[mem["task_id"] == "alpha158/KLEN"]
    assert (klen["memory_patterns"] == "[]").all() and not klen["success"].any()
    table = memory_metrics(df)
    assert table["arm"].tolist() == ["memory"]
    hits = mem["memory_patterns"].map(lambda t: json.loads(t) != [])
    row = table.iloc[0]
    assert (row["attempts"], row["hits"]) == (len(mem), int(hits.sum()))
    assert row["success_when_used"] == mem[mem["memory_used"]]["success"].mean() == 1.0
    with open_memory(tmp_path / "out" / "kb" / "memory-seed0.db", embedder="hashing") as memory:
        st = memory.patterns.stats(pid)
        assert st.successes == 1 and st.usage_count >= 1
        assert memory.stats()["pattern_searches"] == len(mem)
    page = build_report(df, tmp_path / "r.html", title="t").read_text()
    assert "Pattern memory: hit rate and success when used" in page
