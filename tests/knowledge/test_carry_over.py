"""Error -> fix pairs link across runs and tasks, also after the store is reopened."""

from __future__ import annotations

from costeer_lab.knowledge import KnowledgeBaseV2, make_rag_strategy, open_kb
from costeer_lab.store import BaseStore

from ._kb_helpers import code, crash, factor, ok

STD5 = factor("STD5", "Std($close, 5)/$close", "standard deviation of close, 5 days", "STD")
MA10 = factor("MA10", "Mean($close, 10)/$close", "average close over 10 days", "MA")


def _fixes_for(kb: KnowledgeBaseV2, run_id: str) -> list[tuple[str, str]]:
    qk = make_rag_strategy("v2").query(
        kb, [MA10], {"f/MA10": crash("KeyError: 'x'")}, run_id=run_id, attempt=2
    )
    return [(f.failed.implementation.code, f.fixed.implementation.code)
            for f in qk.error_fixes["f/MA10"]]  # fmt: skip


def test_a_failure_in_one_run_is_fixed_by_a_success_in_a_later_run(
    kb: KnowledgeBaseV2, store: BaseStore
) -> None:
    rag = make_rag_strategy("v2")
    rag.generate_knowledge(kb, [(STD5, code("bad"), crash("KeyError: 'close'"))], run_id="stage1")
    assert _fixes_for(kb, "stage2") == []  # failed, never fixed yet
    rag.generate_knowledge(kb, [(STD5, code("good"), ok())], run_id="stage2")
    assert _fixes_for(kb, "stage3") == [("bad", "good")]
    again = open_kb(store=store, version="v2", embedder="hashing")  # rebuilt from the records
    assert _fixes_for(again, "stage3") == [("bad", "good")]


def test_a_failure_after_the_task_was_solved_links_to_that_success(kb: KnowledgeBaseV2) -> None:
    rag = make_rag_strategy("v2")
    rag.generate_knowledge(kb, [(STD5, code("good"), ok())], run_id="stage1")
    rag.generate_knowledge(kb, [(STD5, code("bad2"), crash("KeyError: 'open'"))], run_id="stage2")
    assert _fixes_for(kb, "stage3") == [("bad2", "good")]
