"""``ModelClient``: the one client of every model call (chat, plain completion, embeddings)."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from costeer_lab._redact import redact_url
from costeer_lab._retry import call_with_retries
from costeer_lab.errors import ConfigurationError, EndpointError
from costeer_lab.llm._cache import CachedResponse, CacheMode, LLMResponseCache, request_key
from costeer_lab.llm._errors import endpoint_error
from costeer_lab.settings import LLMSettings, OpenAISettings, get_settings

if TYPE_CHECKING:
    from typing import TypeAlias

    import openai

    from costeer_lab.store._base import BaseStore

    #: What ``cache=`` accepts: a response cache, a store (used from one thread), a function
    #: that opens a store (called once per thread: how a store URL is shared by threads).
    CacheSource: TypeAlias = LLMResponseCache | BaseStore | Callable[[], BaseStore] | None

__all__ = ["DEFAULT_BASE_URL", "ModelClient"]

T = TypeVar("T")

#: Where requests go when neither an argument, the settings nor ``OPENAI_BASE_URL`` name one.
DEFAULT_BASE_URL = "https://api.openai.com/v1"


class ModelClient:
    """Chat completions, plain completions and embeddings against any OpenAI-compatible
    endpoint, with one retry policy, one error mapping and one response cache.

    Endpoint values come from the explicit arguments, else ``settings`` (default: the
    ``openai`` section of the global settings), else ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``.
    429, 5xx, connection errors and time-outs are retried (:func:`costeer_lab._retry.\
call_with_retries`, seeded jitter; the ``openai`` client's own retries are off). Every failure
    is raised as :class:`~costeer_lab.errors.EndpointError` (``kind`` ``auth`` /
    ``model_not_found`` / ``bad_request`` / ``unreachable`` / ``timeout`` / ``server``) whose
    message names the endpoint (password redacted), the model and the status.

    With a ``cache``, responses are keyed by ``(kind, model, request, params)``:
    ``read_write`` records and reuses them, ``replay_only`` answers only from the cache (no key,
    no network; a miss raises :class:`~costeer_lab.errors.ReplayMissError`), ``off`` ignores
    it. A missing API key is a :class:`~costeer_lab.errors.ConfigurationError` raised at the
    first request that needs the network.

    Thread-safe: each thread gets its own HTTP client (and its own store when ``cache`` is a
    function that opens one).

    Args:
        model: the model name sent with each request.
        purpose: names the caller in messages (``"LLMCoder"``, ``"embedder"``, …).
        seed: seed of the retry jitter.
        sleep: how to wait between retries (tests may record the waits).

    Example:
        >>> from costeer_lab.testing import FakeOpenAIServer
        >>> with FakeOpenAIServer(chat_handler=lambda body: "hi there") as server:
        ...     client = ModelClient("fake-chat", base_url=server.base_url,
        ...                          api_key=server.api_key)
        ...     client.check()
        ...     client.chat([{"role": "user", "content": "hello"}]).content
        'hi there'
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float | None = None,
        max_retries: int | None = None,
        backoff_initial_s: float | None = None,
        backoff_max_s: float | None = None,
        settings: OpenAISettings | None = None,
        cache: CacheSource = None,
        cache_mode: CacheMode | str = CacheMode.READ_WRITE,
        seed: int = 0,
        purpose: str = "model client",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        s = settings if settings is not None else get_settings().openai
        self.model = model
        self.purpose = purpose
        self.api_key = api_key or s.api_key or os.environ.get("OPENAI_API_KEY") or None
        self.base_url = base_url or s.base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.timeout_s = float(timeout_s if timeout_s is not None else s.timeout_s)
        self.max_retries = int(max_retries if max_retries is not None else s.max_retries)
        self.backoff_initial_s = (
            backoff_initial_s if backoff_initial_s is not None else s.backoff_initial_s
        )
        self.backoff_max_s = backoff_max_s if backoff_max_s is not None else s.backoff_max_s
        if self.max_retries < 0:
            raise ConfigurationError(f"max_retries must be >= 0, got {self.max_retries}")
        self.cache_mode = CacheMode.parse(cache_mode)
        if cache is None and self.cache_mode is CacheMode.REPLAY_ONLY:
            raise ConfigurationError(
                f"{purpose}: cache_mode='replay_only' needs a store holding the recorded "
                "responses; pass store='sqlite:///path.db'"
            )
        self._cache_source = cache
        self._shared_cache: LLMResponseCache | None = None
        self._local = threading.local()
        self._lock = threading.Lock()
        self._rng = random.Random(seed)
        self._sleep = sleep
        #: HTTP requests sent (retried ones included), over all threads.
        self.requests_sent = 0
        #: Requests that were retried.
        self.retries = 0

    @classmethod
    def from_llm_settings(
        cls,
        settings: LLMSettings,
        *,
        cache: CacheSource = None,
        cache_mode: CacheMode | str | None = None,
        **kwargs: Any,
    ) -> ModelClient:
        """A client for the ``llm`` settings section (its endpoint fields fall back to the
        ``openai`` section, then to the environment); ``cache_mode`` defaults to the
        section's; ``kwargs`` go to the constructor."""
        ep = settings.resolve_endpoint(get_settings().openai)
        return cls(
            settings.model,
            base_url=ep.base_url,
            api_key=ep.api_key,
            timeout_s=ep.timeout_s,
            max_retries=ep.max_retries,
            backoff_initial_s=ep.backoff_initial_s,
            backoff_max_s=ep.backoff_max_s,
            cache=cache,
            cache_mode=settings.cache_mode if cache_mode is None else cache_mode,
            seed=settings.seed,
            **kwargs,
        )

    # -- plumbing -------------------------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        """The base URL as shown in messages (password redacted)."""
        return redact_url(self.base_url or DEFAULT_BASE_URL)

    @property
    def cache(self) -> LLMResponseCache | None:
        """The response cache of the calling thread (``None`` without one or with mode off)."""
        source = self._cache_source
        if source is None or self.cache_mode is CacheMode.OFF:
            return None
        if isinstance(source, LLMResponseCache):
            return source
        if callable(source):
            cache: LLMResponseCache | None = getattr(self._local, "cache", None)
            if cache is None:
                cache = self._local.cache = LLMResponseCache(source(), self.cache_mode)
            return cache
        with self._lock:
            if self._shared_cache is None:
                self._shared_cache = LLMResponseCache(source, self.cache_mode)
            return self._shared_cache

    def require_key(self) -> str:
        """The API key, or a :class:`ConfigurationError` naming where to set it."""
        if not self.api_key:
            raise ConfigurationError(
                f"{self.purpose} (model {self.model!r}) has no API key: pass api_key=..., set "
                "COSTEER_LAB_OPENAI__API_KEY or OPENAI_API_KEY (local servers without auth "
                "accept any value), or use cache_mode='replay_only' with a recorded store"
            )
        return self.api_key

    def _client(self) -> openai.OpenAI:
        client: openai.OpenAI | None = getattr(self._local, "client", None)
        if client is None:
            import openai  # imported here: it takes ~0.5 s

            client = self._local.client = openai.OpenAI(
                api_key=self.require_key(),
                base_url=self.base_url or DEFAULT_BASE_URL,
                timeout=self.timeout_s,
                max_retries=0,
            )
        return client

    def _jitter(self) -> float:
        with self._lock:
            return self._rng.random()

    def _count_retry(self, _: BaseException) -> None:
        with self._lock:
            self.retries += 1

    def _send(self, what: str, call: Callable[[openai.OpenAI], T]) -> T:
        """``call(client)`` with the retry policy; failures mapped to :class:`EndpointError`."""
        import openai

        client = self._client()
        attempts = 0

        def attempt() -> T:
            nonlocal attempts
            attempts += 1
            with self._lock:
                self.requests_sent += 1
            return call(client)

        try:
            return call_with_retries(
                attempt,
                max_retries=self.max_retries,
                backoff_initial_s=self.backoff_initial_s,
                backoff_max_s=self.backoff_max_s,
                jitter=self._jitter,
                sleep=self._sleep,
                on_retry=self._count_retry,
            )
        except openai.OpenAIError as exc:
            raise endpoint_error(
                exc,
                what=what,
                endpoint=self.endpoint,
                model=self.model,
                attempts=attempts,
                timeout_s=self.timeout_s,
                api_key=self.api_key,
            ) from None

    def _cached(
        self,
        kind: str,
        request: Sequence[Mapping[str, str]] | str | Sequence[str],
        params: Mapping[str, Any],
        fetch: Callable[[], CachedResponse],
    ) -> CachedResponse:
        cache = self.cache
        key = request_key(self.model, request, params, kind=kind)
        if cache is not None:
            hit = cache.get(key, self.model)
            if hit is not None:
                return hit
        response = fetch()
        if cache is not None:
            cache.put(key, self.model, response)
        return response

    # -- requests -------------------------------------------------------------------------------
    def chat(self, messages: Sequence[Mapping[str, str]], **params: Any) -> CachedResponse:
        """One chat completion (``params``: ``temperature``, ``max_tokens``, ``seed``, …).

        Raises:
            EndpointError: the endpoint refused the request or kept failing.
            ReplayMissError: ``replay_only`` and the request was never recorded.
        """
        sent = [dict(m) for m in messages]

        def fetch() -> CachedResponse:
            reply = self._send(
                "chat",
                lambda c: c.chat.completions.create(
                    model=self.model,
                    messages=sent,  # type: ignore[arg-type]
                    **params,
                ),
            )
            choice = reply.choices[0] if reply.choices else None
            usage = reply.usage
            return CachedResponse(
                content=(choice.message.content if choice is not None else None) or "",
                prompt_tokens=usage.prompt_tokens if usage is not None else 0,
                completion_tokens=usage.completion_tokens if usage is not None else 0,
                finish_reason=choice.finish_reason if choice is not None else None,
            )

        return self._cached("chat", sent, params, fetch)

    def complete(
        self, prompt: str, *, stop: Sequence[str] | None = None, **params: Any
    ) -> CachedResponse:
        """One plain-text completion (``/v1/completions``): the model continues ``prompt``
        until a ``stop`` sequence (base models). Raises like :meth:`chat`."""
        full = dict(params)
        if stop:
            full["stop"] = list(stop)

        def fetch() -> CachedResponse:
            reply = self._send(
                "completion",
                lambda c: c.completions.create(model=self.model, prompt=prompt, **full),
            )
            choice = reply.choices[0] if reply.choices else None
            usage = reply.usage
            return CachedResponse(
                content=(choice.text if choice is not None else None) or "",
                prompt_tokens=usage.prompt_tokens if usage is not None else 0,
                completion_tokens=usage.completion_tokens if usage is not None else 0,
                finish_reason=choice.finish_reason if choice is not None else None,
            )

        return self._cached("completion", prompt, full, fetch)

    def embed(self, texts: Sequence[str], *, dimensions: int | None = None) -> CachedResponse:
        """Embeddings of ``texts`` (``embeddings``, one row per text, in input order; not
        normalized). Raises like :meth:`chat`."""
        batch = list(texts)
        params: dict[str, Any] = {} if dimensions is None else {"dimensions": dimensions}

        def fetch() -> CachedResponse:
            resp = self._send(
                "embedding",
                lambda c: c.embeddings.create(model=self.model, input=batch, **params),
            )
            rows = sorted(resp.data, key=lambda d: d.index)
            usage = resp.usage
            return CachedResponse(
                content="",
                prompt_tokens=usage.prompt_tokens if usage is not None else 0,
                completion_tokens=0,
                embeddings=tuple(tuple(float(x) for x in d.embedding) for d in rows),
            )

        return self._cached("embedding", batch, params, fetch)

    def check(
        self,
        api: Literal["chat", "completions", "embeddings"] = "chat",
        *,
        max_tokens_param: str = "max_tokens",
    ) -> None:
        """A cheap probe of the endpoint and the configuration, never cached.

        ``GET /models``: when the server lists models, :attr:`model` must be one of them;
        when it lists none (or has no such route), one 1-token request of ``api`` is sent.

        Raises:
            ConfigurationError: no API key.
            EndpointError: the key is refused (``auth``), the model is unknown
                (``model_not_found``), the server is unreachable or times out, ….
        """
        self.require_key()
        try:
            listed = self._send("models", lambda c: c.models.list())
            names = [m.id for m in listed.data]
        except EndpointError as exc:
            if exc.kind != "model_not_found":  # 404: a server that does not list its models
                raise
            names = []
        if names:
            if self.model not in names:
                shown = ", ".join(repr(n) for n in sorted(names)[:10])
                raise EndpointError(
                    f"{self.endpoint} does not serve model {self.model!r} (it lists {shown}"
                    f"{', …' if len(names) > 10 else ''}); check the model name and the base URL",
                    kind="model_not_found",
                    status=404,
                )
            return
        if api == "embeddings":
            self._send("embedding", lambda c: c.embeddings.create(model=self.model, input=[" "]))
        elif api == "completions":
            self._send(
                "completion",
                lambda c: c.completions.create(model=self.model, prompt="1", max_tokens=1),
            )
        else:
            limit: dict[str, Any] = {max_tokens_param: 1}
            self._send(
                "chat",
                lambda c: c.chat.completions.create(
                    model=self.model, messages=[{"role": "user", "content": "1"}], **limit
                ),
            )

    def close(self) -> None:
        """Close the calling thread's HTTP client and the store it opened; idempotent (the
        client reopens them when used again)."""
        cache: LLMResponseCache | None = getattr(self._local, "cache", None)
        if cache is not None:
            cache.store.close()
        self._local.cache = None
        client: openai.OpenAI | None = getattr(self._local, "client", None)
        if client is not None:
            client.close()
        self._local.client = None

    def __enter__(self) -> ModelClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
