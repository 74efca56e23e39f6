"""Settings of the RAG strategies (section ``rag``; env names ``COSTEER_LAB_RAG__<FIELD>``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from costeer_lab.settings._index import HNSW_ABOVE

__all__ = ["RAGSettings"]


class RAGSettings(BaseModel):
    """Limits and sampler of the RAG strategies; env names ``COSTEER_LAB_RAG__<FIELD>``.

    Attributes:
        max_former_traces: former-trace query: at most this many of the task's own attempts.
        drop_deteriorated: former-trace query: leave out attempts that did worse than an earlier
            one (failed at an earlier stage — crashed or produced nothing < produced a wrong
            result < success, as the evaluator reports the run, see
            ``knowledge._attempts.attempt_level`` — or, at the same stage, a lower
            ``feedback.details["score"]``).
        include_latest_attempt: former-trace query: always include the latest attempt, even
            when it deteriorated, so the coder sees its last mistake.
        trial_limit: a task with this many failed attempts in a run is marked failed
            (``QueriedKnowledge.failed_task_info_set``) and skipped from then on.
        max_similar: similar successful implementations per task (by description embedding).
        max_component_matches: component query: successful tasks sharing components.
        component_gt_ratio: component query: the share of matches drawn from ground-truth seed
            knowledge (the rest from self-earned successes); a pool that runs short is filled
            from the other.
        max_error_fixes: error query: ``(error, failing code, fixed code)`` triples per task.
        error_similarity: error query: when no stored error has the same fingerprint, errors
            whose fingerprint embedding has at least this cosine similarity are used (``1.0``
            turns the fallback off).
        candidate_multiplier: searches restricted to successful tasks first fetch
            ``k * candidate_multiplier`` unfiltered neighbours and fall back to a filtered
            search only when fewer than ``k`` of them qualify (same answer, much faster).
        sampler: how the knowledge sampler picks among ranked candidates: ``top`` (best
            first), ``random`` (uniform), ``weighted`` (softmax of the scores) or ``keep``
            (each candidate kept when a seeded ``uniform() <= sampler_keep_probability``, in
            ranked order, at most the limit).
        sampler_temperature: softmax temperature of the ``weighted`` sampler.
        sampler_keep_probability: ``p`` of the ``keep`` sampler.
        seed: seed of the sampler; each draw is seeded by (seed, run, task, attempt, query).
        index_kind: FAISS index of the task-description collection: ``auto`` (exact below
            ``hnsw_above`` task descriptions, HNSW from there on: the same store always gets
            the same kind), ``exact`` or ``hnsw``.
        hnsw_above: the size from which ``auto`` uses HNSW. The default is measured on the
            benchmark's task descriptions (``python -m benchmarks.index_auto``): from 10k on
            HNSW answers faster than the exact scan, with recall@64 >= 0.99 against it.
        hnsw_m / hnsw_ef_construction / hnsw_ef_search: HNSW graph parameters (defaults: the
            smallest measured with recall@64 >= 0.99 up to 100k task descriptions; M=16,
            efConstruction=40 reach only 0.98 at 100k even with efSearch=256). Beyond ~150k
            task descriptions efSearch 128 falls under 0.99 (0.989 at 200k; 256: 0.998), and
            ``hnsw_ef_search`` is a per-search setting: raising it needs no rebuild.
        component_extractor: ``builtin`` (deterministic) or ``llm`` (through ``openai``).
        llm_model: model of the LLM component extractor.
        log_queries: write a ``query_log`` record per query.
        former_trace_query / similar_query / component_query / error_query: run that query
            kind (``false`` ablates it: the kind is neither run, logged nor handed to the coder).
        demote_harmful: move knowledge items flagged harmful (used by at least
            ``harmful_min_retrievals`` attempts recorded in this KB's store, which succeeded
            less often than the same tasks' other attempts, at level ``harmful_alpha``) behind
            all other candidates.
        harmful_min_retrievals / harmful_alpha: the harmful-memory test (minimum number of
            attempts that *used* the item, and the level; see
            :func:`costeer_lab.knowledge.find_harmful`).

    Example:
        >>> RAGSettings().max_former_traces
        3
    """

    max_former_traces: int = Field(default=3, ge=0)
    drop_deteriorated: bool = True
    include_latest_attempt: bool = True
    trial_limit: int = Field(default=10, ge=1)
    max_similar: int = Field(default=3, ge=0)
    max_component_matches: int = Field(default=3, ge=0)
    component_gt_ratio: float = Field(default=0.5, ge=0.0, le=1.0)
    max_error_fixes: int = Field(default=2, ge=0)
    error_similarity: float = Field(default=0.9, ge=-1.0, le=1.0)
    candidate_multiplier: int = Field(default=4, ge=1)
    sampler: Literal["top", "random", "weighted", "keep"] = "top"
    sampler_temperature: float = Field(default=1.0, gt=0.0)
    sampler_keep_probability: float = Field(default=0.5, ge=0.0, le=1.0)
    seed: int = 0
    index_kind: Literal["exact", "hnsw", "auto"] = "auto"
    hnsw_above: int = Field(default=HNSW_ABOVE, ge=1)
    hnsw_m: int = Field(default=32, ge=4)
    hnsw_ef_construction: int = Field(default=80, ge=8)
    hnsw_ef_search: int = Field(default=128, ge=8)
    component_extractor: Literal["builtin", "llm"] = "builtin"
    llm_model: str = "gpt-4o-mini"
    log_queries: bool = True
    former_trace_query: bool = True
    similar_query: bool = True
    component_query: bool = True
    error_query: bool = True
    demote_harmful: bool = False
    harmful_min_retrievals: int = Field(default=3, ge=1)
    harmful_alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
