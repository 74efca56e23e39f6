"""The relational layer (``store/_relational.py``): one copy of each shared data method."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.store import NodeRecord, PostgresStore, SQLiteStore, open_existing_store
from costeer_lab.store._relational import RelationalMixin

from ._openers import Opener

SHARED = [
    "put_nodes",
    "get_nodes",
    "iter_nodes",
    "iter_node_kinds",
    "count_nodes",
    "delete_nodes",
    "put_edges",
    "iter_edges",
    "iter_edge_keys",
    "count_edges",
    "delete_edges",
    "put_cached_embeddings",
    "put_vectors",
    "delete_vectors",
    "collection_version",
    "collection_state",
    "collection_states",
    "collection_info",
    "put_records",
    "get_record",
    "get_records",
    "iter_records",
    "count_records",
    "delete_records",
    "get_meta",
    "set_meta",
    "close",
]


@pytest.mark.parametrize("store_class", [SQLiteStore, PostgresStore])
def test_both_backends_run_the_one_shared_copy(store_class: type) -> None:
    """A backend that defines a shared method again has forked it: change the layer instead."""
    forked = [
        name for name in SHARED if getattr(store_class, name) is not getattr(RelationalMixin, name)
    ]
    assert forked == []


def test_a_read_only_store_takes_empty_writes_as_nothing_to_do(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "kb.db") as store:
        store.put_nodes([NodeRecord("n1", "component", "op:mean")])
    with open_existing_store(tmp_path / "kb.db") as store:
        assert store.read_only
        store.put_nodes([])
        store.put_records("rec", [])
        assert store.delete_nodes([]) == 0
        assert store.delete_edges([]) == 0
        assert store.delete_records("rec", []) == 0
        assert store.delete_vectors("c", []) == 0
        assert store.count_nodes() == 1


def test_collection_states_read_at_once_equal_each_state(opener: Opener) -> None:
    """One read of several collections gives each one's ``collection_state``, a never-written
    one ``(0, "")``, a name given twice once; bad names are refused by name."""
    store = opener()
    vecs = np.eye(2, dtype=np.float32)
    store.put_vectors("a", "e@1:2", ["x", "y"], vecs)
    store.put_vectors("b", "e@1:2", ["x"], vecs[:1])
    store.put_vectors("a", "e@1:2", ["z"], vecs[1:])
    states = store.collection_states(["b", "a", "never", "a"])
    assert list(states) == ["b", "a", "never"]
    assert states == {n: store.collection_state(n) for n in ("b", "a", "never")}
    assert states["a"][0] == 2 and states["never"] == (0, "")
    assert opener().collection_states(["a"]) == {"a": states["a"]}  # another connection
    assert store.collection_states([]) == {}
    with pytest.raises(InvalidInputError, match="collection"):
        store.collection_states(["a", 3])  # type: ignore[list-item]
