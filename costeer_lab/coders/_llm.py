"""LLMCoder: prompts an OpenAI-compatible chat endpoint with the task and its knowledge."""

from __future__ import annotations

import random
import threading
from typing import TYPE_CHECKING, Any

from costeer_lab._retry import call_with_retries, openai_retryable
from costeer_lab.coders._base import AbstractCoder, CoderResult
from costeer_lab.coders._cache import CachedResponse, CacheMode, LLMResponseCache, request_key
from costeer_lab.coders._extract import extract_code
from costeer_lab.coders._prompts import build_prompt
from costeer_lab.errors import ConfigurationError, LLMError, did_you_mean
from costeer_lab.records import QueriedKnowledge, SingleFeedback, Task, Workspace
from costeer_lab.settings import LLMSettings, get_settings
from costeer_lab.settings._llm import ResolvedEndpoint

if TYPE_CHECKING:
    import openai

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
    """Implements tasks with a chat model behind any OpenAI-compatible endpoint.

    The prompt holds the task contract (system message), the task and its retrieved knowledge
    (similar successful implementations, component matches, former attempts with feedback, error
    fixes) and the last feedback. The reply's code is found with
    :func:`~costeer_lab.coders.extract_code`; a reply without code becomes a workspace that
    exits with the reason (the evaluator turns it into feedback), not an exception.

    Retries 429/5xx/connection errors with exponential backoff and seeded jitter (the client's
    own retries are off). With a ``store``, responses are cached (``cache_mode``): ``read_write``
    records and reuses them, ``replay_only`` reproduces a recorded run with no network and raises
    :class:`~costeer_lab.errors.ReplayMissError` on a miss. A store given as a URL is opened once
    per thread; a store object must only be used from one thread.

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
        if store is None and self.mode is CacheMode.REPLAY_ONLY:
            raise ConfigurationError(
                "cache_mode='replay_only' needs a store holding the recorded responses; pass "
                "store='sqlite:///path.db'"
            )
        self._store = store
        self._local = threading.local()
        self._rng = random.Random(self.settings.seed)
        self._rng_lock = threading.Lock()

    # -- plumbing ---------------------------------------------------------------------------------
    @property
    def cache(self) -> LLMResponseCache | None:
        """The response cache of the calling thread (``None`` without a store or with mode off)."""
        if self._store is None or self.mode is CacheMode.OFF:
            return None
        cache: LLMResponseCache | None = getattr(self._local, "cache", None)
        if cache is None:
            if isinstance(self._store, str):
                from costeer_lab.store import get_store

                store = get_store(self._store)
            else:
                store = self._store
            cache = self._local.cache = LLMResponseCache(store, self.mode)
        return cache

    def _endpoint(self) -> ResolvedEndpoint:
        ep: ResolvedEndpoint | None = getattr(self._local, "endpoint", None)
        if ep is None:
            ep = self._local.endpoint = self.settings.resolve_endpoint(get_settings().openai)
        return ep

    def _client(self) -> openai.OpenAI:
        client: openai.OpenAI | None = getattr(self._local, "client", None)
        if client is None:
            import openai

            ep = self._endpoint()
            if not ep.api_key:
                raise ConfigurationError(
                    f"LLMCoder(model={self.settings.model!r}) has no API key: pass api_key=..., "
                    "set COSTEER_LAB_OPENAI__API_KEY or OPENAI_API_KEY, or use "
                    "cache_mode='replay_only' with a recorded store"
                )
            client = self._local.client = openai.OpenAI(
                api_key=ep.api_key, base_url=ep.base_url, timeout=ep.timeout_s, max_retries=0
            )
        return client

    def _params(self) -> dict[str, Any]:
        s = self.settings
        params: dict[str, Any] = {"temperature": s.temperature, s.max_tokens_param: s.max_tokens}
        if s.send_seed:
            params["seed"] = s.seed
        return params

    def _jitter(self) -> float:
        with self._rng_lock:
            return self._rng.random()

    def _chat(self, messages: list[dict[str, str]]) -> CachedResponse:
        import openai

        ep = self._endpoint()
        client = self._client()

        def send() -> Any:
            return client.chat.completions.create(
                model=self.settings.model,
                messages=messages,  # type: ignore[arg-type]
                **self._params(),
            )

        try:
            reply = call_with_retries(
                send,
                max_retries=ep.max_retries,
                backoff_initial_s=ep.backoff_initial_s,
                backoff_max_s=ep.backoff_max_s,
                jitter=self._jitter,
            )
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise LLMError(
                f"endpoint {ep.base_url or 'api.openai.com'} refused the API key for model "
                f"{self.settings.model!r} ({exc.status_code}): {exc.message}"
            ) from exc
        except openai.APIStatusError as exc:
            if not openai_retryable(exc):
                raise LLMError(
                    f"chat request for model {self.settings.model!r} failed with "
                    f"{exc.status_code}: {exc.message}"
                ) from exc
            raise LLMError(
                f"chat request for model {self.settings.model!r} still failed with "
                f"{exc.status_code} after {ep.max_retries} retries: {exc.message}"
            ) from exc
        except openai.APIConnectionError as exc:
            raise LLMError(
                f"cannot reach {ep.base_url or 'api.openai.com'} for model "
                f"{self.settings.model!r} after {ep.max_retries} retries: {exc.message}"
            ) from exc
        choice = reply.choices[0] if reply.choices else None
        content = (choice.message.content if choice is not None else None) or ""
        usage = reply.usage
        return CachedResponse(
            content=content,
            prompt_tokens=usage.prompt_tokens if usage is not None else 0,
            completion_tokens=usage.completion_tokens if usage is not None else 0,
            finish_reason=choice.finish_reason if choice is not None else None,
        )

    # -- the coder ------------------------------------------------------------------------
    def complete(self, messages: list[dict[str, str]]) -> tuple[CachedResponse, bool]:
        """One chat completion through the cache: ``(response, came_from_cache)``.

        Raises:
            ReplayMissError: ``replay_only`` and the request was never recorded.
            LLMError: the endpoint refused the request or kept failing.
        """
        cache = self.cache
        key = request_key(self.settings.model, messages, self._params())
        if cache is not None:
            hit = cache.get(key, self.settings.model)
            if hit is not None:
                return hit, True
        response = self._chat(messages)
        if cache is not None:
            cache.put(key, self.settings.model, response)
        return response, False

    def _implement(
        self, task: Task, queried_knowledge: QueriedKnowledge, last_feedback: SingleFeedback | None
    ) -> CoderResult:
        prompt = build_prompt(task, queried_knowledge, last_feedback, self.settings)
        response, cached = self.complete([dict(m) for m in prompt.messages])
        found = extract_code(response.content)
        if found.code is not None:
            workspace = Workspace({"main.py": found.code})
            notes = f"code from {found.method}" + (f"; {found.reason}" if found.reason else "")
        else:
            workspace = _failure_workspace(task, found.reason, response.content)
            notes = f"no code extracted: {found.reason}"
        return CoderResult(
            workspace=workspace,
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
            cost_usd=self.settings.cost_usd(response.prompt_tokens, response.completion_tokens),
            used_knowledge_ids=prompt.used_knowledge_ids,
            llm_calls=0 if cached else 1,
            cache_hits=1 if cached else 0,
            strategy="llm",
            notes=notes,
            extra={"extraction": found.method, "finish_reason": response.finish_reason},
        )

    def close(self) -> None:
        """Close the calling thread's HTTP client and the store it opened from a URL.

        Idempotent; the coder reopens them when used again. (SQLite connections can only be
        closed by the thread that opened them; other threads' are closed when collected.)
        """
        cache: LLMResponseCache | None = getattr(self._local, "cache", None)
        if cache is not None and isinstance(self._store, str):
            cache.store.close()
        self._local.cache = None
        client: openai.OpenAI | None = getattr(self._local, "client", None)
        if client is not None:
            client.close()
        self._local.client = None

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
