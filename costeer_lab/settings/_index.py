"""Settings of the vector index (section ``index``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["IndexSettings"]


class IndexSettings(BaseModel):
    """Vector index settings; env names ``COSTEER_LAB_INDEX__<FIELD>``.

    Attributes:
        faiss_threads: OpenMP threads faiss may use in this process, applied when the first
            :class:`~costeer_lab.index.FaissIndex` is created. Default 1: searches are mostly
            one query at a time, where threads only add start-up cost, and costeer_lab runs its
            parallel work in process pools, where faiss threads would oversubscribe the cores
            (on a busy 2-core machine a single exact query took ~50 ms with 2 threads instead of
            ~0.6 ms with 1). ``None`` leaves faiss's default (all cores).

    Example:
        >>> IndexSettings().faiss_threads
        1
    """

    faiss_threads: int | None = Field(default=1, ge=1)
