"""LLMCoder: prompts an OpenAI-compatible model with the task and its knowledge."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from costeer_lab.coders._base import AbstractCoder, CoderResult
from costeer_lab.coders._extract import extract_code
from costeer_lab.coders._prompts import build_completion_prompt, build_prompt, function_stub
from costeer_lab.errors import ConfigurationError, did_you_mean
from costeer_lab.llm import CachedResponse, CacheMode, LLMResponseCache, ModelClient
from costeer_lab.records import QueriedKnowledge, SingleFeedback, Task, Workspace
from costeer_lab.settings import LLMSettings, get_settings

if TYPE_CHECKING:
    from costeer_lab.store._base import BaseStore

__all__ = ["LLMCoder"]


def _failure_workspace(task: Task, reason: str, reply: str) -> Workspace:
    quoted = "\n".join(f"# | {line}" for line in reply.strip().splitlines()[:40]) or "# | (empty)"
    code = (
        f"# costeer_lab: no code could be extracted from the model reply for {task.name!r}.\n"
        f"# reason: {reason}\n# reply (first lines):\n{quoted}\n"
        f"raise SystemExit({('LLMCoder: the model reply contained no code: ' + reason)!r})\n"
    )
    return Workspace({"main.py": code})


class LLMCoder(AbstractCoder):
    """Implements tasks with a model behind any OpenAI-compatible endpoint.

    With ``api="chat"`` (default) the prompt holds the task contract (system message), the task
    and its retrieved knowledge (similar successful implementations, component matches, former
    attempts with feedback, error fixes) and the last feedback; the reply's code is found with
    :func:`~costeer_lab.coders.extract_code`. With ``api="completions"`` (base models) the
    prompt is code the model continues (:func:`~costeer_lab.coders._prompts.\
build_completion_prompt`). A reply without code becomes a workspace that exits with the reason
    (the evaluator turns it into feedback), not an exception.

    Every request goes through one :class:`~costeer_lab.llm.ModelClient`: retries, the
    mapping of endpoint failures to :class:`~costeer_lab.errors.EndpointError` (an
    infrastructure error: the evolution loop never records it as an attempt) and the response
    cache. With a ``store``, responses are cached (``cache_mode``): ``read_write`` records and
    reuses them, ``replay_only`` reproduces a recorded run with no network and raises
    :class:`~costeer_lab.errors.ReplayMissError` on a miss. A store given as a URL is opened
    once per thread; a store object must only be used from one thread.

    Common random numbers: the request ``seed`` (when ``send_seed``) is the ``stream`` the
    evolution loop passes for each (run seed, task, attempt) — the same in every arm — else
    ``settings.seed``.

    Args:
        settings: model, endpoint, retries and prompt sizes (default: the ``llm`` settings).
        store: a store or store URL for the response cache; ``None`` disables caching.
        **overrides: fields of :class:`LLMSettings` (``model="gpt-4o"``, ``cache_mode=…``).

    Example:
        >>> coder = LLMCoder(model="gpt-4o-mini", base_url="http://127.0.0.1:8000/v1")
        >>> coder.to_config()["model"]
        'gpt-4o-mini'
    """

    name = "llm"

    def __init__(
        self,
        settings: LLMSettings | None = None,
        *,
        store: BaseStore | str | None = None,
        **overrides: Any,
    ) -> None:
        base = settings if settings is not None else get_settings().llm
        unknown = sorted(set(overrides) - set(LLMSettings.model_fields))
        if unknown:
            raise ConfigurationError(
                f"unknown LLMCoder setting(s) {unknown}; "
                + did_you_mean(unknown[0], list(LLMSettings.model_fields))
            )
        try:
            self.settings = LLMSettings.model_validate({**base.model_dump(), **overrides})
        except ValueError as exc:  # pydantic ValidationError is a ValueError
            raise ConfigurationError(f"invalid LLMCoder settings {overrides!r}: {exc}") from exc
        self.mode = CacheMode(self.settings.cache_mode)
        self._store = store
        if isinstance(store, str):
            from costeer_lab.store import get_store

            cache: Any = functools.partial(get_store, store)
        else:
            cache = store
        self.client = ModelClient.from_llm_settings(self.settings, cache=cache, purpose="LLMCoder")

    # -- plumbing ---------------------------------------------------------------------------------
    @property
    def cache(self) -> LLMResponseCache | None:
        """The response cache of the calling thread (``None`` without a store or with mode off)."""
        return self.client.cache

    def _params(self, stream: int | None = None) -> dict[str, Any]:
        s = self.settings
        param = "max_tokens" if s.api == "completions" else s.max_tokens_param
        params: dict[str, Any] = {"temperature": s.temperature, param: s.max_tokens}
        if s.send_seed:
            params["seed"] = s.seed if stream is None else stream
        return params

    def check(self) -> None:
        """Probe the endpoint and the model (:meth:`ModelClient.check`); raises
        :class:`~costeer_lab.errors.EndpointError` or a ``ConfigurationError`` (no key)."""
        self.client.check(self.settings.api, max_tokens_param=self.settings.max_tokens_param)

    # -- the coder ------------------------------------------------------------------------
    def complete(
        self, messages: list[dict[str, str]], *, stream: int | None = None
    ) -> tuple[CachedResponse, bool]:
        """One chat completion through the cache: ``(response, came_from_cache)``.

        Raises:
            ReplayMissError: ``replay_only`` and the request was never recorded.
            EndpointError: the endpoint refused the request or kept failing.
        """
        response = self.client.chat(messages, **self._params(stream))
        return response, response.from_cache

    def _implement(
        self,
        task: Task,
        queried_knowledge: QueriedKnowledge,
        last_feedback: SingleFeedback | None,
        *,
        stream: int | None = None,
    ) -> CoderResult:
        if self.settings.api == "completions":
            text, stop, used = build_completion_prompt(
                task, queried_knowledge, last_feedback, self.settings
            )
            response = self.client.complete(text, stop=stop, **self._params(stream))
            stub = function_stub(task)
            if stub is not None:
                workspace = Workspace({"main.py": stub + response.content})
                method, notes = "completion", "stub + completion"
            else:
                code = response.content.split("```", 1)[0].strip("\n")
                workspace = (
                    Workspace({"main.py": code + "\n"})
                    if code.strip()
                    else _failure_workspace(task, "empty completion", response.content)
                )
                method = "completion" if code.strip() else "none"
                notes = "code from completion" if code.strip() else "no code extracted"
        else:
            prompt = build_prompt(task, queried_knowledge, last_feedback, self.settings)
            response = self.client.chat([dict(m) for m in prompt.messages], **self._params(stream))
            used = prompt.used_knowledge_ids
            found = extract_code(response.content)
            method = found.method
            if found.code is not None:
                workspace = Workspace({"main.py": found.code})
                notes = f"code from {found.method}" + (f"; {found.reason}" if found.reason else "")
            else:
                workspace = _failure_workspace(task, found.reason, response.content)
                notes = f"no code extracted: {found.reason}"
        cached = response.from_cache
        return CoderResult(
            workspace=workspace,
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
            cost_usd=self.settings.cost_usd(response.prompt_tokens, response.completion_tokens),
            used_knowledge_ids=tuple(used),
            llm_calls=0 if cached else 1,
            cache_hits=1 if cached else 0,
            strategy="llm",
            notes=notes,
            extra={"extraction": method, "finish_reason": response.finish_reason},
        )

    def close(self) -> None:
        """Close the calling thread's HTTP client and the store it opened from a URL.

        Idempotent; the coder reopens them when used again. (SQLite connections can only be
        closed by the thread that opened them; other threads' are closed when collected.)
        """
        self.client.close()

    def __enter__(self) -> LLMCoder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def to_config(self, *, include_secrets: bool = False) -> dict[str, Any]:
        """``{"name": "llm", "store": url | None, **LLMSettings fields}`` (no API key unless
        ``include_secrets``)."""
        cfg: dict[str, Any] = {"name": self.name}
        cfg.update(self.settings.model_dump(mode="json"))
        cfg["prices"] = {k: list(v) for k, v in self.settings.prices.items()}
        if not include_secrets:
            cfg.pop("api_key", None)
        store = self._store
        cfg["store"] = store if isinstance(store, str) or store is None else store.url
        return cfg
