"""Bad input is refused with errors naming the value and what was expected."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from costeer_lab.errors import EmbedderMismatchError, InvalidInputError
from costeer_lab.index import DimensionMismatchError, FaissIndex


@pytest.fixture
def index() -> FaissIndex:
    idx = FaissIndex(4, embedder_id="hashing@1:4")
    idx.add(["a", "b"], np.eye(4, dtype=np.float32)[:2])
    return idx


def test_dimension_mismatch_names_both_dims(index: FaissIndex) -> None:
    with pytest.raises(InvalidInputError, match=r"dimension 5 .*dimension 4"):
        index.add(["c"], np.ones((1, 5), dtype=np.float32))
    with pytest.raises(EmbedderMismatchError, match=r"dimension 3 .*dimension 4"):
        index.search(np.ones(3), 1)
    with pytest.raises(DimensionMismatchError):
        index.search_batch(np.ones((2, 8)), 1)


def test_embedder_mismatch_names_both(index: FaissIndex) -> None:
    with pytest.raises(EmbedderMismatchError, match=r"'minilm@1:4'.*'hashing@1:4'"):
        index.add(["c"], np.ones((1, 4)), embedder_id="minilm@1:4")
    with pytest.raises(EmbedderMismatchError, match="minilm"):
        index.search(np.ones(4), 1, embedder_id="minilm@1:4")
    index.add(["c"], np.ones((1, 4)), embedder_id="hashing@1:4")  # same id is fine
    assert len(index) == 3


def test_embedder_id_is_adopted_when_unset() -> None:
    idx = FaissIndex(2)
    idx.add(["a"], np.ones((1, 2)), embedder_id="e@1:2")
    assert idx.embedder_id == "e@1:2"
    with pytest.raises(EmbedderMismatchError):
        idx.add(["b"], np.ones((1, 2)), embedder_id="f@1:2")


@pytest.mark.parametrize(
    ("ids", "vectors", "match"),
    [
        ([], np.ones((0, 4)), "empty"),
        (["c"], np.ones((0, 4)), "empty"),
        ("c", np.ones((1, 4)), "single str"),
        (["c", "c"], np.ones((2, 4)), "'c' more than once"),
        ([3], np.ones((1, 4)), "item 0 is int"),
        (["c", None], np.ones((2, 4)), "item 1 is NoneType"),
        (["c"], np.ones((2, 4)), "1 ids but 2 vectors"),
        (["c"], np.zeros((1, 4)), "row 0 is a zero vector"),
        (["c"], np.array([[1, np.nan, 0, 0]]), "NaN"),
        (["c"], np.ones(4), "must be 2-D"),
        (["a"], np.ones((1, 4)), "already in the index.*'a'.*upsert"),
    ],
)
def test_bad_add_input(index: FaissIndex, ids: Any, vectors: Any, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        index.add(ids, vectors)
    assert sorted(index.ids()) == ["a", "b"]  # nothing was added


def test_bad_search_input(index: FaissIndex) -> None:
    for k in (0, -3, 2.5, True, "3"):
        with pytest.raises(InvalidInputError, match="k must be a positive int"):
            index.search(np.ones(4), k)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="zero vector"):
        index.search(np.zeros(4), 1)
    with pytest.raises(InvalidInputError, match="search_batch"):
        index.search(np.ones((2, 4)), 1)
    with pytest.raises(InvalidInputError, match="empty"):
        index.search_batch(np.ones((0, 4)), 1)
    with pytest.raises(InvalidInputError, match="collection of string ids or a predicate"):
        index.search(np.ones(4), 1, filter="a")
    with pytest.raises(InvalidInputError, match="filter ids must be strings"):
        index.search(np.ones(4), 1, filter=[1, 2])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="strings"):
        index.remove([1])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="collection of strings"):
        index.remove("a")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dim": 0}, "dim must be a positive int"),
        ({"dim": 4, "kind": "ivf"}, "kind must be 'exact' or 'hnsw'"),
        ({"dim": 4, "hnsw_m": 0}, "hnsw_m"),
        ({"dim": 4, "embedder_id": 3}, "embedder_id"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        FaissIndex(**kwargs)
