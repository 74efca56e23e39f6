"""The coder contract: ``implement(task, queried_knowledge, last_feedback) -> Workspace``."""

from __future__ import annotations

import abc
import functools
import inspect
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from costeer_lab.records import QueriedKnowledge, SingleFeedback, Task, Workspace

__all__ = ["AbstractCoder", "BaseCoder", "CoderResult"]


@runtime_checkable
class BaseCoder(Protocol):
    """Anything that turns a task (plus retrieved knowledge and the last feedback) into code.

    ``queried_knowledge`` is what the RAG strategy returned for the whole evolution step; a coder
    reads the entries of its task (``qk.similar_successful[task.id]``, ``qk.former_traces[...]``,
    ``qk.error_fixes[...]``, ``qk.component_matches[...]``), each of which may be missing. A coder
    never sees ground truth and must not mutate its arguments.

    Example:
        >>> from costeer_lab.coders import ReuseCoder
        >>> isinstance(ReuseCoder(), BaseCoder)
        True
    """

    def implement(
        self,
        task: Task,
        queried_knowledge: QueriedKnowledge,
        last_feedback: SingleFeedback | None,
    ) -> Workspace: ...


@dataclass(frozen=True)
class CoderResult:
    """One :meth:`AbstractCoder.implement_with_info` call: the workspace and its costs.

    Attributes:
        workspace: the implementation.
        prompt_tokens / completion_tokens: tokens of the chat calls (0 for offline coders); on a
            cache hit, the tokens of the recorded call, so a replay reports the same numbers.
        cost_usd: price of those tokens (see ``LLMSettings.prices``).
        used_knowledge_ids: ids of the knowledge items the coder used (shown in the prompt, or
            adapted), in the order used.
        duration_s: wall time of the call.
        llm_calls / cache_hits: chat requests made over the network / answered from the cache.
        strategy: how the code was made (``llm``, ``adapted``, ``known_fix``, ``generic``, …).
        notes: a short human-readable account (what was adapted, why extraction failed, …).
    """

    workspace: Workspace
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    used_knowledge_ids: tuple[str, ...] = ()
    duration_s: float = 0.0
    llm_calls: int = 0
    cache_hits: int = 0
    strategy: str = ""
    notes: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace.to_dict(),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "used_knowledge_ids": list(self.used_knowledge_ids),
            "duration_s": self.duration_s,
            "llm_calls": self.llm_calls,
            "cache_hits": self.cache_hits,
            "strategy": self.strategy,
            "notes": self.notes,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CoderResult:
        return cls(
            workspace=Workspace.from_dict(d["workspace"]),
            prompt_tokens=int(d.get("prompt_tokens", 0)),
            completion_tokens=int(d.get("completion_tokens", 0)),
            cost_usd=float(d.get("cost_usd", 0.0)),
            used_knowledge_ids=tuple(d.get("used_knowledge_ids", ())),
            duration_s=float(d.get("duration_s", 0.0)),
            llm_calls=int(d.get("llm_calls", 0)),
            cache_hits=int(d.get("cache_hits", 0)),
            strategy=str(d.get("strategy", "")),
            notes=str(d.get("notes", "")),
            extra=dict(d.get("extra", {})),
        )


class AbstractCoder(abc.ABC):
    """Optional base class of the built-in coders.

    Subclasses implement :meth:`_implement` (returning a :class:`CoderResult` without the
    duration) and :meth:`to_config`; :meth:`implement_with_info` times the call and
    :meth:`implement` returns only the workspace. A coder pickles as its config (no live
    clients, no stores), so it can be handed to a process pool; with ``include_secrets=False``
    the config is safe to write to a results file.
    """

    #: Registry name (``"reuse"``, ``"llm"``).
    name: str = ""

    def implement(
        self,
        task: Task,
        queried_knowledge: QueriedKnowledge,
        last_feedback: SingleFeedback | None,
    ) -> Workspace:
        """Implement ``task``; see :class:`BaseCoder`."""
        return self.implement_with_info(task, queried_knowledge, last_feedback).workspace

    def implement_with_info(
        self,
        task: Task,
        queried_knowledge: QueriedKnowledge,
        last_feedback: SingleFeedback | None,
        *,
        stream: int | None = None,
    ) -> CoderResult:
        """Implement ``task`` and report tokens, cost, duration and the knowledge used.

        ``stream`` is the random stream of this (seed, task, attempt) — common random numbers:
        the evolution loop derives it the same way in every arm (``evolve.crn_stream``), so two
        arms that make the same request for the same attempt draw the same sample. A coder with
        random choices uses it (the LLM coder sends it as the request ``seed``); others may
        ignore it (a subclass whose ``_implement`` takes no ``stream`` never receives it).
        """
        start = time.perf_counter()
        if stream is not None and _takes_stream(type(self)):
            result = self._implement(task, queried_knowledge, last_feedback, stream=stream)
        else:
            result = self._implement(task, queried_knowledge, last_feedback)
        return replace(result, duration_s=time.perf_counter() - start)

    @abc.abstractmethod
    def _implement(
        self,
        task: Task,
        queried_knowledge: QueriedKnowledge,
        last_feedback: SingleFeedback | None,
        *,
        stream: int | None = None,
    ) -> CoderResult: ...

    @abc.abstractmethod
    def to_config(self, *, include_secrets: bool = False) -> dict[str, Any]:
        """A JSON-able dict such that ``coder_from_config(cfg)`` rebuilds an equivalent coder."""

    def __reduce__(self) -> tuple[Any, tuple[type[AbstractCoder], dict[str, Any]]]:
        return _from_config, (type(self), self.to_config(include_secrets=True))


@functools.cache
def _takes_stream(cls: type[AbstractCoder]) -> bool:
    """Whether ``cls._implement`` accepts the ``stream`` keyword (older subclasses do not)."""
    params = inspect.signature(cls._implement).parameters
    return "stream" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _from_config(cls: type[AbstractCoder], config: Mapping[str, Any]) -> AbstractCoder:
    """Unpickle a coder: its class called with its config (what the registry's factories do)."""
    return cls(**{k: v for k, v in config.items() if k != "name"})
