"""EvolvingStrategy: choose the tasks to work on and implement them in parallel."""

from __future__ import annotations

import concurrent.futures as cf
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from costeer_lab.records import QueriedKnowledge, SingleFeedback, Task, Workspace

if TYPE_CHECKING:
    from costeer_lab.coders import AbstractCoder
    from costeer_lab.evolve._documents import DocumentContext

__all__ = ["EvolvingStrategy", "ImplementOutcome", "knowledge_for_task"]


def knowledge_for_task(qk: QueriedKnowledge, task_id: str) -> QueriedKnowledge:
    """The part of ``qk`` that concerns one task: what its coder may see, nothing more."""

    def pick(m: Mapping[str, Any]) -> dict[str, Any]:
        return {task_id: m[task_id]} if task_id in m else {}

    return QueriedKnowledge(
        success_task_to_knowledge=pick(qk.success_task_to_knowledge),
        failed_task_info_set=frozenset({task_id} & qk.failed_task_info_set),
        former_traces=pick(qk.former_traces),
        similar_successful=pick(qk.similar_successful),
        error_fixes=pick(qk.error_fixes),
        component_matches=pick(qk.component_matches),
    )


@dataclass(frozen=True)
class ImplementOutcome:
    """What one coder call produced, plus its accounting."""

    task_id: str
    workspace: Workspace
    coder_s: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    used_knowledge_ids: tuple[str, ...] = ()
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: How the coder made the code (``adapted``, ``known_fix``, ``generic``, ``llm``, …).
    strategy: str = ""
    #: The coder's short account of what it did and why (what was adapted from which task).
    notes: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "workspace": self.workspace.to_dict(),
            "coder_s": self.coder_s,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "used_knowledge_ids": list(self.used_knowledge_ids),
            "error": self.error,
            "strategy": self.strategy,
            "notes": self.notes,
            "coder_extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ImplementOutcome:
        return cls(
            task_id=d["task_id"],
            workspace=Workspace.from_dict(d["workspace"]),
            coder_s=float(d["coder_s"]),
            prompt_tokens=int(d.get("prompt_tokens", 0)),
            completion_tokens=int(d.get("completion_tokens", 0)),
            cost_usd=float(d.get("cost_usd", 0.0)),
            used_knowledge_ids=tuple(d.get("used_knowledge_ids", ())),
            error=d.get("error"),
            extra=dict(d.get("coder_extra", {})),
            strategy=str(d.get("strategy", "")),
            notes=str(d.get("notes", "")),
        )


def _plain(extra: Any) -> dict[str, Any]:
    """The coder's ``extra`` as JSON data (step records are JSON); unencodable values as text."""
    try:
        return dict(json.loads(json.dumps(dict(extra or {}), default=str)))
    except (TypeError, ValueError):
        return {}


@lru_cache(maxsize=8)
def _coder(config_json: str) -> AbstractCoder:
    from costeer_lab.coders import coder_from_config

    return coder_from_config(json.loads(config_json))


def implement_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one coder call from a JSON payload (module-level so any executor can ship it).

    The payload holds the coder config, the task, the task's own queried knowledge and its last
    feedback — never a ground truth. A coder exception becomes an empty workspace with the
    error recorded, so one bad call cannot stop the run.
    """
    task = Task.from_dict(payload["task"])
    qk = QueriedKnowledge.from_dict(payload["knowledge"])
    fb = payload.get("last_feedback")
    last = SingleFeedback.from_dict(fb) if fb is not None else None
    t0 = time.perf_counter()
    try:
        coder = _coder(json.dumps(payload["coder"], sort_keys=True))
        result = coder.implement_with_info(task, qk, last)
    except Exception as exc:  # the coder is a plug-in: its failure is feedback, not a crash
        return ImplementOutcome(
            task.id,
            Workspace({"main.py": f"# coder failed: {type(exc).__name__}: {exc}\n"}),
            time.perf_counter() - t0,
            error=f"{type(exc).__name__}: {exc}",
            strategy="coder_error",
            notes=f"the coder raised {type(exc).__name__}",
        ).to_dict()
    return ImplementOutcome(
        task_id=task.id,
        workspace=result.workspace,
        coder_s=time.perf_counter() - t0,
        prompt_tokens=int(result.prompt_tokens),
        completion_tokens=int(result.completion_tokens),
        cost_usd=float(result.cost_usd),
        used_knowledge_ids=tuple(result.used_knowledge_ids),
        extra=_plain(getattr(result, "extra", {})),
        strategy=str(result.strategy),
        notes=str(result.notes),
    ).to_dict()


class EvolvingStrategy:
    """Selects tasks and implements them in parallel through any ``concurrent.futures.Executor``.

    Succeeded tasks keep (reuse) their successful implementation; tasks past ``max_trials`` (or
    reported failed by the RAG strategy) are skipped. The coder is described by a JSON-able
    config (``{"name": "reuse"}``, ``{"name": "llm", "model": …}``) and built inside each worker,
    so nothing but plain JSON data crosses process boundaries.

    Example:
        >>> s = EvolvingStrategy({"name": "reuse"}, max_trials=5)
        >>> s.max_trials
        5
    """

    def __init__(
        self,
        coder: Mapping[str, Any],
        *,
        executor: cf.Executor | None = None,
        max_trials: int = 10,
        documents: DocumentContext | None = None,
    ) -> None:
        self.coder_config = dict(coder)
        self.executor = executor
        self.max_trials = max_trials
        #: Optional documentation retrieval added to each task before the coder sees it.
        self.documents = documents

    def select(
        self,
        task_ids: Sequence[str],
        succeeded: set[str],
        trials: Mapping[str, int],
        qk: QueriedKnowledge,
    ) -> list[str]:
        """Task ids to work on this step, in the given order."""
        return [
            t
            for t in task_ids
            if t not in succeeded
            and trials.get(t, 0) < self.max_trials
            and t not in qk.failed_task_info_set
        ]

    def implement(
        self,
        tasks: Sequence[Task],
        qk: QueriedKnowledge,
        last_feedback: Mapping[str, SingleFeedback | None],
        *,
        seed: int = 0,
        attempt: int = 1,
    ) -> list[ImplementOutcome]:
        """Implement ``tasks`` (in parallel when an executor is set); results keep task order."""
        coder = {**self.coder_config, "seed": seed}
        payloads = []
        for t in tasks:
            fb = last_feedback.get(t.id)
            if self.documents is not None:
                t = self.documents.attach(t)
            payloads.append(
                {
                    "coder": coder,
                    "task": t.to_dict(),
                    "knowledge": knowledge_for_task(qk, t.id).to_dict(),
                    "last_feedback": None if fb is None else fb.to_dict(),
                    "attempt": attempt,
                }
            )
        if self.executor is None or len(payloads) <= 1:
            raw = [implement_job(p) for p in payloads]
        else:
            raw = list(self.executor.map(implement_job, payloads))
        return [ImplementOutcome.from_dict(r) for r in raw]
