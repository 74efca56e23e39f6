"""One model client for every model call (coder, critic, planner, component extractor,
embeddings): one retry policy, one error mapping, one response cache.

:class:`ModelClient` talks to any OpenAI-compatible endpoint (chat, plain completions for base
models, embeddings). Every failure is an :class:`~costeer_lab.errors.EndpointError` — an
infrastructure error, never an attempt and never knowledge. :class:`LLMResponseCache` records
responses in a store and replays them (``cache_mode="replay_only"``) with no network.

Example:
    >>> from costeer_lab.llm import CacheMode, ModelClient
    >>> ModelClient("gpt-4o-mini", api_key="k", base_url="http://u:pw@127.0.0.1:9/v1").endpoint
    'http://u:***@127.0.0.1:9/v1'
    >>> CacheMode("replay_only")
    <CacheMode.REPLAY_ONLY: 'replay_only'>
"""

from __future__ import annotations

from costeer_lab.llm._cache import (
    CACHE_RECORD_KIND,
    CachedResponse,
    CacheMode,
    LLMResponseCache,
    request_key,
)
from costeer_lab.llm._client import DEFAULT_BASE_URL, ModelClient
from costeer_lab.llm._errors import endpoint_error, status_kind

__all__ = [
    "CACHE_RECORD_KIND",
    "DEFAULT_BASE_URL",
    "CacheMode",
    "CachedResponse",
    "LLMResponseCache",
    "ModelClient",
    "endpoint_error",
    "request_key",
    "status_kind",
]
