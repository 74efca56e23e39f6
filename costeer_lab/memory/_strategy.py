"""The "pattern memory" arm of the evolution loop: a RAG strategy backed by the memory.

Per step and task, :meth:`MemoryStrategy.query` asks the :class:`PatternMemory` for patterns
similar to the task (``threshold``/``limit``; usage counted) and hands them to the coder as
similar successful implementations; after a failed attempt it asks the :class:`FailureMemory`
for solved failures similar to the last error and hands them over as error fixes.
:meth:`MemoryStrategy.generate_knowledge` then learns from the step: a successful
implementation becomes a pattern (its source task and workspace kept as metadata, so a coder
can adapt it) and solves the task's open failures; each error fingerprint of a failed attempt
becomes a failure (the skip rule of the error fingerprints applies); every pattern that was
handed to the coder for the attempt gets its outcome recorded (success when retrieved).

Knowledge ids are the memory ids (``pattern:…``, ``failure:…``), so the results table can tell
memory hits and memory use apart from other knowledge.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from costeer_lab.errors import InvalidInputError, MemoryRefusedError
from costeer_lab.memory._failure import FailureMatch
from costeer_lab.memory._gate import check_code_security
from costeer_lab.memory._memory import Memory
from costeer_lab.memory._pattern import PatternMatch, pattern_text
from costeer_lab.records import (
    ErrorFix,
    Knowledge,
    QueriedKnowledge,
    ScoredKnowledge,
    SingleFeedback,
    Task,
    Workspace,
)
from costeer_lab.store import BaseStore

__all__ = [
    "FAILURE_PREFIX",
    "PATTERN_PREFIX",
    "LoopMemory",
    "MemoryStrategy",
    "memory_arm",
    "task_pattern",
]

PATTERN_PREFIX = "pattern:"
FAILURE_PREFIX = "failure:"


def _problem_type(task: Task) -> str:
    return task.category or "task"


def _task_text(task: Task) -> str:
    return "\n".join(p for p in (task.name, task.description, task.formulation) if p)


def task_pattern(task: Task, workspace: Workspace) -> dict[str, Any]:
    """The :meth:`PatternMemory.store_patterns` item of a task's working implementation.

    Example:
        >>> t = Task("s/1", "add", "add two numbers", category="arith")
        >>> item = task_pattern(t, Workspace({"main.py": "def add(a, b):\\n    return a + b\\n"}))
        >>> item["problem_type"], item["description"]
        ('arith', 'add\\nadd two numbers')
    """
    return {
        "problem_type": _problem_type(task),
        "code": workspace.code,
        "description": _task_text(task),
        "metadata": {"task": task.to_dict(), "workspace": workspace.to_dict()},
    }


class LoopMemory:
    """What the loop holds as its knowledge base in the memory arm: the memory and its size."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def stats(self) -> dict[str, int]:
        """``{"nodes.patterns": n, "nodes.failures": m}`` (the loop's ``kb_nodes`` column)."""
        return {
            "nodes.patterns": len(self.memory.patterns),
            "nodes.failures": len(self.memory.failures),
        }

    def add_seed_knowledge(self, knowledge: Sequence[Knowledge]) -> list[str]:
        """Store ground-truth implementations as patterns (seed knowledge); returns their ids.

        A ground truth the write gate's static check flags (HumanEval/160 ``eval``-s its input)
        is not stored as a pattern (logged), so one flagged seed does not refuse the others.
        """
        items = []
        for k in knowledge:
            item = task_pattern(k.task, k.implementation)
            found = check_code_security(item["code"]) if item["code"].strip() else []
            if found:
                logging.getLogger(__name__).info(
                    "pattern memory: seed %r not stored: %s", k.task.id, found[0].describe()
                )
                continue
            items.append(item)
        return self.memory.patterns.store_patterns(items)

    def close(self) -> None:
        """Nothing to release: the loop owns the store."""


def _pattern_knowledge(match: PatternMatch) -> Knowledge:
    meta = match.metadata
    if "task" in meta and "workspace" in meta:
        task, ws = Task.from_dict(meta["task"]), Workspace.from_dict(meta["workspace"])
    else:
        task = Task(match.id, match.problem_type, match.description, category=match.problem_type)
        ws = Workspace({"main.py": match.code})
    return Knowledge(task, ws, SingleFeedback("pattern memory", final_decision=True), id=match.id)


def _fix_knowledge(match: FailureMatch) -> ErrorFix:
    task = Task(match.task_id or match.id, match.task_id or "failure", match.fingerprint)
    failed = Knowledge(
        task,
        Workspace({"main.py": match.code_context}),
        SingleFeedback(match.error_message, final_decision=False),
        id=match.id,
    )
    fixed = Knowledge(
        task,
        Workspace({"main.py": match.solution}),
        SingleFeedback("solved", final_decision=True),
        id=match.id,
    )
    return ErrorFix(match.fingerprint, match.error_message, failed, fixed, match.similarity)


class MemoryStrategy:
    """A RAG strategy (the loop's ``RAGLike``) over a :class:`LoopMemory`.

    Args:
        threshold: pattern similarity threshold, or ``"calibrated"`` (the embedder's; ``None``:
            ``settings.memory.pattern_threshold``, calibrated by default).
        failure_threshold: failure similarity threshold (``None``: the settings' default).
        limit: patterns / failures per task and query (``None``: the settings' default).
    """

    query_kinds = ("similar", "error")

    def __init__(
        self,
        *,
        threshold: float | str | None = None,
        failure_threshold: float | None = None,
        limit: int | None = None,
    ) -> None:
        self.threshold = threshold
        self.failure_threshold = failure_threshold
        self.limit = limit
        self._handed: dict[tuple[str, str], list[str]] = {}
        self._attempt: dict[str, int] = {}

    def query(
        self,
        kb: LoopMemory,
        tasks: Sequence[Task],
        last_feedback: Mapping[str, SingleFeedback | None],
        *,
        run_id: str,
        attempt: int,
    ) -> QueriedKnowledge:
        """Similar patterns for every task; solved similar failures after a failed attempt."""
        memory = kb.memory
        self._attempt[run_id] = attempt
        similar: dict[str, tuple[ScoredKnowledge, ...]] = {}
        fixes: dict[str, tuple[ErrorFix, ...]] = {}
        for task in tasks:
            hits = memory.patterns.search_patterns(
                pattern_text(_problem_type(task), _task_text(task)), self.threshold, self.limit
            )
            self._handed[(run_id, task.id)] = [h.id for h in hits]
            similar[task.id] = tuple(
                ScoredKnowledge(_pattern_knowledge(h), h.similarity) for h in hits
            )
            last = last_feedback.get(task.id)
            if last is None or last.succeeded or not last.error_fingerprints:
                continue
            found: dict[str, ErrorFix] = {}
            for fp in last.error_fingerprints:
                for m in memory.failures.search_similar_failures(
                    fp, self.failure_threshold, self.limit
                ):
                    if m.task_id != task.id:
                        found.setdefault(m.id, _fix_knowledge(m))
            fixes[task.id] = tuple(found.values())
        return QueriedKnowledge(similar_successful=similar, error_fixes=fixes)

    def generate_knowledge(
        self,
        kb: LoopMemory,
        trace: Sequence[tuple[Task, Workspace, SingleFeedback]],
        *,
        run_id: str,
    ) -> None:
        """Learn from one step: outcomes of handed patterns, new patterns, failures, solutions."""
        memory = kb.memory
        attempt = self._attempt.get(run_id, 0)
        for task, ws, fb in trace:
            for pid in self._handed.pop((run_id, task.id), []):
                memory.patterns.record_outcome(pid, fb.succeeded)
            if fb.succeeded:
                if not ws.code.strip():
                    continue
                # unparsable or holding a credential: not a pattern; the run goes on
                with suppress(MemoryRefusedError, InvalidInputError):
                    memory.patterns.store_patterns([task_pattern(task, ws)])
                with suppress(MemoryRefusedError):
                    for fid in memory.failures.open_failures(task.id):
                        memory.failures.update_solution(fid, ws.code)
                continue
            for fp in dict.fromkeys(fb.error_fingerprints):
                with suppress(MemoryRefusedError):
                    memory.failures.store_failure("", fp, ws.code, task.id, attempt)


def memory_arm(
    store: BaseStore | str | Path, *, embedder: str | None = None, **options: Any
) -> tuple[LoopMemory, MemoryStrategy]:
    """The knowledge base and RAG strategy of a "pattern memory" arm on ``store``.

    Args:
        store: the arm's store (object or URL); the loop keeps owning it.
        embedder: embedder id (``None``: the settings').
        options: :class:`MemoryStrategy` arguments (``threshold``, ``failure_threshold``,
            ``limit``) — an arm's ``rag_options``.

    Example:
        >>> from costeer_lab.store import get_store
        >>> kb, rag = memory_arm(get_store(":memory:"), embedder="hashing", threshold=0.5)
        >>> rag.threshold, kb.stats()
        (0.5, {'nodes.patterns': 0, 'nodes.failures': 0})
    """
    from costeer_lab.memory._memory import open_memory

    return LoopMemory(open_memory(store, embedder=embedder)), MemoryStrategy(**options)
