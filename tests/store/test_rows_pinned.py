"""Input checks every store shares (``costeer_lab.store._rows``), pinned through the stores:
edge attributes must be a dict, and ``put_vectors`` with no ids takes only an empty matrix."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.store import BaseStore, EdgeRecord, NodeRecord, get_store


@pytest.fixture
def store() -> Iterator[BaseStore]:
    with get_store(":memory:") as s:
        s.put_nodes([NodeRecord("a", "k", "A", {}), NodeRecord("b", "k", "B", {})])
        yield s


@pytest.mark.parametrize("attrs", [["w", 1], "w=1", None])
def test_edge_attributes_must_be_a_dict(store: BaseStore, attrs: object) -> None:
    edge = EdgeRecord("a", "b", "link", attrs)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"attrs of edge 'a'->'b' must be a dict"):
        store.put_edges([edge])
    assert list(store.iter_edges()) == []  # nothing written
    store.put_edges([EdgeRecord("a", "b", "link", {"w": 1})])
    assert [e.attrs for e in store.iter_edges()] == [{"w": 1}]


def test_no_ids_take_only_an_empty_matrix(store: BaseStore) -> None:
    store.put_vectors("c", "hashing", [], np.zeros((0, 4), dtype=np.float32))  # a no-op
    assert store.collection_info("c") is None
    for vectors in (np.zeros((2, 4), dtype=np.float32), np.zeros(4, dtype=np.float32)):
        with pytest.raises(InvalidInputError, match="empty 2-D array when no ids are given"):
            store.put_vectors("c", "hashing", [], vectors)
    assert store.collection_info("c") is None
