"""Evolution: EvolvingItem, EvolvingStrategy, EvoAgent and executors."""

from costeer_lab.evolve._agent import EvoAgent, RunState
from costeer_lab.evolve._context import TaskContextHook
from costeer_lab.evolve._documents import DocumentContext
from costeer_lab.evolve._executors import make_executor
from costeer_lab.evolve._item import EvolvingItem
from costeer_lab.evolve._protocols import (
    KnowledgeBaseLike,
    RAGLike,
    SeedableKnowledgeBase,
    StepEvaluator,
)
from costeer_lab.evolve._strategy import EvolvingStrategy, ImplementOutcome, crn_stream

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
    "StepEvaluator",
    "TaskContextHook",
    "crn_stream",
    "make_executor",
]
