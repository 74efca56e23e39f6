"""Every part plugged into the loop and the runner satisfies its protocol.

The annotated assignments are the check: ``mypy --strict`` (``make typecheck``) verifies each
implementation against the protocol it is plugged in as, and a ``# type: ignore`` on a pairing
that must be refused fails the type check if the protocol ever stops refusing it
(``warn_unused_ignores``). At run time the tests build the parts cheaply and call the protocol
members the loop and the runner call.
"""

from __future__ import annotations

from concurrent.futures import Executor

from costeer_lab.evaluate import MultiEvaluator
from costeer_lab.evolve import (
    KnowledgeBaseLike,
    RAGLike,
    SeedableKnowledgeBase,
    StepEvaluator,
    make_executor,
)
from costeer_lab.evolve._agent import kb_size
from costeer_lab.knowledge import (
    KnowledgeBaseV1,
    KnowledgeBaseV2,
    RAGStrategyV1,
    RAGStrategyV2,
    open_kb,
)
from costeer_lab.memory import LoopMemory, MemoryStrategy, memory_arm
from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace
from costeer_lab.store import get_store
from costeer_lab.suites import Suite, SuiteLike, load_suite


def _seed() -> list[Knowledge]:
    task = Task("t/1", "add", "Add two numbers.", category="arith")
    code = Workspace({"main.py": "def add(a, b):\n    return a + b\n"})
    return [Knowledge(task, code, SingleFeedback("gt", final_decision=True), id="seed:t/1")]


def test_knowledge_bases_are_seedable_knowledge_bases() -> None:
    kb1: SeedableKnowledgeBase = open_kb(get_store(":memory:"), "v1", "hashing")
    kb2: SeedableKnowledgeBase = open_kb(get_store(":memory:"), "v2", "hashing")
    memory, _ = memory_arm(get_store(":memory:"), embedder="hashing")
    kb3: SeedableKnowledgeBase = memory
    for kb in (kb1, kb2, kb3):
        kb.add_seed_knowledge(_seed())
        assert kb_size(kb) >= 1
        kb.close()
    small: KnowledgeBaseLike = kb2  # the loop needs only the stats
    assert small.stats()


def test_rag_strategies_pair_with_their_knowledge_base() -> None:
    v1: RAGLike[KnowledgeBaseV1] = RAGStrategyV1()
    v2: RAGLike[KnowledgeBaseV2] = RAGStrategyV2()
    mem: RAGLike[LoopMemory] = MemoryStrategy()
    wrong: RAGLike[KnowledgeBaseV2] = RAGStrategyV1()  # type: ignore[assignment]
    assert {type(v1), type(v2), type(mem), type(wrong)} == {
        RAGStrategyV1,
        RAGStrategyV2,
        MemoryStrategy,
    }
    kb = open_kb(get_store(":memory:"), "v2", "hashing")
    kb.add_seed_knowledge(_seed())
    qk = v2.query(kb, [Task("t/2", "sum", "Add numbers.")], {}, run_id="r", attempt=1)
    assert [s.knowledge.task.id for s in qk.similar_successful["t/2"]] == ["t/1"]
    kb.close()


def test_suites_evaluators_and_executors() -> None:
    suite: SuiteLike = load_suite("humaneval", limit=2)
    assert isinstance(suite, Suite) and suite.split("train") == ["humaneval/0"]
    evaluator: StepEvaluator = MultiEvaluator(suite.evaluators(critic=False), kind="thread")
    executor: Executor = make_executor("serial")
    try:
        assert executor.submit(len, suite.task_ids).result() == 2
    finally:
        executor.shutdown()
        assert isinstance(evaluator, MultiEvaluator)
        evaluator.close()
