"""Settings of costeer_lab, documented in one place.

Precedence: explicit arguments > a settings object passed in > ``COSTEER_LAB_*`` environment
variables > the defaults below. Nested sections use ``__`` in env names, for example
``COSTEER_LAB_RAG__MAX_FORMER_TRACES=3``.

Example:
    >>> from costeer_lab.settings import get_settings
    >>> get_settings().embedder
    'hashing'
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from costeer_lab.settings._evaluator import EvaluatorSettings
from costeer_lab.settings._index import IndexSettings
from costeer_lab.settings._llm import LLMSettings
from costeer_lab.settings._minilm import MiniLMSettings
from costeer_lab.settings._sandbox import SandboxSettings

__all__ = [
    "EvaluatorSettings",
    "IndexSettings",
    "LLMSettings",
    "MiniLMSettings",
    "OpenAISettings",
    "SandboxSettings",
    "Settings",
    "default_cache_dir",
    "get_settings",
]


def default_cache_dir() -> Path:
    """``$COSTEER_LAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/costeer_lab``, else ``~/.cache/...``.

    The directory is not created here.
    """
    env = os.environ.get("COSTEER_LAB_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "costeer_lab"


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


class Settings(BaseSettings):
    """Top-level settings; each section documents its own defaults (see its class)."""

    model_config = SettingsConfigDict(
        env_prefix="COSTEER_LAB_", env_nested_delimiter="__", extra="ignore"
    )

    #: Store URL used when ``get_store(None)`` is called.
    store_url: str = "sqlite:///:memory:"
    #: Embedder name used when none is given (``hashing``, ``minilm``, ``openai:<model>``).
    embedder: str = "hashing"
    #: Where generated data (synthetic panels, model files, …) is cached.
    cache_dir: Path = Field(default_factory=default_cache_dir)
    #: Default random seed.
    seed: int = 0
    openai: OpenAISettings = Field(default_factory=OpenAISettings)
    #: The ``llm`` section: chat model, endpoint, retries, prices (``LLMCoder``, critic).
    llm: LLMSettings = Field(default_factory=LLMSettings)
    #: The ``minilm`` embedder section.
    minilm: MiniLMSettings = Field(default_factory=MiniLMSettings)
    #: The ``index`` section: FAISS threads.
    index: IndexSettings = Field(default_factory=IndexSettings)
    #: The ``evaluator`` section: factor thresholds, time limits, the optional LLM critic.
    evaluator: EvaluatorSettings = Field(default_factory=EvaluatorSettings)
    #: The ``sandbox`` section: uid slots, run directories, worker start-up.
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings read from the environment (cached; call
    ``get_settings.cache_clear()`` after changing env vars)."""
    return Settings()
