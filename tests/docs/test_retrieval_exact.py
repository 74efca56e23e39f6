"""Retrieval parts pinned exactly (chunking, BM25, fusion, reranking, retrieval scores): tests
written for the mutants that survived ``make mutation``."""

from __future__ import annotations

import pytest

from costeer_lab.docs import reciprocal_rank_fusion
from costeer_lab.errors import InvalidInputError


def test_rrf_refuses_all_zero_weights_but_not_no_rankings() -> None:
    assert reciprocal_rank_fusion([]) == []
    with pytest.raises(InvalidInputError, match=r"1 rankings, weights \[0\.0\]"):
        reciprocal_rank_fusion([["a"]], weights=[0.0])
    with pytest.raises(InvalidInputError, match="RRF k must be an int >= 0, got True"):
        reciprocal_rank_fusion([["a"]], k=True)
