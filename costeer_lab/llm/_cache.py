"""A store-backed cache of model responses: record once, replay an experiment with no network.

Chat, plain-completion and embedding requests are cached alike, as records of kind
``"llm_cache"`` keyed by :func:`request_key` of ``(kind, model, request, params)``. A chat key
is the same as the one the coder used before the cache handled other kinds, so recordings made
then still replay.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from costeer_lab._redact import redact_url
from costeer_lab.errors import ConfigurationError, ReplayMissError

if TYPE_CHECKING:
    from costeer_lab.store._base import BaseStore

__all__ = [
    "CACHE_RECORD_KIND",
    "CacheMode",
    "CachedResponse",
    "LLMResponseCache",
    "request_key",
]

#: Record kind of cached responses in the store.
CACHE_RECORD_KIND = "llm_cache"


class CacheMode(StrEnum):
    """``off``: always call the endpoint. ``read_write``: answer from the cache, record misses.
    ``replay_only``: answer from the cache only; a miss raises :class:`ReplayMissError`."""

    OFF = "off"
    READ_WRITE = "read_write"
    REPLAY_ONLY = "replay_only"

    @classmethod
    def parse(cls, mode: CacheMode | str) -> CacheMode:
        """``mode`` as a :class:`CacheMode`; an unknown one is a :class:`ConfigurationError`."""
        try:
            return cls(mode)
        except ValueError:
            known = ", ".join(repr(m.value) for m in cls)
            raise ConfigurationError(
                f"unknown cache mode {mode!r}; expected one of {known}"
            ) from None


def request_key(
    model: str,
    request: Sequence[Mapping[str, str]] | str | Sequence[str],
    params: Mapping[str, Any],
    *,
    kind: str = "chat",
) -> str:
    """sha256 (hex) of the canonical JSON of ``(kind, model, request, params)``.

    ``request`` is the chat messages (``kind="chat"``), the prompt text (``"completion"``) or
    the list of texts (``"embedding"``).

    Example:
        >>> a = request_key("m", [{"role": "user", "content": "hi"}], {"temperature": 0})
        >>> a == request_key("m", [{"content": "hi", "role": "user"}], {"temperature": 0})
        True
        >>> a == request_key("m", "hi", {"temperature": 0}, kind="completion")
        False
    """
    payload: dict[str, Any] = {"model": model, "params": dict(params)}
    if kind == "chat":  # the historical key of chat requests (no "kind" field)
        payload["messages"] = [dict(m) for m in request]  # type: ignore[arg-type]
    else:
        payload["kind"] = kind
        payload["request"] = request if isinstance(request, str) else list(request)
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedResponse:
    """The parts of a model response an experiment depends on.

    ``content`` is the reply text (chat, completion); ``embeddings`` the vectors of an
    embedding request. ``from_cache`` tells whether this call was answered by the cache (not
    stored, not compared).
    """

    content: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None
    embeddings: tuple[tuple[float, ...], ...] = ()
    from_cache: bool = field(default=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "content": self.content,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason,
        }
        if self.embeddings:
            out["embeddings"] = [list(v) for v in self.embeddings]
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, from_cache: bool = False) -> CachedResponse:
        return cls(
            content=str(d.get("content", "")),
            prompt_tokens=int(d.get("prompt_tokens", 0)),
            completion_tokens=int(d.get("completion_tokens", 0)),
            finish_reason=d.get("finish_reason"),
            embeddings=tuple(tuple(float(x) for x in v) for v in d.get("embeddings", ())),
            from_cache=from_cache,
        )


class LLMResponseCache:
    """Model responses stored as records of kind ``"llm_cache"`` keyed by :func:`request_key`.

    Thread-safe: a lock serializes access to the store (one store object per thread rule).

    Example:
        >>> from costeer_lab.store import get_store
        >>> cache = LLMResponseCache(get_store(":memory:"), "read_write")
        >>> key = request_key("m", [{"role": "user", "content": "hi"}], {})
        >>> cache.put(key, "m", CachedResponse("hello", 1, 1))
        >>> cache.get(key, "m").content
        'hello'
    """

    def __init__(self, store: BaseStore, mode: CacheMode | str = CacheMode.READ_WRITE) -> None:
        self.mode = CacheMode.parse(mode)
        self.store = store
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def get(self, key: str, model: str) -> CachedResponse | None:
        """The cached response, ``None`` on a miss (mode ``read_write``/``off``).

        Raises:
            ReplayMissError: a miss in ``replay_only`` mode.
        """
        if self.mode is CacheMode.OFF:
            return None
        with self._lock:
            data = self.store.get_record(CACHE_RECORD_KIND, key)
        if isinstance(data, dict) and "response" in data:
            self.hits += 1
            return CachedResponse.from_dict(data["response"], from_cache=True)
        self.misses += 1
        if self.mode is CacheMode.REPLAY_ONLY:
            where = redact_url(getattr(self.store, "url", "?"))
            raise ReplayMissError(
                f"replay_only: no cached response for model {model!r}, request {key[:12]} "
                f"(store {where}); the experiment made a request the "
                "recorded run did not (changed prompt, model, parameters or knowledge). Re-record "
                "with cache_mode='read_write' or restore the recording's store."
            )
        return None

    def put(self, key: str, model: str, response: CachedResponse) -> None:
        """Record a response (no-op unless the mode is ``read_write``)."""
        if self.mode is not CacheMode.READ_WRITE:
            return
        record = {
            "model": model,
            "response": response.to_dict(),
            "created_at": time.time(),
        }
        with self._lock:
            self.store.put_record(CACHE_RECORD_KIND, key, record)

    def __len__(self) -> int:
        with self._lock:
            return self.store.count_records(CACHE_RECORD_KIND)
