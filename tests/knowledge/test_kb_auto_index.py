"""The V2 knowledge base with the default ``index_kind="auto"``: the task-description index
turns HNSW once the KB holds ``hnsw_above`` task descriptions, every open of one store answers
the same, and the query log names the index each query searched."""

from __future__ import annotations

from pathlib import Path

from costeer_lab.embed import get_embedder
from costeer_lab.graph import TASK_DESCRIPTION
from costeer_lab.knowledge import KnowledgeBaseV2, RAGSettings, RAGStrategyV2, iter_query_log
from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace
from costeer_lab.store import SQLiteStore

ABOVE = 12
OPS = ("Mean", "Std", "Max", "Min", "Sum", "Rank", "Skew")
FIELDS = ("close", "open", "volume", "high", "low")


def task(i: int) -> Task:
    op, field = OPS[i % len(OPS)], FIELDS[i % len(FIELDS)]
    return Task(f"t{i}", f"F{i}", f"{op.lower()} of {field} over {3 + i} days",
                f"{op}(${field}, {3 + i})")  # fmt: skip


def seeds(lo: int, hi: int) -> list[Knowledge]:
    return [
        Knowledge(task(i), Workspace({"main.py": f"x = {i}"}), SingleFeedback(final_decision=True))
        for i in range(lo, hi)
    ]


def open_kb(path: Path, **kw: object) -> KnowledgeBaseV2:
    return KnowledgeBaseV2(SQLiteStore(path), get_embedder("hashing"), hnsw_above=ABOVE, **kw)  # type: ignore[arg-type]


def held(kb: KnowledgeBaseV2) -> str:
    return kb.graph.collections[TASK_DESCRIPTION].kind


def similar(kb: KnowledgeBaseV2, run: str) -> list[list[tuple[str, float]]]:
    rag = RAGStrategyV2(RAGSettings(seed=3))
    out = []
    for j in range(40, 46):
        q = task(j)
        got = rag.query(kb, [q], {q.id: SingleFeedback(final_decision=False)}, run_id=run,
                        attempt=1)  # fmt: skip
        out.append([(s.knowledge.id or "", s.score) for s in got.similar_successful[q.id]])
    return out


def test_default_kb_switches_to_hnsw_at_the_threshold_and_logs_it(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    kb.add_seed_knowledge(seeds(0, ABOVE - 1))
    similar(kb, "small")
    assert held(kb) == "exact"
    kb.add_seed_knowledge(seeds(ABOVE - 1, 30))
    similar(kb, "large")
    assert held(kb) == "hnsw"
    kinds = {r["run_id"]: r["index"] for r in iter_query_log(kb.store)}
    assert kinds == {"small": "exact", "large": "hnsw"}
    kb.close()
    again = open_kb(tmp_path / "kb.db")
    col = again.graph.collections[TASK_DESCRIPTION]
    assert (col.kind, col.index.origin) == ("hnsw", "loaded")
    exact = open_kb(tmp_path / "kb.db", index_kind="exact")
    assert held(exact) == "exact"


def test_two_opens_of_one_store_return_identical_query_results(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db", persist_indexes=False)
    kb.add_seed_knowledge(seeds(0, 36))
    kb.close()
    answers = []
    for n in range(2):  # no index files: each open rebuilds the HNSW graph from the store
        opened = open_kb(tmp_path / "kb.db", persist_indexes=False)
        assert held(opened) == "hnsw"
        answers.append(similar(opened, f"open{n}"))
        opened.store.close()
    assert answers[0] == answers[1] and all(answers[0])
