"""A store-backed cache of model responses: record once, replay an experiment with no network.

Chat, plain-completion and embedding requests are cached alike, as records of kind
``"llm_cache"`` keyed by :func:`request_key` of ``(kind, model, request, params)``. A chat key
is the same as the one the coder used before the cache handled other kinds, so recordings made
then still replay.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costeer_lab._redact import redact_url
from costeer_lab.errors import ConfigurationError, InvalidInputError, ReplayMissError

if TYPE_CHECKING:
    from costeer_lab.store._base import BaseStore
    from costeer_lab.store._types import JSONValue

__all__ = [
    "CACHE_RECORD_KIND",
    "CacheMode",
    "CachedResponse",
    "LLMResponseCache",
    "export_cache",
    "import_cache",
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


#: First line of an exported cache file (format and version).
EXPORT_HEADER = {"format": "costeer_lab.llm_cache", "version": 1}


def export_cache(store: BaseStore, path: str | os.PathLike[str]) -> int:
    """Write every cached response of ``store`` to ``path`` as gzip-compressed JSON lines
    (a header line, then ``{"key", "model", "response"}`` per response, sorted by key, no
    timestamps, so the same responses give the same file); returns the count. The file is
    written to a temporary name and renamed into place.

    Example:
        >>> import tempfile, pathlib
        >>> from costeer_lab.store import get_store
        >>> src = get_store(":memory:")
        >>> LLMResponseCache(src).put("k1", "m", CachedResponse("hi", 1, 1))
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "cache.jsonl.gz"
        >>> export_cache(src, path), import_cache(path, get_store(":memory:"))
        (1, 1)
    """
    rows = sorted(
        (key, data)
        for key, data in store.iter_records(CACHE_RECORD_KIND)
        if isinstance(data, dict) and "response" in data
    )
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    with gzip.GzipFile(tmp, "wb", mtime=0) as raw:
        raw.write((json.dumps(EXPORT_HEADER, sort_keys=True) + "\n").encode("utf-8"))
        for key, data in rows:
            assert isinstance(data, dict)
            line = {"key": key, "model": data.get("model"), "response": data["response"]}
            raw.write((json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n").encode())
    os.replace(tmp, target)
    return len(rows)


def import_cache(path: str | os.PathLike[str], store: BaseStore) -> int:
    """Load a file written by :func:`export_cache` into ``store`` (one transaction-sized
    ``put_records``); returns the count.

    Raises:
        InvalidInputError: the file is not an exported cache (names the line at fault).
    """
    items: list[tuple[str, JSONValue]] = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            try:
                data = json.loads(line)
            except ValueError as exc:
                raise InvalidInputError(f"{path}: line {n} is not JSON: {exc}") from None
            if n == 1:
                if data != EXPORT_HEADER:
                    raise InvalidInputError(
                        f"{path}: not an exported response cache (first line {line[:80]!r}, "
                        f"expected {EXPORT_HEADER})"
                    )
                continue
            if not (isinstance(data, dict) and isinstance(data.get("key"), str)
                    and isinstance(data.get("response"), dict)):  # fmt: skip
                raise InvalidInputError(f"{path}: line {n} lacks 'key' or 'response'")
            CachedResponse.from_dict(data["response"])  # refuses malformed responses early
            items.append((data["key"], {"model": data.get("model"), "response": data["response"]}))
    store.put_records(CACHE_RECORD_KIND, items)
    return len(items)
