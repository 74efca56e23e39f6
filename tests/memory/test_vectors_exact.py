"""MemoryVectors exactly, on a real SQLite file: what a search returns at its edges, when the
FAISS view is followed, caught up or rebuilt, and what a native-search store is asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from costeer_lab.memory._vectors import MemoryVectors
from costeer_lab.settings import MemorySettings
from costeer_lab.store import BaseStore, SQLiteStore, get_store

_COLL = "memory.patterns"
_EMB = "hashing-4"
_EYE = np.eye(4, dtype=np.float32)
_QUERY = np.array([1.0, 0.5, 0.25, 0.0], dtype=np.float32)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'memory.db'}"


@pytest.fixture
def store(db: str) -> Iterator[BaseStore]:
    s = get_store(db)
    yield s
    s.close()


def _vectors(store: BaseStore, **settings: Any) -> MemoryVectors:
    return MemoryVectors(store, _COLL, _EMB, 4, MemorySettings(**settings))


def test_a_fresh_view_has_synced_nothing_and_names_its_kind(store: BaseStore) -> None:
    assert _vectors(store).last_sync == "none"
    assert _vectors(store, index_kind="exact").backend == "faiss-exact"
    assert _vectors(store, index_kind="hnsw").backend == "faiss-hnsw"
    assert _vectors(store, index_kind="auto", hnsw_above=1).backend == "faiss-exact"


def test_adding_no_ids_writes_nothing(store: BaseStore) -> None:
    vec = _vectors(store)
    vec.add([], np.zeros((0, 4), dtype=np.float32))
    assert store.collection_version(_COLL) == 0
    assert vec.search(_QUERY, 5) == []


def test_search_edges_return_nothing(store: BaseStore) -> None:
    vec = _vectors(store)
    assert vec.search(_QUERY, 5) == []  # an empty collection
    vec.add(["a", "b"], _EYE[:2])
    assert vec.search(_QUERY, 0) == []
    assert vec.search(_QUERY, -1) == []
    assert vec.search(_QUERY, 0, ids=["a"]) == []
    assert vec.search(_QUERY, 5, ids=[]) == []


def test_search_ranks_filters_and_keeps_a_score_equal_to_min_score(store: BaseStore) -> None:
    vec = _vectors(store)
    vec.add(["a", "b", "c"], _EYE[:3])
    hits = vec.search(_QUERY, 5)
    assert [i for i, _ in hits] == ["a", "b", "c"]
    assert all(isinstance(s, float) for _, s in hits)
    scores = dict(hits)
    assert scores["a"] == pytest.approx(1 / np.linalg.norm(_QUERY), abs=1e-6)
    assert vec.search(_QUERY, 2) == hits[:2]
    assert vec.search(_QUERY, 5, ids=["c", "b"]) == hits[1:]
    assert vec.search(_QUERY, 5, min_score=scores["b"]) == hits[:2]
    assert vec.search(_QUERY, 5, min_score=2.0) == []


def test_own_writes_are_followed_without_a_catch_up(store: BaseStore) -> None:
    vec = _vectors(store, index_kind="exact")
    vec.add(["a"], _EYE[:1])
    assert [i for i, _ in vec.search(_EYE[0], 5)] == ["a"]
    assert vec.last_sync == "built"
    index = vec.sync()
    vec.add(["b"], _EYE[1:2])
    assert index.source_version == store.collection_version(_COLL) == 2
    assert [i for i, _ in vec.search(_EYE[1], 1)] == ["b"]
    assert vec.last_sync == "built" and vec.sync() is index


def test_a_write_after_another_writers_is_caught_up_not_taken_as_current(
    db: str, store: BaseStore
) -> None:
    mine = _vectors(store, index_kind="exact")
    mine.add(["a"], _EYE[:1])
    mine.search(_QUERY, 5)
    other_store = get_store(db)
    try:
        other = _vectors(other_store, index_kind="exact")
        other.add(["x"], _EYE[2:3])  # another agent's write: this view has not seen it
        mine.add(["b"], _EYE[1:2])
        assert sorted(i for i, _ in mine.search(_QUERY, 5)) == ["a", "b", "x"]
        assert mine.last_sync == "caught_up"
        other_store.delete_vectors(_COLL, ["a"])
        assert sorted(i for i, _ in mine.search(_QUERY, 5)) == ["b", "x"]
        assert mine.last_sync == "caught_up"
    finally:
        other_store.close()


def test_the_faiss_view_carries_the_collection_embedder_and_beam(store: BaseStore) -> None:
    vec = _vectors(store, index_kind="hnsw", ef_search=77)
    vec.add(["a", "b"], _EYE[:2])
    index = vec.sync()
    assert (index.kind, index.embedder_id, index.ef_search) == ("hnsw", _EMB, 77)
    assert (index.source_collection, index.source_version) == (_COLL, 1)
    assert sorted(index.ids()) == ["a", "b"]
    assert vec.backend == "faiss-hnsw"


def test_crossing_the_hnsw_size_on_a_write_rebuilds_at_the_next_search(store: BaseStore) -> None:
    vec = _vectors(store, index_kind="auto", hnsw_above=2)
    assert vec.search(_QUERY, 5) == []  # built empty, exact, at version 0
    vec.add(["a"], _EYE[:1])  # version 1, still below the threshold: followed
    assert vec.sync().kind == "exact" and vec.last_sync == "built"
    vec.add(["b"], _EYE[1:2])  # version 2, crosses it
    assert [i for i, _ in vec.search(_QUERY, 5)] == ["a", "b"]
    assert vec.backend == "faiss-hnsw" and vec.last_sync == "built"


def test_the_first_write_crossing_the_size_switches_the_kind(store: BaseStore) -> None:
    vec = _vectors(store, index_kind="auto", hnsw_above=1)
    assert vec.search(_QUERY, 5) == []
    assert vec.backend == "faiss-exact"
    vec.add(["a"], _EYE[:1])  # the store's version becomes 1
    assert [i for i, _ in vec.search(_QUERY, 5)] == ["a"]
    assert vec.backend == "faiss-hnsw"


class _NativeStore(SQLiteStore):
    """A SQLite store that searches vectors itself (as PostgreSQL does), keeping each call."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.calls: list[dict[str, Any]] = []

    def search_vectors(self, *args: Any, **kwargs: Any) -> list[tuple[str, float]]:
        self.calls.append(kwargs)
        return super().search_vectors(*args, **kwargs)


def test_a_native_store_gets_the_ids_threshold_and_beam(tmp_path: Path) -> None:
    store = _NativeStore(str(tmp_path / "native.db"))
    try:
        vec = _vectors(store, ef_search=55)
        assert vec.backend == "store"
        vec.add(["a", "b", "c"], _EYE[:3])
        hits = vec.search(_QUERY, 5, ids=["b", "c"], min_score=0.1)
        assert [i for i, _ in hits] == ["b", "c"]
        assert store.calls == [{"min_score": 0.1, "ids": ["b", "c"], "ef_search": 55}]
        assert vec.search(_QUERY, 5, ids=[]) == [] and len(store.calls) == 1
        assert vec._index is None  # no FAISS view
    finally:
        store.close()
