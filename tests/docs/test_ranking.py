"""BM25 scores against bm25s itself, reciprocal rank fusion and MMR on exact numbers."""

from __future__ import annotations

import bm25s
import numpy as np
import pytest

from costeer_lab.docs import KeywordIndex, keyword_tokens, mmr_select, reciprocal_rank_fusion
from costeer_lab.errors import InvalidInputError

TEXTS = [
    "rolling mean of the close price",
    "volume spike detector on the close",
    "mean reversion of prices",
    "unrelated cooking notes",
    "max_retries sets how often requests are retried",
]


def test_keyword_tokens() -> None:
    assert keyword_tokens("How do I set max_retries? The API's v2!") == [
        "set",
        "max_retries",
        "max",
        "retries",
        "api's",
        "v2",
    ]


def test_bm25_scores_equal_bm25s_scores() -> None:
    index = KeywordIndex(TEXTS)
    reference = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    reference.index([keyword_tokens(t) for t in TEXTS], show_progress=False)
    for query in ("close mean", "retries", "prices reversion close", "absent words"):
        tokens = [t for t in keyword_tokens(query) if t in reference.vocab_dict]
        want = reference.get_scores(tokens) if tokens else np.zeros(len(TEXTS))
        np.testing.assert_allclose(index.scores(query), want, rtol=1e-6)


def test_top_k_respects_the_mask_and_skips_zero_scores() -> None:
    index = KeywordIndex(TEXTS)
    rows, scores = index.top_k("close mean", 5)
    assert rows.tolist() == [0, 2, 1] and scores[0] > scores[1] > scores[2] > 0
    mask = np.array([False, True, True, True, True])
    assert index.top_k("close mean", 5, mask)[0].tolist() == [2, 1]
    assert index.top_k("close mean", 1, mask)[0].tolist() == [2]
    assert KeywordIndex([]).top_k("x", 3)[0].tolist() == []


def test_reciprocal_rank_fusion_exact() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]], k=1)
    best = 1 / 2 + 1 / 2
    want = {"a": (1 / 2 + 1 / 3) / best, "c": (1 / 4 + 1 / 2) / best, "b": (1 / 3) / best}
    assert [i for i, _ in fused] == ["a", "c", "b"]
    for item, score in fused:
        assert score == pytest.approx(want[item])
    weighted = reciprocal_rank_fusion([["a"], ["b"]], k=0, weights=[1.0, 3.0])
    assert weighted == [("b", 0.75), ("a", 0.25)]
    assert reciprocal_rank_fusion([["x", "y"], ["y", "x"]])[0][0] == "x"  # tie: first seen
    with pytest.raises(InvalidInputError, match="one non-negative weight per ranking"):
        reciprocal_rank_fusion([["a"]], weights=[1.0, 2.0])
    with pytest.raises(InvalidInputError, match="RRF k must be an int >= 0, got -1"):
        reciprocal_rank_fusion([["a"]], k=-1)


def test_mmr_trades_relevance_for_diversity() -> None:
    vecs = np.array([[1, 0, 0], [0.99, 0.141, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rel = [1.0, 0.95, 0.5, 0.4]
    assert mmr_select(rel, vecs, 3, lambda_mult=1.0) == [0, 1, 2]
    assert mmr_select(rel, vecs, 3, lambda_mult=0.5) == [0, 2, 3]
    assert mmr_select(rel, vecs, 10, lambda_mult=0.5) == [0, 2, 3, 1]
    assert mmr_select([], np.zeros((0, 3), dtype=np.float32), 2) == []
    with pytest.raises(InvalidInputError, match="within"):
        mmr_select(rel, vecs, 2, lambda_mult=1.5)
    with pytest.raises(InvalidInputError, match="one vector per candidate"):
        mmr_select(rel, vecs[:2], 2)
