"""The document knowledge base: ingest Markdown, reStructuredText, text and Python docstrings;
retrieve chunks by vector, keyword (BM25) or hybrid (RRF) search with metadata filters applied
before ranking, versions, topics, MMR; hand the results to agents.

Example:
    >>> from costeer_lab.docs import DocumentKB, format_knowledge_context
    >>> kb = DocumentKB("readme", db_path=":memory:")
    >>> _ = kb.add_text("# Install\\npip install costeer-lab", path="README.md")
    >>> hits = kb.retrieve("how to install", n_results=1)
    >>> print(format_knowledge_context(hits).splitlines()[1])
    [1] README.md — Install (relevance 0.58)
"""

from costeer_lab.docs._agent import format_knowledge_context, last_user_message, retrieve_knowledge
from costeer_lab.docs._chunk import (
    Chunk,
    FileType,
    Section,
    chunk_text,
    split_pieces,
    split_sections,
)
from costeer_lab.docs._evaluate import (
    LabelledQuery,
    RetrievalScores,
    evaluate_retrieval,
    load_labelled_queries,
    score_hits,
)
from costeer_lab.docs._filter import COMPARISONS, Columns, check_where, evaluate_where, version_key
from costeer_lab.docs._fusion import mmr_select, reciprocal_rank_fusion
from costeer_lab.docs._ingest import IngestReport
from costeer_lab.docs._kb import DocumentKB
from costeer_lab.docs._keyword import STOPWORDS, KeywordIndex, keyword_tokens
from costeer_lab.docs._packages import package_readme, write_package_readmes
from costeer_lab.docs._reading import EmptyCollectionWarning, KBReader
from costeer_lab.docs._rerank import EmbeddingReranker, Reranker, rerank
from costeer_lab.docs._search import MODES, Mode, SearchView
from costeer_lab.docs._source import SUFFIXES, parse_front_matter, version_from_path
from costeer_lab.docs._stored import FileRecord, list_collections

__all__ = [
    "COMPARISONS",
    "MODES",
    "STOPWORDS",
    "SUFFIXES",
    "Chunk",
    "Columns",
    "DocumentKB",
    "EmbeddingReranker",
    "EmptyCollectionWarning",
    "FileRecord",
    "FileType",
    "IngestReport",
    "KBReader",
    "KeywordIndex",
    "LabelledQuery",
    "Mode",
    "Reranker",
    "RetrievalScores",
    "SearchView",
    "Section",
    "check_where",
    "chunk_text",
    "evaluate_retrieval",
    "evaluate_where",
    "format_knowledge_context",
    "keyword_tokens",
    "last_user_message",
    "list_collections",
    "load_labelled_queries",
    "mmr_select",
    "package_readme",
    "parse_front_matter",
    "reciprocal_rank_fusion",
    "rerank",
    "retrieve_knowledge",
    "score_hits",
    "split_pieces",
    "split_sections",
    "version_from_path",
    "version_key",
    "write_package_readmes",
]
