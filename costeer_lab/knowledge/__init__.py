"""CoSTEER knowledge: error fingerprints, knowledge bases V1/V2 and RAG strategies V1/V2.

The evolution loop uses two calls::

    kb = open_kb(store="sqlite:///run.db", version="v2", embedder="hashing")
    kb.add_seed_knowledge(ground_truth_knowledge)          # provenance "ground_truth"
    strategy = make_rag_strategy("v2", seed=0)
    qk = strategy.query(kb, tasks, last_feedback, run_id="r", attempt=1)
    strategy.generate_knowledge(kb, [(task, workspace, feedback), ...], run_id="r")

Error fingerprints (defined in the bottom layer, :mod:`costeer_lab._fingerprint`, which the
evaluators use too) import eagerly; the knowledge bases, which need the
store, embedders and FAISS, are imported on first use.

Example:
    >>> from costeer_lab.knowledge import error_fingerprint
    >>> error_fingerprint("KeyError: 'close'")
    'KeyError: <str>'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from costeer_lab._fingerprint import error_fingerprint
from costeer_lab._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from costeer_lab.knowledge._components import BuiltinComponentExtractor, ComponentExtractor
    from costeer_lab.knowledge._components_llm import LLMComponentExtractor
    from costeer_lab.knowledge._factory import kb_search, kb_stats, make_rag_strategy, open_kb
    from costeer_lab.knowledge._harmful import HarmfulItem, find_harmful
    from costeer_lab.knowledge._kb_v1 import KnowledgeBaseV1
    from costeer_lab.knowledge._kb_v2 import KnowledgeBaseV2
    from costeer_lab.knowledge._options import validate_rag_options
    from costeer_lab.knowledge._querylog import QUERY_LOG_KIND, iter_query_log
    from costeer_lab.knowledge._rag_v1 import RAGStrategyV1
    from costeer_lab.knowledge._rag_v2 import RAGStrategyV2
    from costeer_lab.knowledge._relevance import (
        current_causes,
        fix_relevant,
        relevance_components,
        tasks_related,
        trace_relevant,
    )
    from costeer_lab.settings import RAGSettings

_LAZY: dict[str, str] = {
    "BuiltinComponentExtractor": "._components",
    "ComponentExtractor": "._components",
    "LLMComponentExtractor": "._components_llm",
    "kb_search": "._factory",
    "kb_stats": "._factory",
    "make_rag_strategy": "._factory",
    "open_kb": "._factory",
    "validate_rag_options": "._options",
    "HarmfulItem": "._harmful",
    "find_harmful": "._harmful",
    "KnowledgeBaseV1": "._kb_v1",
    "KnowledgeBaseV2": "._kb_v2",
    "QUERY_LOG_KIND": "._querylog",
    "iter_query_log": "._querylog",
    "RAGStrategyV1": "._rag_v1",
    "RAGStrategyV2": "._rag_v2",
    "RAGSettings": "costeer_lab.settings",
    "current_causes": "._relevance",
    "fix_relevant": "._relevance",
    "relevance_components": "._relevance",
    "tasks_related": "._relevance",
    "trace_relevant": "._relevance",
}

__all__ = [
    "QUERY_LOG_KIND",
    "BuiltinComponentExtractor",
    "ComponentExtractor",
    "HarmfulItem",
    "KnowledgeBaseV1",
    "KnowledgeBaseV2",
    "LLMComponentExtractor",
    "RAGSettings",
    "RAGStrategyV1",
    "RAGStrategyV2",
    "current_causes",
    "error_fingerprint",
    "find_harmful",
    "fix_relevant",
    "iter_query_log",
    "kb_search",
    "kb_stats",
    "make_rag_strategy",
    "open_kb",
    "relevance_components",
    "tasks_related",
    "trace_relevant",
    "validate_rag_options",
]


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, __all__)
