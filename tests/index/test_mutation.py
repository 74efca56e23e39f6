"""Adding, upserting and removing: both kinds stay consistent with a plain dict model."""

from __future__ import annotations

import numpy as np
import pytest

from costeer_lab.index import FaissIndex
from costeer_lab.index._faiss import IndexKind

from .conftest import Vecs


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_upsert_replaces_vector(kind: IndexKind, vecs: Vecs) -> None:
    matrix = vecs(50, 16, seed=1)
    ids = [f"u{i}" for i in range(50)]
    index = FaissIndex(16, kind=kind)
    index.add(ids, matrix)
    new = vecs(1, 16, seed=99)
    index.upsert(["u3", "brand-new"], np.vstack([new, matrix[0]]))
    assert len(index) == 51 and "brand-new" in index and "u3" in index
    top = index.search(new[0], 1)
    assert top.ids == ("u3",) and top.scores[0] == pytest.approx(1.0, abs=1e-5)
    # the old vector of u3 is gone: u3 now scores like its new vector
    assert index.search(matrix[3], 50, filter={"u3"}).scores[0] == pytest.approx(
        float(new[0] @ matrix[3]), abs=1e-5
    )


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_remove(kind: IndexKind, vecs: Vecs) -> None:
    matrix = vecs(200, 16, seed=2)
    ids = [f"r{i}" for i in range(200)]
    index = FaissIndex(16, kind=kind)
    index.add(ids, matrix)
    assert index.remove(["r0", "r1", "r1", "missing"]) == 2
    assert len(index) == 198 and "r0" not in index and "r1" not in index
    assert index.remove([]) == 0
    result = index.search(matrix[0], 198)
    assert "r0" not in result.ids and len(result.ids) == 198
    assert index.search(matrix[0], 5, filter={"r0", "r1"}).n_candidates == 0
    index.add(["r0"], matrix[0:1])  # a removed id can be added again
    assert index.search(matrix[0], 1).ids == ("r0",)


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_tombstones_then_compaction(kind: IndexKind, vecs: Vecs) -> None:
    matrix = vecs(400, 16, seed=3)
    ids = [f"t{i}" for i in range(400)]
    index = FaissIndex(16, kind=kind)
    index.add(ids, matrix)
    index.remove(ids[:50])  # 12.5% dead: kept as tombstones, skipped by searches
    assert index.n_tombstones == 50 and len(index) == 350
    for q in matrix[:50]:
        assert not set(index.search(q, 20).ids) & set(ids[:50])
        assert index.search(q, 1).ids == (ids[int(np.argmax(matrix[50:] @ q)) + 50],)
    index.remove(ids[50:150])  # 150/400 > 25%: the graph is rebuilt from live vectors
    assert index.n_tombstones == 0 and len(index) == 250
    assert sorted(index.ids()) == sorted(ids[150:])
    assert index.search(matrix[200], 1).ids == ("t200",)


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_random_operations_match_dict_model(kind: IndexKind, vecs: Vecs) -> None:
    """A seeded mix of add/upsert/remove; full-length searches must equal a numpy scan."""
    rng = np.random.default_rng(0)
    dim = 12
    pool = vecs(300, dim, seed=4)
    model: dict[str, np.ndarray] = {}
    index = FaissIndex(dim, kind=kind, hnsw_m=8)
    for step in range(60):
        op = rng.choice(["add", "upsert", "remove"], p=[0.4, 0.35, 0.25])
        names = sorted({f"m{int(i)}" for i in rng.integers(0, 80, size=int(rng.integers(1, 8)))})
        rows = pool[rng.integers(0, 300, size=len(names))]
        if op == "add":
            names = [n for n in names if n not in model]
            if not names:
                continue
            rows = rows[: len(names)]
            index.add(names, rows)
            model.update(zip(names, rows, strict=True))
        elif op == "upsert":
            index.upsert(names, rows)
            model.update(zip(names, rows, strict=True))
        else:
            assert index.remove(names) == sum(n in model for n in names)
            for n in names:
                model.pop(n, None)
        assert sorted(index.ids()) == sorted(model)
        if model and step % 5 == 0:
            query = pool[step]
            result = index.search(query, len(model))
            want = sorted(model, key=lambda n: -float(model[n] @ query))
            assert set(result.ids) == set(model)
            np.testing.assert_allclose(
                result.scores, [float(model[n] @ query) for n in want], atol=1e-5
            )
