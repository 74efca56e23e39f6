"""Settings of the vector index (section ``index``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["HNSW_ABOVE", "IndexSettings"]

#: Collection size from which an ``index_kind="auto"`` collection uses HNSW instead of an exact
#: scan (the default ``hnsw_above`` of the ``rag`` and ``docs`` sections). Measured on the
#: benchmark's task descriptions (hashing embedder, 384-d; ``python -m benchmarks.index_auto``):
#: below it an exact scan is as fast as the graph walk, from it on HNSW is faster and its
#: recall@64 against exact is at least 0.99 (table in ``docs/benchmarks.md``).
HNSW_ABOVE = 10_000


class IndexSettings(BaseModel):
    """Vector index settings; env names ``COSTEER_LAB_INDEX__<FIELD>``.

    Attributes:
        faiss_threads: OpenMP threads faiss may use in this process, applied when the first
            :class:`~costeer_lab.index.FaissIndex` is created. Default 1: searches are mostly
            one query at a time, where threads only add start-up cost, and costeer_lab runs its
            parallel work in process pools, where faiss threads would oversubscribe the cores
            (on a busy 2-core machine a single exact query took ~50 ms with 2 threads instead of
            ~0.6 ms with 1). ``None`` leaves faiss's default (all cores). With one thread an
            HNSW graph built from the same vectors in the same order is the same graph on every
            run (its levels come from a fixed seed); with several, threads insert in parallel
            and the graph, hence an approximate search's answer, may differ between builds.

    Example:
        >>> IndexSettings().faiss_threads
        1
    """

    faiss_threads: int | None = Field(default=1, ge=1)
