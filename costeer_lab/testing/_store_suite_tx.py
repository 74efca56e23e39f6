"""Store contract tests: transactions, JSON-only inputs, no mutation, closing."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import numpy as np
import pytest

from costeer_lab.errors import InvalidInputError, StoreError
from costeer_lab.store import BaseStore, EdgeRecord, NodeRecord

__all__ = ["TransactionStoreTests"]


class _Boom(Exception):
    pass


def _write_everything(store: BaseStore, tag: str) -> None:
    store.put_nodes([NodeRecord(f"n-{tag}", "k", "c")])
    store.put_edges([EdgeRecord(f"n-{tag}", "x", "r")])
    store.put_record("rec", f"r-{tag}", {"tag": tag})
    store.put_vectors("col", "e@1:2", [f"v-{tag}"], np.ones((1, 2), dtype=np.float32))
    store.put_cached_embeddings("e@1:2", {_sha(tag): np.ones(2, dtype=np.float32)})
    store.set_meta(f"m-{tag}", tag)


def _holds(store: BaseStore, tag: str) -> list[bool]:
    return [
        store.get_node(f"n-{tag}") is not None,
        any(e.src == f"n-{tag}" for e in store.iter_edges()),
        store.get_record("rec", f"r-{tag}") is not None,
        f"v-{tag}" in store.load_vectors("col")[0],
        bool(store.get_cached_embeddings("e@1:2", [_sha(tag)])),
        store.get_meta(f"m-{tag}") is not None,
    ]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class TransactionStoreTests:
    """Transactions, input validation and lifecycle."""

    def test_transaction_commits_every_kind_of_write(self, store: BaseStore) -> None:
        with store.transaction():
            _write_everything(store, "a")
            assert _holds(store, "a") == [True] * 6  # reads see the open transaction
        assert _holds(store, "a") == [True] * 6

    def test_exception_rolls_back_every_kind_of_write(self, store: BaseStore) -> None:
        _write_everything(store, "keep")
        version = store.collection_version("col")
        with pytest.raises(_Boom), store.transaction():
            _write_everything(store, "lost")
            store.delete_nodes(["n-keep"])
            store.delete_records("rec", ["r-keep"])
            store.delete_vectors("col", ["v-keep"])
            raise _Boom
        assert _holds(store, "lost") == [False] * 6
        assert _holds(store, "keep") == [True] * 6
        assert store.collection_version("col") == version
        _write_everything(store, "after")  # the store is usable after a rollback
        assert _holds(store, "after") == [True] * 6

    def test_bulk_writes_change_nothing_written(self, store: BaseStore) -> None:
        with store.bulk_writes():
            with store.transaction():
                _write_everything(store, "a")
            with pytest.raises(_Boom), store.transaction():
                _write_everything(store, "lost")
                raise _Boom
            _write_everything(store, "b")  # writes outside a transaction inside the block
        assert _holds(store, "a") == _holds(store, "b") == [True] * 6
        assert _holds(store, "lost") == [False] * 6
        with pytest.raises(_Boom), store.bulk_writes():  # an error leaves the store usable
            raise _Boom
        _write_everything(store, "c")
        assert _holds(store, "c") == [True] * 6

    def test_nested_transactions_join_the_outer_one(self, store: BaseStore) -> None:
        with pytest.raises(_Boom), store.transaction():
            store.put_record("rec", "outer", 1)
            with store.transaction():
                store.put_record("rec", "inner", 2)
            assert store.get_record("rec", "inner") == 2
            raise _Boom  # the inner block's writes go with the outer rollback
        assert store.count_records("rec") == 0
        with store.transaction():
            store.put_record("rec", "outer", 1)
            with store.transaction():
                store.put_record("rec", "inner", 2)
        assert [k for k, _ in store.iter_records("rec")] == ["outer", "inner"]

    def test_failed_nested_block_rolls_back_only_itself(self, store: BaseStore) -> None:
        with store.transaction():
            store.put_record("rec", "before", 1)
            with pytest.raises(_Boom), store.transaction():
                store.put_record("rec", "inner", 2)
                raise _Boom
            store.put_record("rec", "after", 3)
        assert [k for k, _ in store.iter_records("rec")] == ["before", "after"]

    def test_invalid_write_inside_transaction_keeps_earlier_writes(self, store: BaseStore) -> None:
        with store.transaction():
            store.put_record("rec", "ok", 1)
            with pytest.raises(InvalidInputError):
                store.put_record("rec", "bad", {"x": object()})
        assert store.get_record("rec", "ok") == 1 and store.get_record("rec", "bad") is None

    def test_non_json_values_are_refused_clearly(self, store: BaseStore) -> None:
        with pytest.raises(InvalidInputError, match="JSON"):
            store.put_nodes([NodeRecord("n", "k", "c", {"when": object()})])
        with pytest.raises(InvalidInputError, match="JSON"):
            store.put_edges([EdgeRecord("a", "b", "r", {"s": {1, 2}})])
        with pytest.raises(InvalidInputError, match="JSON"):
            store.put_record("rec", "k", {"b": b"bytes"})
        with pytest.raises(InvalidInputError):
            store.put_record("rec", "k", {"nan": float("nan")})
        assert (store.count_nodes(), store.count_edges(), store.count_records("rec")) == (0, 0, 0)

    def test_inputs_are_not_mutated_and_outputs_are_copies(self, store: BaseStore) -> None:
        attrs: dict[str, Any] = {"list": [3, 1, 2], "d": {"z": 1, "a": 2}}
        data: dict[str, Any] = {"items": [{"b": 1}, {"a": 2}]}
        attrs_before, data_before = copy.deepcopy(attrs), copy.deepcopy(data)
        store.put_nodes([NodeRecord("n", "k", "c", attrs)])
        store.put_record("rec", "k", data)
        assert attrs == attrs_before and data == data_before
        attrs["list"].append(4)  # the store keeps its own copy
        data["items"].clear()
        node = store.get_node("n")
        assert node is not None and node.attrs == attrs_before
        node.attrs["list"].append(99)  # returned objects are fresh each time
        assert store.get_node("n").attrs == attrs_before  # type: ignore[union-attr]
        got = store.get_record("rec", "k")
        assert got is not None
        got["items"].clear()
        assert store.get_record("rec", "k") == data_before

    def test_generators_are_accepted(self, store: BaseStore) -> None:
        store.put_nodes(NodeRecord(f"n{i}", "k", "") for i in range(3))
        store.put_edges(EdgeRecord(f"n{i}", f"n{i + 1}", "r") for i in range(2))
        store.put_records("rec", ((f"k{i}", i) for i in range(3)))
        assert (store.count_nodes(), store.count_edges(), store.count_records("rec")) == (3, 2, 3)

    def test_duplicate_keys_in_one_call_last_wins(self, store: BaseStore) -> None:
        store.put_nodes(
            [NodeRecord("a", "k", "first"), NodeRecord("b", "k", ""), NodeRecord("a", "k", "last")]
        )
        assert [(n.id, n.content) for n in store.iter_nodes()] == [("a", "last"), ("b", "")]
        store.put_records("rec", [("x", 1), ("y", 2), ("x", 3)])
        assert list(store.iter_records("rec")) == [("x", 3), ("y", 2)]
        vecs = np.array([[1, 0], [0, 1], [2, 2]], dtype=np.float32)
        store.put_vectors("col", "e@1:2", ["p", "q", "p"], vecs)
        ids, matrix, _ = store.load_vectors("col")
        assert ids == ["p", "q"] and matrix.tolist() == [[2, 2], [0, 1]]

    def test_a_single_id_string_is_not_split(self, store: BaseStore) -> None:
        store.put_nodes([NodeRecord("a", "k", "")])
        with pytest.raises(InvalidInputError):
            store.get_nodes("a")
        with pytest.raises(InvalidInputError):
            store.delete_nodes("a")
        assert store.count_nodes() == 1

    def test_schema_version_and_url(self, store: BaseStore) -> None:
        assert isinstance(store.schema_version, int) and store.schema_version >= 1
        assert isinstance(store.url, str) and "://" in store.url

    def test_close_is_idempotent_and_closed_store_refuses_calls(self, store: BaseStore) -> None:
        store.put_record("rec", "k", 1)
        store.close()
        store.close()
        with pytest.raises(StoreError):
            store.get_record("rec", "k")
        with pytest.raises(StoreError):
            store.put_record("rec", "k", 2)
