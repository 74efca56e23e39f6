"""Ranking pinned exactly: rank fusion's scores, scores kept in [0, 1], the ``min_score``
boundary and the argument checks of ``rank``."""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.docs._search import rank
from costeer_lab.errors import InvalidInputError

from ._docs_helpers import open_kb, write_corpus

QUERIES = ("max_retries failed requests", "knead the dough", "zzzz qqqq", "client timeout")


def test_rank_fusion_puts_the_top_hit_at_one(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db", fusion="rrf")
    kb.ingest(write_corpus(tmp_path / "docs"))
    hits = kb.retrieve("max_retries failed requests", n_results=4, mode="hybrid")
    scores = [h["relevance_score"] for h in hits]
    assert len({h["content"] for h in hits}) == 4
    assert scores[0] == 1.0 and scores == sorted(scores, reverse=True) and scores[-1] > 0
    assert hits[0]["metadata"]["section_title"] == "Retries"
    kb.close()


def test_every_mode_scores_within_zero_and_one(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(write_corpus(tmp_path / "docs"))
    for mode in ("vector", "keyword", "hybrid"):
        for query in QUERIES:
            for hit in kb.retrieve(query, n_results=20, mode=mode):
                assert 0.0 <= hit["relevance_score"] <= 1.0, (mode, query, hit)
    kb.close()


def test_a_hit_scoring_exactly_min_score_is_kept(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(write_corpus(tmp_path / "docs"))
    kb.retrieve("warm up", n_results=1)  # embeds every chunk
    args = {"mode": "keyword", "mask": None, "rrf_k": 60, "candidates": 10}
    query = "max_retries failed requests"
    ranked = rank(kb.view(), kb.vectors, query, 3, **args)  # type: ignore[arg-type]
    edge = ranked[1].score
    assert 0 < edge < ranked[0].score
    kept = rank(kb.view(), kb.vectors, query, 3, min_score=edge, **args)  # type: ignore[arg-type]
    assert kept == ranked[:2]
    kb.close()


def test_rank_names_a_bad_mode_or_fusion() -> None:
    common = {"mask": None, "rrf_k": 60, "candidates": 10}
    with pytest.raises(InvalidInputError) as err:
        rank(None, None, "q", 1, mode="dense", **common)  # type: ignore[arg-type]
    assert str(err.value) == "mode must be one of vector, keyword, hybrid, got 'dense'"
    with pytest.raises(InvalidInputError) as err:
        rank(None, None, "q", 1, mode="vector", fusion="max", **common)  # type: ignore[arg-type]
    assert str(err.value) == "fusion must be 'score' or 'rrf', got 'max'"
