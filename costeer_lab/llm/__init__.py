"""Model endpoints: local models served by llama.cpp's OpenAI-compatible server.

Example:
    >>> from costeer_lab.llm import LOCAL_MODELS
    >>> "gemma3-270m" in LOCAL_MODELS
    True
"""

from __future__ import annotations

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
    "LOCAL_MODELS",
    "LOCAL_PREFIX",
    "SERVER_REQUIREMENTS",
    "LocalModel",
    "LocalModelServer",
    "assemble_chunks",
    "model_alias",
    "require_local_llm",
    "resolve_local_model",
    "serve_for_coder",
]
