"""Relevance scores with a meaning (issue 26): an unrelated query scores low in every mode,
``min_score`` drops it, and ``retrieve_knowledge`` accepts the specified argument names."""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.docs import DocumentKB, retrieve_knowledge
from costeer_lab.errors import InvalidInputError

from ._docs_helpers import open_kb, write_corpus

UNRELATED = ("bake a chocolate cake", "zzzz qqqq")


def test_unrelated_queries_score_low_in_every_mode(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db", embedder="hashing")
    kb.ingest(write_corpus(tmp_path / "docs"))
    for mode in ("vector", "keyword", "hybrid"):
        for query in UNRELATED:
            hits = kb.retrieve(query, n_results=3, mode=mode)
            assert hits and max(h["relevance_score"] for h in hits) < 0.4, (mode, query)
    related = kb.retrieve("max_retries failed requests", n_results=1, mode="keyword")
    assert related[0]["relevance_score"] > 0.3  # every term present once
    for query in UNRELATED:  # hybrid, the default mode: below the default min_score
        assert kb.retrieve(query, n_results=3)[0]["relevance_score"] < 0.18
    kb.close()


def test_min_score_drops_weak_hits_and_defaults_from_settings(tmp_path: Path) -> None:
    kb = DocumentKB("c", tmp_path / "kb.db", embedder="hashing")
    assert kb.min_score == 0.18
    kb.ingest(write_corpus(tmp_path / "docs"))
    for query in UNRELATED:
        assert kb.retrieve(query) == []
    hits = kb.retrieve("max_retries failed requests", n_results=5)
    assert hits and all(h["relevance_score"] >= 0.18 for h in hits)
    assert hits[0]["metadata"]["section_title"] == "Retries"
    assert len(kb.retrieve("bake a chocolate cake", min_score=0.0)) == 5
    strict = kb.retrieve("max_retries failed requests", n_results=5, min_score=0.99)
    assert strict == []
    with pytest.raises(InvalidInputError, match=r"min_score must be a number in \[0, 1\]"):
        kb.retrieve("retries", min_score=2)
    kb.close()
    loose = DocumentKB("c", tmp_path / "kb.db", embedder="hashing", min_score=0.0)
    assert len(loose.retrieve("zzzz qqqq", n_results=2)) == 2
    loose.close()


def test_retrieve_knowledge_accepts_collection_name_and_db_path(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with DocumentKB("guides", db) as kb:
        kb.ingest(write_corpus(tmp_path / "docs"))
    state = {"messages": [("user", "max_retries failed requests")]}
    new = retrieve_knowledge(state, collection_name="guides", db_path=str(db), n_results=2)
    assert new["context"]["documents"][0]["metadata"]["section_title"] == "Retries"
    positional = retrieve_knowledge(state, "dough", collection_name="guides", db_path=db)
    assert positional["context"]["documents"][0]["metadata"]["section_title"] == "Bread"
    with DocumentKB("guides", db) as kb, pytest.raises(InvalidInputError, match="not both"):
        retrieve_knowledge(state, kb=kb, collection_name="guides")
