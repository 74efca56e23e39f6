"""RAGStrategyV1 over KnowledgeBaseV1: similar successful implementations, failed attempts."""

from __future__ import annotations

from costeer_lab.knowledge import (
    KnowledgeBaseV1,
    RAGSettings,
    RAGStrategyV1,
    iter_query_log,
    open_kb,
)
from costeer_lab.store import BaseStore

from ._kb_helpers import code, crash, factor, ok, seed, wrong

MA5 = factor("MA5", "Mean($close, 5)/$close", "average close over 5 days")
MA10 = factor("MA10", "Mean($close, 10)/$close", "average close over 10 days")
VOL = factor("VSTD", "Std($volume, 20)", "volatility of traded volume")


def _kb(store: BaseStore) -> KnowledgeBaseV1:
    kb = open_kb(store=store, version="v1")
    assert isinstance(kb, KnowledgeBaseV1)
    return kb


def test_empty_kb(store: BaseStore) -> None:
    qk = RAGStrategyV1().query(_kb(store), [MA5], {}, run_id="r", attempt=1)
    assert qk.similar_successful == {"f/MA5": ()} and qk.former_traces == {"f/MA5": ()}


def test_similar_successful_and_failed_attempts(store: BaseStore) -> None:
    kb = _kb(store)
    kb.add_seed_knowledge([seed(MA5, "ma5"), seed(VOL, "vol")])
    rag = RAGStrategyV1(RAGSettings(max_similar=2, max_former_traces=2, trial_limit=3))
    for i, fb in enumerate([crash("KeyError: 'x'"), wrong(), wrong()]):
        rag.generate_knowledge(kb, [(MA10, code(f"v{i}"), fb)], run_id="r")
    qk = rag.query(kb, [MA10, MA5], {}, run_id="r", attempt=4)
    got = qk.similar_successful["f/MA10"]
    assert [x.knowledge.implementation.code for x in got] == ["ma5", "vol"]
    assert got[0].score > got[1].score and got[0].knowledge.id.startswith("kb1:")
    assert [k.implementation.code for k in qk.former_traces["f/MA10"]] == ["v1", "v2"]
    assert qk.failed_task_info_set == {"f/MA10"}
    assert qk.success_task_to_knowledge["f/MA5"].implementation.code == "ma5"
    rows = iter_query_log(store, run_id="r")
    assert {(r["task_id"], r["query_kind"]) for r in rows} == {
        ("f/MA10", "former_trace"), ("f/MA10", "similar")
    }  # fmt: skip


def test_success_is_found_by_later_tasks_and_survives_reopen(store: BaseStore) -> None:
    kb = _kb(store)
    rag = RAGStrategyV1()
    rag.generate_knowledge(kb, [(MA5, code("mine"), ok())], run_id="r")
    again = _kb(store)
    qk = rag.query(again, [MA10, MA5], {}, run_id="r", attempt=2)
    assert qk.similar_successful["f/MA10"][0].knowledge.implementation.code == "mine"
    assert "f/MA5" in qk.success_task_to_knowledge
