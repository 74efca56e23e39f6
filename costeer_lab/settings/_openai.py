"""Settings of the OpenAI-compatible endpoint (section ``openai``)."""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["OpenAISettings"]


class OpenAISettings(BaseModel):
    """OpenAI-compatible endpoint used by the ``openai:<model>`` embedder and LLM parts.

    ``api_key`` / ``base_url`` fall back to the standard ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``.
    """

    api_key: str | None = None
    base_url: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 5
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 20.0
    embed_batch_size: int = 256
