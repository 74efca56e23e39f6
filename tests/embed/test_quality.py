"""Embedding quality on a small labelled code/finance set (paraphrases vs unrelated pairs).

Observed when written (mean paraphrase / mean unrelated / lowest paraphrase / highest unrelated):
minilm 0.62 / -0.01 / 0.37 / 0.08; hashing 0.44 / 0.02 / 0.32 / 0.13. The assertions use
looser bounds than observed so they hold robustly, yet fail for a broken embedder.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from costeer_lab.embed import BaseEmbedder, HashingEmbedder, MiniLMEmbedder

from ._embed_pairs import PARAPHRASES, UNRELATED


def _pair_scores(emb: BaseEmbedder, pairs: list[tuple[str, str]]) -> npt.NDArray[np.float32]:
    a = emb.embed([p[0] for p in pairs])
    b = emb.embed([p[1] for p in pairs])
    return np.asarray((a * b).sum(axis=1), dtype=np.float32)


def test_labelled_set_is_big_enough() -> None:
    assert len(PARAPHRASES) >= 10 and len(UNRELATED) >= 10


@pytest.mark.parametrize(
    ("make", "margin"),
    [(HashingEmbedder, 0.25), (MiniLMEmbedder, 0.4)],
    ids=["hashing", "minilm"],
)
def test_paraphrases_score_above_unrelated_pairs(make: type[BaseEmbedder], margin: float) -> None:
    emb = make()
    para = _pair_scores(emb, PARAPHRASES)
    unrelated = _pair_scores(emb, UNRELATED)
    print(
        f"{emb.id}: paraphrase mean {para.mean():.3f} min {para.min():.3f}; "
        f"unrelated mean {unrelated.mean():.3f} max {unrelated.max():.3f}"
    )
    low = [PARAPHRASES[i] for i in np.flatnonzero(para <= unrelated.mean())]
    assert not low, f"paraphrases scoring at or below the mean unrelated pair: {low}"
    assert para.mean() - unrelated.mean() >= margin


def test_minilm_matches_sentence_transformers_reference_scores() -> None:
    """Cosine scores published in the sentence-transformers quickstart for all-MiniLM-L6-v2
    (0.8939, 0.6788, 0.5096); the int8 model agrees to within 0.02."""
    emb = MiniLMEmbedder()
    pairs = [
        ("The new movie is awesome", "The new movie is so great"),
        ("The cat sits outside", "The cat plays in the garden"),
        ("I love pasta", "Do you like pizza?"),
    ]
    np.testing.assert_allclose(_pair_scores(emb, pairs), [0.8939, 0.6788, 0.5096], atol=0.02)
