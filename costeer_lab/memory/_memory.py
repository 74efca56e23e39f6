"""``open_memory``: both memories on one store, with the metrics as methods."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from costeer_lab.embed import BaseEmbedder, get_embedder
from costeer_lab.memory import _stats
from costeer_lab.memory._failure import FailureMemory
from costeer_lab.memory._pattern import PatternMemory
from costeer_lab.settings import MemorySettings, get_settings
from costeer_lab.store import BaseStore, get_store

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Memory", "open_memory"]


class Memory:
    """A :class:`PatternMemory` and a :class:`FailureMemory` sharing one store and embedder.

    Attributes:
        patterns: the pattern memory.
        failures: the failure memory.
        store: the shared store.
    """

    def __init__(self, patterns: PatternMemory, failures: FailureMemory) -> None:
        self.patterns = patterns
        self.failures = failures
        self.store = patterns.store

    @property
    def backend(self) -> str:
        """Where searches run: ``"store"`` (the database) or ``"faiss-exact"``/``"faiss-hnsw"``."""
        return self.patterns.vectors.backend

    def stats(self, *, window_s: float | None = None, top: int = 5) -> dict[str, Any]:
        """:func:`~costeer_lab.memory.memory_stats` of this memory's store."""
        return _stats.memory_stats(self.store, window_s=window_s, top=top)

    def pattern_frame(self) -> pd.DataFrame:
        """:func:`~costeer_lab.memory.pattern_frame` of this memory's store."""
        return _stats.pattern_frame(self.store)

    def failure_frame(self) -> pd.DataFrame:
        """:func:`~costeer_lab.memory.failure_frame` of this memory's store."""
        return _stats.failure_frame(self.store)

    def search_frame(self) -> pd.DataFrame:
        """:func:`~costeer_lab.memory.search_frame` of this memory's store."""
        return _stats.search_frame(self.store)

    def hit_rate_frame(self, *, every: int = 10) -> pd.DataFrame:
        """:func:`~costeer_lab.memory.hit_rate_frame` of this memory's store."""
        return _stats.hit_rate_frame(self.store, every=every)

    def close(self) -> None:
        """Close the shared store."""
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_memory(
    store: BaseStore | str | Path | None = None,
    *,
    embedder: BaseEmbedder | str | None = None,
    settings: MemorySettings | None = None,
) -> Memory:
    """Open the pattern and failure memory of a store; the URL alone picks the backend.

    Args:
        store: ``sqlite:///path.db`` (FAISS search), ``postgresql://…`` (pgvector search in
            the database), a path, a store object, or ``None`` (``settings.store_url``, else
            the top-level ``store_url``).
        embedder: embedder or id (``None``: ``settings.embedder``, else the top-level one).
        settings: memory settings (``None``: ``get_settings().memory``).

    Example:
        >>> with open_memory("sqlite:///:memory:", embedder="hashing") as memory:
        ...     memory.backend
        'faiss-exact'
    """
    top = get_settings()
    cfg = settings if settings is not None else top.memory
    opened = get_store(store if store is not None else (cfg.store_url or top.store_url))
    emb = embedder if embedder is not None else (cfg.embedder or top.embedder)
    emb_obj = get_embedder(emb) if isinstance(emb, str) else emb
    return Memory(
        PatternMemory(opened, embedder=emb_obj, settings=cfg),
        FailureMemory(opened, embedder=emb_obj, settings=cfg),
    )
