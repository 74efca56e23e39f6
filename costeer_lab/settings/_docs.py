"""Settings of the document knowledge base (section ``docs``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from costeer_lab.settings._index import HNSW_ABOVE

__all__ = ["DocsSettings", "default_data_dir"]


def default_data_dir() -> Path:
    """``$COSTEER_LAB_DATA_DIR``, else ``$XDG_DATA_HOME/costeer_lab``, else
    ``~/.local/share/costeer_lab`` (not created here).

    Example:
        >>> default_data_dir().name in ("costeer_lab",) or "COSTEER_LAB_DATA_DIR" in os.environ
        True
    """
    env = os.environ.get("COSTEER_LAB_DATA_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "costeer_lab"


class DocsSettings(BaseModel):
    """Document knowledge base settings; env names ``COSTEER_LAB_DOCS__<FIELD>``.

    The collection and the database file have top-level env names (``COSTEER_LAB_COLLECTION``,
    ``COSTEER_LAB_DB_PATH``): see :class:`~costeer_lab.settings.Settings`.

    Attributes:
        embedder: embedder of new collections (``hashing``, ``minilm``, ``openai:<model>``).
        chunk_size: the size cap of a chunk in characters (its heading line not counted).
        chunk_overlap: characters repeated from the end of a piece at the start of the next.
        index_kind: FAISS index of the chunk vectors: ``auto`` (exact below ``hnsw_above``
            chunks, HNSW from there on), ``exact`` or ``hnsw``.
        hnsw_above: the size from which ``auto`` uses HNSW.
        mode: retrieval mode when none is given: ``vector``, ``keyword`` or ``hybrid``.
        fusion: how hybrid retrieval combines its rankings: ``score`` (default; a weighted
            mean of calibrated similarities, so an unrelated query scores low) or ``rrf``
            (reciprocal rank fusion: a rank, the top hit always scores 1).
        vector_weight: weight of the vector similarity in ``score`` fusion (the keyword
            score gets ``1 - vector_weight``).
        min_score: results scoring below this are dropped (0 keeps everything). The
            default 0.18 is measured on the project's labelled set for ``hybrid`` mode: the
            unrelated queries of ``benchmarks/docs.py`` score at most 0.16 with both offline
            embedders, and 93 % (hashing) / 97 % (MiniLM) of the relevant top-5 hits score
            above it. Vector-mode cosines run higher: raise it for ``vector`` mode.
        rerank: re-score the best ``rerank_k`` candidates of every retrieval with the
            reranker (``retrieve(..., rerank=)`` overrides it); see
            :mod:`costeer_lab.docs._rerank` and ``benchmarks/docs.py`` for its measured gain.
        rerank_k: how many first-stage candidates the reranker re-scores.
        rerank_model: the reranker's embedder (cosine of the query and each candidate with
            its section path); ``minilm`` runs offline.
        rerank_weight: weight of the reranker's similarity in the final score (the
            first-stage score gets ``1 - rerank_weight``; the result stays in [0, 1], so
            ``min_score`` keeps its meaning).
        rerank_floor: the reranker cosine mapped to similarity 0 (MiniLM gives unrelated
            texts about 0.15).
        rrf_k: the reciprocal rank fusion constant (``fusion="rrf"``).
        candidates: each ranking fused by hybrid retrieval (and offered to MMR) holds
            ``max(candidates, 4 * n_results)`` chunks.
        mmr_lambda: MMR trade-off (1 pure relevance, 0 pure diversity).
        progress_min_files: show a progress bar when ingesting at least this many files.
        secrets: what ingestion does with a document holding a credential (an AWS key, a
            private key block, a token, a password assignment, …): ``redact`` replaces each
            secret by ``[REDACTED <kind>]``, ``refuse`` refuses the document.

    Example:
        >>> DocsSettings().chunk_size
        1500
    """

    embedder: str = "hashing"
    chunk_size: int = Field(default=1500, ge=50)
    chunk_overlap: int = Field(default=150, ge=0)
    index_kind: Literal["exact", "hnsw", "auto"] = "auto"
    hnsw_above: int = Field(default=HNSW_ABOVE, ge=1)
    mode: Literal["vector", "keyword", "hybrid"] = "hybrid"
    fusion: Literal["score", "rrf"] = "score"
    vector_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    min_score: float = Field(default=0.18, ge=0.0, le=1.0)
    rerank: bool = False
    rerank_k: int = Field(default=20, ge=1)
    rerank_model: str = "minilm"
    rerank_weight: float = Field(default=0.7, ge=0.0, le=1.0)
    rerank_floor: float = Field(default=0.15, ge=0.0, lt=1.0)
    rrf_k: int = Field(default=60, ge=0)
    candidates: int = Field(default=40, ge=1)
    mmr_lambda: float = Field(default=0.5, ge=0.0, le=1.0)
    progress_min_files: int = Field(default=50, ge=1)
    secrets: Literal["redact", "refuse"] = "redact"
