"""The joints of the evolution loop: what the loop and the runner need from the parts plugged in.

The parts are matched structurally (:class:`typing.Protocol`): the knowledge bases
(``KnowledgeBaseV1``/``V2``, the memory arm's ``LoopMemory``), the RAG strategies
(``RAGStrategyV1``/``V2``, ``MemoryStrategy``) and the evaluators (``MultiEvaluator``) live in
lower layers and do not import these protocols; ``tests/evolve/test_protocols.py`` checks under
``mypy --strict`` that each of them satisfies the protocol it is plugged in as.

A RAG strategy reads and writes one kind of knowledge base, so :class:`RAGLike` is generic in
it: ``RAGStrategyV2`` is a ``RAGLike[KnowledgeBaseV2]``, not a ``RAGLike[KnowledgeBaseV1]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

from costeer_lab.records import Knowledge, QueriedKnowledge, SingleFeedback, Task, Workspace

__all__ = ["KnowledgeBaseLike", "RAGLike", "SeedableKnowledgeBase", "StepEvaluator"]


class KnowledgeBaseLike(Protocol):
    """What the loop reads from a knowledge base: its size (the ``kb_nodes`` column)."""

    def stats(self) -> Mapping[str, int]:
        """Counts: ``nodes.<kind>`` entries (graph-like bases) or ``attempts`` and
        ``successful_tasks`` (``KnowledgeBaseV1``)."""
        ...


class SeedableKnowledgeBase(KnowledgeBaseLike, Protocol):
    """A knowledge base as the experiment runner opens it: seeded, evolved, then closed."""

    def add_seed_knowledge(self, items: Sequence[Knowledge], /) -> object:
        """Store ground-truth implementations (the seed knowledge); the result is ignored."""
        ...

    def close(self) -> None:
        """Release what the knowledge base opened (indexes, a store it owns)."""
        ...


KB_contra = TypeVar("KB_contra", bound=KnowledgeBaseLike, contravariant=True)


class RAGLike(Protocol[KB_contra]):
    """What the loop needs from a RAG strategy over knowledge bases of type ``KB_contra``."""

    def query(
        self,
        kb: KB_contra,
        tasks: Sequence[Task],
        last_feedback: Mapping[str, SingleFeedback | None],
        *,
        run_id: str,
        attempt: int,
    ) -> QueriedKnowledge:
        """Knowledge for one step of ``tasks`` (``attempt`` is the step number)."""
        ...

    def generate_knowledge(
        self,
        kb: KB_contra,
        trace: Sequence[tuple[Task, Workspace, SingleFeedback]],
        *,
        run_id: str,
    ) -> None:
        """Learn from one step: each ``(task, implementation, feedback)`` of it."""
        ...


class StepEvaluator(Protocol):
    """Evaluates one step: ``tasks[i]`` implemented by ``workspaces[i]`` against ``gts[i]``."""

    def evaluate_many(
        self,
        tasks: Sequence[Task],
        workspaces: Sequence[Workspace],
        gts: Sequence[Workspace | None],
    ) -> list[SingleFeedback]:
        """One feedback per task, in task order."""
        ...
