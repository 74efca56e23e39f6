"""Search correctness: exact vs brute force, HNSW recall, filters, batches."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from costeer_lab.index import FaissIndex
from costeer_lab.index._faiss import IndexKind
from costeer_lab.index._ops import faiss_topk

from .conftest import Oracle, Vecs


def test_exact_top10_equals_numpy_brute_force(
    big: tuple[list[str], npt.NDArray[np.float32]], vecs: Vecs, oracle: Oracle
) -> None:
    brute_force, assert_matches = oracle
    ids, matrix = big
    index = FaissIndex(384, kind="exact")
    index.add(ids, matrix)
    queries = vecs(200, 384, seed=11)
    results = index.search_batch(queries, 10)
    matrix64 = matrix.astype(np.float64)
    for query, result in zip(queries, results, strict=True):
        want_ids, want_scores = brute_force(matrix64, ids, query, 10)
        assert_matches(result.ids, result.scores, want_ids, want_scores)
        assert result.n_candidates == 10_000 and not result.fewer_than_k


def test_queries_are_normalised(
    big: tuple[list[str], npt.NDArray[np.float32]], oracle: Oracle
) -> None:
    brute_force, assert_matches = oracle
    ids, matrix = big
    index = FaissIndex(384)
    index.add(ids[:500], matrix[:500] * 7.5)  # scaled vectors are normalised on add
    query = matrix[600] * 0.01
    result = index.search(query, 5)
    assert_matches(result.ids, result.scores, *brute_force(matrix[:500], ids[:500], query, 5))
    assert max(result.scores) <= 1.0 + 1e-6


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_batch_equals_single_searches(kind: IndexKind, vecs: Vecs) -> None:
    matrix = vecs(2000, 32, seed=3)
    ids = [f"d{i}" for i in range(2000)]
    index = FaissIndex(32, kind=kind)
    index.add(ids, matrix)
    queries = vecs(25, 32, seed=4)
    allowed = set(ids[::3])
    for flt in (None, allowed):
        batch = index.search_batch(queries, 7, filter=flt)
        singles = [index.search(q, 7, filter=flt) for q in queries]
        assert [r.ids for r in batch] == [r.ids for r in singles]
        assert [(r.k, r.n_candidates) for r in batch] == [(r.k, r.n_candidates) for r in singles]
        for b, s in zip(batch, singles, strict=True):  # BLAS batches round differently
            np.testing.assert_allclose(b.scores, s.scores, atol=1e-6)
    assert index.search(queries[:1], 7) == index.search(queries[0], 7)


def test_hnsw_recall_at_10_against_exact(vecs: Vecs) -> None:
    matrix = vecs(5000, 64, seed=5)
    ids = [f"h{i}" for i in range(5000)]
    exact, hnsw = FaissIndex(64), FaissIndex(64, kind="hnsw", ef_search=128)
    exact.add(ids, matrix)
    hnsw.add(ids, matrix)
    queries = vecs(300, 64, seed=6)
    hits = sum(
        len(set(a.ids) & set(b.ids))
        for a, b in zip(
            exact.search_batch(queries, 10), hnsw.search_batch(queries, 10), strict=True
        )
    )
    assert hits / (10 * len(queries)) > 0.95


@pytest.fixture(scope="module")
def filtered_setup(
    vecs: Vecs,
) -> tuple[npt.NDArray[np.float32], list[str], dict[IndexKind, FaissIndex]]:
    """6000 48-d vectors in an exact and an HNSW index (built once for the filter tests)."""
    n = 6000  # 50% of it goes through the HNSW graph, 10% and 1% are scanned exactly
    matrix = vecs(n, 48, seed=8)
    ids = [f"f{i}" for i in range(n)]
    kinds: tuple[IndexKind, ...] = ("exact", "hnsw")
    indexes = {kind: FaissIndex(48, kind=kind, ef_search=128) for kind in kinds}
    for index in indexes.values():
        index.add(ids, matrix)
    return matrix, ids, indexes


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
@pytest.mark.parametrize("form", ["collection", "predicate"])
@pytest.mark.parametrize("every", [2, 10, 100])  # filters matching 50%, 10% and 1%
def test_filtered_search_returns_k_exact_answers(
    kind: IndexKind, form: str, every: int, filtered_setup: Any, vecs: Vecs, oracle: Oracle
) -> None:
    brute_force, assert_matches = oracle
    matrix, ids, indexes = filtered_setup
    index, n = indexes[kind], len(ids)
    keep = [i for i in range(n) if i % every == 0]
    allowed_ids = [ids[i] for i in keep]
    flt = set(allowed_ids) if form == "collection" else (lambda s: int(s[1:]) % every == 0)
    for query in vecs(20, 48, seed=9):
        result = index.search(query, 10, filter=flt)
        assert len(result.ids) == 10 and not result.fewer_than_k
        assert result.n_candidates == len(keep)
        assert set(result.ids) <= set(allowed_ids)
        want_ids, want_scores = brute_force(matrix[keep], allowed_ids, query, 10)
        if kind == "exact" or len(keep) <= FaissIndex.exact_below:
            assert_matches(result.ids, result.scores, want_ids, want_scores)
        else:  # approximate, but still ranked by true cosine similarity
            assert list(result.scores) == sorted(result.scores, reverse=True)
            assert len(set(result.ids) & set(want_ids)) >= 8


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_filter_with_fewer_than_k_matches(kind: IndexKind, vecs: Vecs) -> None:
    matrix = vecs(300, 16, seed=10)
    ids = [f"s{i}" for i in range(300)]
    index = FaissIndex(16, kind=kind)
    index.add(ids, matrix)
    result = index.search(matrix[0], 10, filter=["s5", "s7", "s9", "not-there"])
    assert sorted(result.ids) == ["s5", "s7", "s9"]
    assert result.n_candidates == 3 and result.fewer_than_k and result.k == 10
    assert list(result.scores) == sorted(result.scores, reverse=True)
    nothing = index.search(matrix[0], 3, filter=lambda s: False)
    assert nothing.ids == () and nothing.n_candidates == 0 and nothing.fewer_than_k


def test_hnsw_graph_misses_are_rescored_exactly(vecs: Vecs, oracle: Oracle) -> None:
    """Force the graph path for a 1% filter: the walk finds too few, the scan completes it."""
    brute_force, assert_matches = oracle
    matrix = vecs(3000, 32, seed=12)
    ids = [f"g{i}" for i in range(3000)]
    index = FaissIndex(32, kind="hnsw", hnsw_m=8, ef_search=16)
    index.exact_below, index.hnsw_exact_fraction = 0, 0.0
    index.add(ids, matrix)
    keep = list(range(0, 3000, 100))
    mask = np.zeros(3000, dtype=bool)
    mask[keep] = True
    queries = vecs(10, 32, seed=13)
    raw_labels, _ = faiss_topk(index._index, queries, 10, mask, 16)
    assert (raw_labels < 0).any()  # the bare graph walk really comes back short
    for query in queries:
        result = index.search(query, 10, filter={ids[i] for i in keep})
        assert_matches(
            result.ids,
            result.scores,
            *brute_force(matrix[keep], [ids[i] for i in keep], query, 10),
        )


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_k_larger_than_index_and_empty_index(kind: IndexKind, vecs: Vecs) -> None:
    index = FaissIndex(8, kind=kind)
    empty = index.search(vecs(1, 8, seed=1)[0], 4)
    assert empty.ids == () and empty.scores == () and empty.fewer_than_k
    assert empty.n_candidates == 0
    index.add(["a", "b"], vecs(2, 8, seed=2))
    result = index.search(vecs(1, 8, seed=3)[0], 5)
    assert sorted(result.ids) == ["a", "b"] and result.fewer_than_k and result.n_candidates == 2


def test_scores_are_cosine_similarities() -> None:
    index = FaissIndex(2)
    index.add(["x", "y", "xy"], np.array([[1, 0], [0, 2], [3, 3]], dtype=np.float32))
    result = index.search(np.array([1.0, 0.0]), 3)
    assert result.ids == ("x", "xy", "y")
    np.testing.assert_allclose(result.scores, [1.0, np.sqrt(0.5), 0.0], atol=1e-6)
