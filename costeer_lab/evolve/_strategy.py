"""EvolvingStrategy: choose the tasks to work on and implement them in parallel."""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from costeer_lab.errors import (
    CONFIGURATION_KINDS,
    ConfigurationError,
    EndpointError,
    ReplayMissError,
)
from costeer_lab.records import QueriedKnowledge, SingleFeedback, Task, Workspace

if TYPE_CHECKING:
    from costeer_lab.coders import AbstractCoder
    from costeer_lab.evolve._documents import DocumentContext

__all__ = [
    "EvolvingStrategy",
    "ImplementOutcome",
    "crn_stream",
    "infra_exception",
    "is_fatal",
    "knowledge_for_task",
]


def crn_stream(seed: int, task_id: str, attempt: int) -> int:
    """The random stream of one (run seed, task, attempt): common random numbers.

    Every arm of an experiment derives it the same way, so the k-th attempt at a task draws
    from the same stream in every arm (the LLM coder sends it as the request ``seed``), and a
    contrast between arms measures the treatment, not sampling luck. A 31-bit int from sha256.

    Example:
        >>> crn_stream(0, "humaneval/1", 1) == crn_stream(0, "humaneval/1", 1)
        True
        >>> crn_stream(0, "humaneval/1", 1) != crn_stream(0, "humaneval/1", 2)
        True
        >>> 0 <= crn_stream(7, "t", 3) < 2**31
        True
    """
    digest = hashlib.sha256(f"crn:{seed}:{task_id}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


#: ``ImplementOutcome.infra_kind`` of errors that are not :class:`EndpointError`.
REPLAY_MISS, CONFIGURATION = "replay_miss", "configuration"


def infra_exception(kind: str, message: str, status: int | None = None) -> Exception:
    """The exception an infrastructure error of an outcome stands for (rebuilt in the parent
    process from the outcome's JSON).

    Example:
        >>> err = infra_exception("auth", "bad key", 401)
        >>> type(err).__name__, err.configuration
        ('EndpointError', True)
    """
    if kind == REPLAY_MISS:
        return ReplayMissError(message)
    if kind == CONFIGURATION:
        return ConfigurationError(message)
    return EndpointError(message, kind=kind, status=status)


def is_fatal(kind: str) -> bool:
    """Whether an infrastructure error of ``kind`` stops the run (retrying cannot help)."""
    return kind in (REPLAY_MISS, CONFIGURATION, *CONFIGURATION_KINDS)


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
    """What one coder call produced, plus its accounting.

    An infrastructure failure (the model endpoint, the configuration, a replay miss) has no
    workspace: ``infra_error`` is ``"<kind>: <message>"`` and the loop never evaluates it,
    never turns it into knowledge and never counts it as an attempt.
    """

    task_id: str
    workspace: Workspace | None
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
    #: ``"<kind>: <message>"`` of an infrastructure error (then ``workspace`` is ``None``).
    infra_error: str | None = None
    #: Its kind (an ``EndpointError`` kind, ``replay_miss`` or ``configuration``) and status.
    infra_kind: str | None = None
    infra_status: int | None = None

    @property
    def infra_message(self) -> str:
        """The infrastructure error's message without its kind prefix."""
        text = self.infra_error or ""
        prefix = f"{self.infra_kind}: "
        return text[len(prefix) :] if text.startswith(prefix) else text

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "workspace": None if self.workspace is None else self.workspace.to_dict(),
            "coder_s": self.coder_s,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "used_knowledge_ids": list(self.used_knowledge_ids),
            "error": self.error,
            "strategy": self.strategy,
            "notes": self.notes,
            "coder_extra": dict(self.extra),
            "infra_error": self.infra_error,
            "infra_kind": self.infra_kind,
            "infra_status": self.infra_status,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ImplementOutcome:
        return cls(
            task_id=d["task_id"],
            workspace=None if d["workspace"] is None else Workspace.from_dict(d["workspace"]),
            coder_s=float(d["coder_s"]),
            prompt_tokens=int(d.get("prompt_tokens", 0)),
            completion_tokens=int(d.get("completion_tokens", 0)),
            cost_usd=float(d.get("cost_usd", 0.0)),
            used_knowledge_ids=tuple(d.get("used_knowledge_ids", ())),
            error=d.get("error"),
            extra=dict(d.get("coder_extra", {})),
            strategy=str(d.get("strategy", "")),
            notes=str(d.get("notes", "")),
            infra_error=d.get("infra_error"),
            infra_kind=d.get("infra_kind"),
            infra_status=d.get("infra_status"),
        )


def _plain(extra: Any) -> dict[str, Any]:
    """The coder's ``extra`` as JSON data (step records are JSON); unencodable values as text."""
    try:
        return dict(json.loads(json.dumps(dict(extra or {}), default=str)))
    except (TypeError, ValueError):
        return {}


def _takes_stream(coder: Any) -> bool:
    """Whether ``coder.implement_with_info`` accepts ``stream`` (coders not built on
    ``AbstractCoder`` may not)."""
    import inspect

    try:
        params = inspect.signature(coder.implement_with_info).parameters
    except (TypeError, ValueError):
        return False
    return "stream" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


@lru_cache(maxsize=8)
def _coder(config_json: str) -> AbstractCoder:
    from costeer_lab.coders import coder_from_config

    return coder_from_config(json.loads(config_json))


def implement_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one coder call from a JSON payload (module-level so any executor can ship it).

    The payload holds the coder config, the task, the task's own queried knowledge, its last
    feedback and its random ``stream`` (:func:`crn_stream`) — never a ground truth. An
    infrastructure error (:class:`EndpointError`, :class:`ReplayMissError`, a
    :class:`ConfigurationError`) becomes an outcome with ``infra_error`` and no workspace; any
    other coder exception becomes an empty workspace with the error recorded (feedback), so one
    bad call cannot stop the run.
    """
    task = Task.from_dict(payload["task"])
    qk = QueriedKnowledge.from_dict(payload["knowledge"])
    fb = payload.get("last_feedback")
    last = SingleFeedback.from_dict(fb) if fb is not None else None
    stream = payload.get("stream")
    t0 = time.perf_counter()
    try:
        coder = _coder(json.dumps(payload["coder"], sort_keys=True))
        if stream is not None and _takes_stream(coder):
            result = coder.implement_with_info(task, qk, last, stream=int(stream))
        else:
            result = coder.implement_with_info(task, qk, last)
    except (EndpointError, ReplayMissError, ConfigurationError) as exc:  # infrastructure
        if isinstance(exc, EndpointError):
            kind, status = exc.kind, exc.status
        else:
            kind = REPLAY_MISS if isinstance(exc, ReplayMissError) else CONFIGURATION
            status = None
        return ImplementOutcome(
            task.id,
            None,
            time.perf_counter() - t0,
            error=f"{type(exc).__name__}: {exc}",
            strategy="infra_error",
            notes=f"infrastructure error ({kind}); not an attempt",
            infra_error=f"{kind}: {exc}",
            infra_kind=kind,
            infra_status=status,
        ).to_dict()
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
        attempts: Mapping[str, int] | None = None,
    ) -> list[ImplementOutcome]:
        """Implement ``tasks`` (in parallel when an executor is set); results keep task order.

        ``attempts`` gives each task's attempt number (default: ``attempt`` for all); with
        ``seed`` it fixes the task's random stream, :func:`crn_stream` — the same in every
        arm of an experiment (common random numbers).
        """
        coder = {**self.coder_config, "seed": seed}
        payloads = []
        for t in tasks:
            fb = last_feedback.get(t.id)
            n = attempts.get(t.id, attempt) if attempts is not None else attempt
            if self.documents is not None:
                t = self.documents.attach(t)
            payloads.append(
                {
                    "coder": coder,
                    "task": t.to_dict(),
                    "knowledge": knowledge_for_task(qk, t.id).to_dict(),
                    "last_feedback": None if fb is None else fb.to_dict(),
                    "attempt": n,
                    "stream": crn_stream(seed, t.id, n),
                }
            )
        if self.executor is None or len(payloads) <= 1:
            raw = [implement_job(p) for p in payloads]
        else:
            raw = list(self.executor.map(implement_job, payloads))
        return [ImplementOutcome.from_dict(r) for r in raw]
