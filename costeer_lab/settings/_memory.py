"""Settings of the pattern and failure memory (section ``memory``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

__all__ = ["MemorySettings"]


class MemorySettings(BaseModel):
    """Pattern/failure memory settings; env names ``COSTEER_LAB_MEMORY__<FIELD>``.

    Attributes:
        store_url: store the memory opens when none is given (``None``: the top-level
            ``store_url``). ``sqlite:///…`` searches through a FAISS index rebuilt from the
            store; ``postgresql://…`` searches in the database (pgvector).
        embedder: embedder id of new memories (``None``: the top-level ``embedder``).
        pattern_threshold: default cosine similarity a pattern needs to be returned:
            ``"calibrated"`` (the threshold calibrated for the memory's embedder at precision
            0.9 on the project's labelled set, :func:`costeer_lab.memory.calibrate`; 0.7 for an
            embedder without a calibration) or a number (0.7 is the specification's).
        outcome_weight: weight of a pattern's success rate in its rank: a search orders
            patterns by ``similarity + outcome_weight * (success_rate - 0.5)`` (a pattern without
            outcomes counts 0.5); the threshold applies to the similarity alone. 0: similarity
            only.
        failure_threshold: default cosine similarity a solved failure needs to be returned.
        limit: default number of results of a search.
        index_kind: FAISS index on SQLite: ``exact``, ``hnsw``, or ``auto`` (exact below
            ``hnsw_above`` vectors, HNSW from there on).
        hnsw_above: collection size from which ``auto`` uses HNSW.
        ef_search: HNSW search beam width (higher: better recall, slower), on either backend:
            ``efSearch`` of the FAISS index, or ``hnsw.ef_search`` of each PostgreSQL search
            (the store URL's ``ef_search`` is then the default of other callers only).
        verify_patterns: re-run a pattern's runnable tests in the sandbox before storing it
            and refuse it when they fail (a pattern without runnable tests is stored with
            ``verified=False``); off: every pattern is stored unverified.
        verify_timeout_s: wall-clock limit of that sandbox run.

    Example:
        >>> MemorySettings().pattern_threshold
        'calibrated'
        >>> MemorySettings(pattern_threshold=0.7).pattern_threshold
        0.7
    """

    store_url: str | None = None
    embedder: str | None = None
    pattern_threshold: Annotated[float, Field(ge=-1.0, le=1.0)] | Literal["calibrated"] = (
        "calibrated"
    )
    outcome_weight: float = Field(default=0.1, ge=0.0, le=1.0)
    failure_threshold: float = Field(default=0.6, ge=-1.0, le=1.0)
    limit: int = Field(default=5, ge=1)
    index_kind: Literal["exact", "hnsw", "auto"] = "auto"
    hnsw_above: int = Field(default=20_000, ge=1)
    ef_search: int = Field(default=128, ge=1)
    verify_patterns: bool = True
    verify_timeout_s: float = Field(default=30.0, gt=0)
