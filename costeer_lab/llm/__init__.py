"""Model endpoints: one model client for every model call, and local models to serve.

:class:`ModelClient` talks to any OpenAI-compatible endpoint (chat, plain completions for base
models, embeddings) for the coder, the critic, the planner, the component extractor and the
embedder: one retry policy, one error mapping, one response cache. Every failure is an
:class:`~costeer_lab.errors.EndpointError` — an infrastructure error, never an attempt and never
knowledge. :class:`LLMResponseCache` records responses in a store and replays them
(``cache_mode="replay_only"``) with no network. :class:`LocalModelServer` starts llama.cpp's
OpenAI-compatible server on 127.0.0.1 for a local model (``local:gemma3-270m``).

Example:
    >>> from costeer_lab.llm import LOCAL_MODELS, CacheMode, ModelClient
    >>> ModelClient("gpt-4o-mini", api_key="k", base_url="http://u:pw@127.0.0.1:9/v1").endpoint
    'http://u:***@127.0.0.1:9/v1'
    >>> CacheMode("replay_only")
    <CacheMode.REPLAY_ONLY: 'replay_only'>
    >>> "gemma3-270m" in LOCAL_MODELS
    True
"""

from __future__ import annotations

from costeer_lab.llm._cache import (
    CACHE_RECORD_KIND,
    CachedResponse,
    CacheMode,
    LLMResponseCache,
    export_cache,
    import_cache,
    request_key,
)
from costeer_lab.llm._client import DEFAULT_BASE_URL, ModelClient
from costeer_lab.llm._errors import endpoint_error, status_kind
from costeer_lab.llm._local import (
    LOCAL_MODELS,
    LOCAL_PREFIX,
    SERVER_REQUIREMENTS,
    LocalModel,
    LocalModelServer,
    assemble_chunks,
    model_alias,
    require_local_llm,
    resolve_local_model,
    serve_for_coder,
)

__all__ = [
    "CACHE_RECORD_KIND",
    "DEFAULT_BASE_URL",
    "LOCAL_MODELS",
    "LOCAL_PREFIX",
    "SERVER_REQUIREMENTS",
    "CacheMode",
    "CachedResponse",
    "LLMResponseCache",
    "LocalModel",
    "LocalModelServer",
    "ModelClient",
    "assemble_chunks",
    "endpoint_error",
    "export_cache",
    "import_cache",
    "model_alias",
    "request_key",
    "require_local_llm",
    "resolve_local_model",
    "serve_for_coder",
    "status_kind",
]
