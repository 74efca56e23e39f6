"""Settings of costeer_lab, documented in one place.

Precedence: explicit arguments > a settings object passed in > ``COSTEER_LAB_*`` environment
variables > the defaults below. Every section is a field of :class:`Settings`; nested sections
use ``__`` in env names, for example ``COSTEER_LAB_RAG__MAX_FORMER_TRACES=7``. Code reads the
process-wide values with ``get_settings().<section>`` (cached: call
``get_settings.cache_clear()`` after changing the environment).

| section | class | read by |
|---|---|---|
| (top level) | :class:`Settings` | ``get_store(None)``, ``open_kb``, suites' data cache |
| ``openai`` | :class:`OpenAISettings` | ``openai:<model>`` embedder, LLM endpoint fallbacks |
| ``llm`` | :class:`LLMSettings` | :class:`~costeer_lab.coders.LLMCoder` |
| ``rag`` | :class:`RAGSettings` | ``open_kb``, ``make_rag_strategy``, RAG strategies V1/V2 |
| ``minilm`` | :class:`MiniLMSettings` | the ``minilm`` embedder |
| ``index`` | :class:`IndexSettings` | :class:`~costeer_lab.index.FaissIndex` (threads) |
| ``evaluator`` | :class:`EvaluatorSettings` | evaluators, ``Suite.evaluators()`` |
| ``sandbox`` | :class:`SandboxSettings` | the sandbox worker |
| ``memory`` | :class:`MemorySettings` | the pattern and failure memory |
| ``context`` | :class:`ContextSettings` | the rich task context (:mod:`costeer_lab.context`) |
| ``docs`` | :class:`DocsSettings` | :class:`~costeer_lab.docs.DocumentKB` |

Validation, when the settings are read:

- **Unknown variables.** A ``COSTEER_LAB_*`` variable that no code reads (a typo) is reported
  with the closest known name: :func:`get_settings` warns once per name
  (:class:`SettingsWarning`) and ignores it; the ``costeer-lab`` command refuses it (every
  subcommand, exit 2, one line ``environment: COSTEER_LAB_RAG__MAX_FORMER_TRACE is not a setting;
  did you mean COSTEER_LAB_RAG__MAX_FORMER_TRACES?``) — a researcher who mistypes must not get
  a run on defaults.
  Known names: the fields of :class:`Settings` (each section also as a whole, in JSON), and
  the variables read from ``os.environ`` elsewhere, listed in :data:`OTHER_ENV_NAMES` /
  :data:`OTHER_ENV_PREFIXES` (add new ones there); case does not matter.
- **Bad values.** A value of the wrong type or range is one
  :class:`~costeer_lab.errors.ConfigurationError` naming the variable (``environment:
  COSTEER_LAB_RAG__MAX_FORMER_TRACES: Input should be a valid integer … (got 'lots')``), from
  :func:`get_settings` and every command. The command also checks embedder names
  (``embedder``, ``memory.embedder``, ``docs.embedder``) and store URLs (``store_url``,
  ``memory.store_url``, ``db_path`` when it is a URL) by name, without opening anything
  (:func:`check_environment`).
- **Directories.** ``costeer-lab run`` refuses ``cache_dir`` and ``sandbox.lock_dir`` when
  they are neither a writable folder nor creatable, and ``sandbox.tmp_dir`` unless it is an
  existing writable folder — each when set (``lock_dir`` also at its default when running as
  root, where the sandbox uses it). The check creates nothing (a probe folder is made and
  removed) and works as root (``/proc/nope`` is refused). Other commands do not use them.
- **Run folders.** A run records its effective settings in ``<out>/settings.json`` (secrets
  redacted); a resume whose settings differ in a field that can change results is refused,
  naming each variable with both values (see ``costeer_lab.experiment._settings_record`` for
  the fields compared).

Example:
    >>> from costeer_lab.settings import Settings
    >>> Settings(rag={"max_former_traces": 7}).rag.max_former_traces
    7
    >>> get_settings().embedder
    'hashing'
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from costeer_lab.settings._check import (
    SettingsWarning,
    check_settings_dirs,
    check_settings_values,
    check_unknown_env,
    directory_problem,
    settings_from_env,
    warn_unknown_env,
)
from costeer_lab.settings._context import ContextSettings
from costeer_lab.settings._docs import DocsSettings, default_data_dir
from costeer_lab.settings._env import (
    ENV_PREFIX,
    OTHER_ENV_NAMES,
    OTHER_ENV_PREFIXES,
    env_name,
    known_env_names,
    unknown_env_names,
)
from costeer_lab.settings._evaluator import EvaluatorSettings
from costeer_lab.settings._index import HNSW_ABOVE, IndexSettings
from costeer_lab.settings._llm import LLMSettings
from costeer_lab.settings._memory import MemorySettings
from costeer_lab.settings._minilm import MiniLMSettings
from costeer_lab.settings._openai import OpenAISettings
from costeer_lab.settings._rag import RAGSettings
from costeer_lab.settings._sandbox import SandboxSettings

__all__ = [
    "ENV_PREFIX",
    "HNSW_ABOVE",
    "OTHER_ENV_NAMES",
    "OTHER_ENV_PREFIXES",
    "ContextSettings",
    "DocsSettings",
    "EvaluatorSettings",
    "IndexSettings",
    "LLMSettings",
    "MemorySettings",
    "MiniLMSettings",
    "OpenAISettings",
    "RAGSettings",
    "SandboxSettings",
    "Settings",
    "SettingsWarning",
    "check_environment",
    "check_settings_dirs",
    "check_settings_values",
    "check_unknown_env",
    "default_cache_dir",
    "default_data_dir",
    "directory_problem",
    "env_name",
    "get_settings",
    "known_env_names",
    "settings_from_env",
    "unknown_env_names",
    "warn_unknown_env",
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


class Settings(BaseSettings):
    """Top-level settings; each section documents its own defaults (see its class)."""

    model_config = SettingsConfigDict(
        env_prefix="COSTEER_LAB_", env_nested_delimiter="__", extra="ignore"
    )

    #: Store URL used when ``get_store(None)`` is called.
    store_url: str = "sqlite:///:memory:"
    #: Embedder ``open_kb`` uses when none is given (``hashing``, ``minilm``, ``openai:<model>``).
    embedder: str = "hashing"
    #: Where generated data (synthetic panels, model files, …) is cached.
    cache_dir: Path = Field(default_factory=default_cache_dir)
    #: The ``openai`` section: the OpenAI-compatible endpoint shared by embedder and LLM parts.
    openai: OpenAISettings = Field(default_factory=OpenAISettings)
    #: The ``llm`` section: chat model, endpoint, retries, prices (``LLMCoder``, critic).
    llm: LLMSettings = Field(default_factory=LLMSettings)
    #: The ``rag`` section: retrieval limits, sampler, index kind, component extractor.
    rag: RAGSettings = Field(default_factory=RAGSettings)
    #: The ``minilm`` embedder section.
    minilm: MiniLMSettings = Field(default_factory=MiniLMSettings)
    #: The ``index`` section: FAISS threads.
    index: IndexSettings = Field(default_factory=IndexSettings)
    #: The ``evaluator`` section: factor thresholds, time limits, the optional LLM critic.
    evaluator: EvaluatorSettings = Field(default_factory=EvaluatorSettings)
    #: The ``sandbox`` section: uid slots, run directories, worker start-up.
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    #: The ``memory`` section: pattern/failure memory thresholds, backend and index.
    memory: MemorySettings = Field(default_factory=MemorySettings)
    #: The ``context`` section: loop prevention and completion thresholds of task contexts.
    context: ContextSettings = Field(default_factory=ContextSettings)
    #: The ``docs`` section: chunking, retrieval modes, fusion of the document knowledge base.
    docs: DocsSettings = Field(default_factory=DocsSettings)
    #: Collection a :class:`~costeer_lab.docs.DocumentKB` opens when none is named.
    collection: str = "costeer_lab_knowledge"
    #: Database file or store URL of a :class:`~costeer_lab.docs.DocumentKB` (empty: the
    #: file ``default_data_dir() / "knowledge.db"``).
    db_path: str = ""


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings read from the environment (cached; call
    ``get_settings.cache_clear()`` after changing env vars).

    Each ``COSTEER_LAB_*`` variable no code reads is reported once per process with a
    :class:`SettingsWarning` naming the closest known variable, and ignored.

    Raises:
        ConfigurationError: a variable holds a bad value (``environment: <NAME>: <what was
            expected> (got <value>)``).
    """
    warn_unknown_env(Settings)
    return settings_from_env(Settings)


def check_environment(
    *,
    strict: bool = True,
    directories: bool = False,
    embedder: Callable[[str], object] | None = None,
    store: Callable[[str], object] | None = None,
) -> Settings:
    """Validate the ``COSTEER_LAB_*`` environment and return the settings it gives.

    Args:
        strict: an unknown variable is an error (the ``costeer-lab`` command); otherwise a
            :class:`SettingsWarning`, as with :func:`get_settings`.
        directories: also check the directories a run writes into (:func:`check_settings_dirs`;
            only where they are used: ``costeer-lab run``).
        embedder: checks an embedder name (``costeer_lab.embed.check_embedder_name``) — applied
            to ``embedder``, ``memory.embedder`` and ``docs.embedder``.
        store: checks a store URL (``costeer_lab.store.check_store_target``) — applied to
            ``store_url``, ``memory.store_url`` and ``db_path``.

    Raises:
        ConfigurationError: the first problem, one line starting ``environment:`` that names
            the variable.

    Example:
        >>> check_environment().rag.max_former_traces
        3
    """
    if strict:
        check_unknown_env(Settings)
    settings = get_settings()
    check_settings_values(settings, embedder=embedder, store=store)
    if directories:
        check_settings_dirs(settings)
    return settings
