"""Evolution: EvolvingItem, EvolvingStrategy, EvoAgent and executors."""

from costeer_lab.evolve._agent import EvoAgent, RunState, kb_size, retrieved_summary
from costeer_lab.evolve._context import TaskContextHook
from costeer_lab.evolve._documents import DocumentContext
from costeer_lab.evolve._executors import SerialExecutor, make_executor
from costeer_lab.evolve._item import EvolvingItem
from costeer_lab.evolve._protocols import (
    KnowledgeBaseLike,
    RAGLike,
    SeedableKnowledgeBase,
    StepEvaluator,
)
from costeer_lab.evolve._strategy import (
    EvolvingStrategy,
    ImplementOutcome,
    implement_job,
    knowledge_for_task,
)

__all__ = [
    "DocumentContext",
    "EvoAgent",
    "EvolvingItem",
    "EvolvingStrategy",
    "ImplementOutcome",
    "KnowledgeBaseLike",
    "RAGLike",
    "RunState",
    "SeedableKnowledgeBase",
    "SerialExecutor",
    "StepEvaluator",
    "TaskContextHook",
    "implement_job",
    "kb_size",
    "knowledge_for_task",
    "make_executor",
    "retrieved_summary",
]
