"""Settings of the coders: the chat model, its endpoint, retries, prices and prompt sizes.

Section ``llm`` of :class:`costeer_lab.settings.Settings` (env names like
``COSTEER_LAB_LLM__MODEL=gpt-4o-mini``). Endpoint fields left ``None`` fall back to the ``openai``
section of the settings and then to ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``.

Example:
    >>> LLMSettings().model
    'gpt-4o-mini'
    >>> LLMSettings(model="gpt-4o").cost_usd(1_000_000, 0)
    2.5
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, Field

from costeer_lab.settings._openai import OpenAISettings

__all__ = ["DEFAULT_PRICES", "LLMSettings", "ResolvedEndpoint"]

#: USD per million (prompt, completion) tokens of some common models; unknown models cost 0.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "o3-mini": (1.1, 4.4),
    "o4-mini": (1.1, 4.4),
}


class LLMSettings(BaseModel):
    """How :class:`~costeer_lab.coders.LLMCoder` talks to an OpenAI-compatible chat endpoint."""

    #: Model name sent to the endpoint.
    model: str = "gpt-4o-mini"
    #: ``chat``: chat completions (instruction models). ``completions``: plain text completions
    #: (``/v1/completions``, base models): the prompt is code the model continues until a
    #: :attr:`stop` sequence (see ``coders.build_completion_prompt``).
    api: Literal["chat", "completions"] = "chat"
    #: Stop sequences of ``completions`` requests; ``None`` → the built-in list
    #: (``coders._prompts.COMPLETION_STOP``). The OpenAI API takes at most 4; llama.cpp any.
    stop: list[str] | None = None
    #: Endpoint such as ``http://127.0.0.1:8000/v1``; ``None`` → settings.openai → env.
    base_url: str | None = None
    #: API key; ``None`` → settings.openai → ``OPENAI_API_KEY``. Never written to coder configs.
    api_key: str | None = None
    #: Sampling temperature (0 keeps replies as repeatable as the endpoint allows).
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    #: Maximum completion tokens of one reply.
    max_tokens: int = Field(default=2048, gt=0)
    #: Request field carrying it (reasoning models want ``max_completion_tokens``).
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    #: Whether to send :attr:`seed` with each request (a few endpoints reject it).
    send_seed: bool = True
    #: Request timeout in seconds; ``None`` → settings.openai.timeout_s.
    timeout_s: float | None = None
    #: Retries after a 429, a 5xx or a connection error; ``None`` → settings.openai.max_retries.
    max_retries: int | None = Field(default=None, ge=0)
    #: First backoff delay in seconds (doubled each retry, with seeded jitter).
    backoff_initial_s: float | None = Field(default=None, ge=0)
    #: Largest backoff delay in seconds.
    backoff_max_s: float | None = Field(default=None, ge=0)
    #: Seed of the retry jitter; also sent as the request ``seed`` (see :attr:`send_seed`) when
    #: the caller gives no per-call stream (the evolution loop gives one: common random numbers).
    seed: int = 0
    #: Response cache mode when a store is given: ``off``, ``read_write`` or ``replay_only``.
    cache_mode: Literal["off", "read_write", "replay_only"] = "read_write"
    #: USD per million (prompt, completion) tokens by model name; unknown models cost 0.
    prices: dict[str, tuple[float, float]] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    #: Prompt sizes: at most this many items per knowledge section.
    max_similar: int = Field(default=3, ge=0)
    max_former_traces: int = Field(default=3, ge=0)
    max_error_fixes: int = Field(default=2, ge=0)
    max_component_matches: int = Field(default=2, ge=0)
    #: Characters of one code listing or feedback text kept in the prompt (middle cut).
    max_chars_per_item: int = Field(default=6000, ge=200)

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Cost of one call from :attr:`prices` (0.0 for a model not in the table)."""
        price = self.prices.get(self.model)
        if price is None:
            return 0.0
        return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000

    def resolve_endpoint(self, oa: OpenAISettings) -> ResolvedEndpoint:
        """Fill ``None`` endpoint fields from ``oa`` (the ``openai`` section), then from the
        environment."""
        return ResolvedEndpoint(
            api_key=self.api_key or oa.api_key or os.environ.get("OPENAI_API_KEY") or None,
            base_url=self.base_url or oa.base_url or os.environ.get("OPENAI_BASE_URL") or None,
            timeout_s=self.timeout_s if self.timeout_s is not None else oa.timeout_s,
            max_retries=self.max_retries if self.max_retries is not None else oa.max_retries,
            backoff_initial_s=(
                self.backoff_initial_s
                if self.backoff_initial_s is not None
                else oa.backoff_initial_s
            ),
            backoff_max_s=self.backoff_max_s
            if self.backoff_max_s is not None
            else oa.backoff_max_s,
        )


class ResolvedEndpoint(BaseModel):
    """Endpoint values after the fallbacks of :meth:`LLMSettings.resolve_endpoint`."""

    api_key: str | None
    base_url: str | None
    timeout_s: float
    max_retries: int
    backoff_initial_s: float
    backoff_max_s: float
