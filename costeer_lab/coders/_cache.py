"""The response cache moved to :mod:`costeer_lab.llm` (it serves every model call); these names
stay importable from here."""

from __future__ import annotations

from costeer_lab.llm._cache import (
    CACHE_RECORD_KIND,
    CachedResponse,
    CacheMode,
    LLMResponseCache,
    request_key,
)

__all__ = ["CACHE_RECORD_KIND", "CacheMode", "CachedResponse", "LLMResponseCache", "request_key"]
