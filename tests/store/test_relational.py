"""The relational layer (``store/_relational.py``): one copy of each shared data method."""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.store import NodeRecord, PostgresStore, SQLiteStore, open_existing_store
from costeer_lab.store._relational import RelationalMixin

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
