"""CachedEmbedder against a real SQLite store: accounting, dedupe, persistence, mixing guard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from costeer_lab.embed import CachedEmbedder, HashingEmbedder, check_same_space
from costeer_lab.embed._cache import text_sha256
from costeer_lab.errors import EmbedderMismatchError, InvalidInputError
from costeer_lab.store import SQLiteStore

TEXTS = ["rolling mean of close", "volume ratio", "KeyError: 'close'"]


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    with SQLiteStore(tmp_path / "cache.db") as s:
        yield s


def test_second_call_is_served_from_the_cache(store: SQLiteStore) -> None:
    inner = HashingEmbedder(dim=32)
    cached = CachedEmbedder(inner, store)
    first = cached.embed(TEXTS)
    assert (cached.misses, cached.hits, inner.calls, inner.texts_embedded) == (3, 0, 1, 3)
    second = cached.embed(TEXTS)
    assert (cached.misses, cached.hits, inner.calls) == (3, 3, 1)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, HashingEmbedder(dim=32).embed(TEXTS))
    assert (cached.calls, cached.texts_embedded) == (2, 3)


def test_duplicates_in_a_batch_are_embedded_once(store: SQLiteStore) -> None:
    inner = HashingEmbedder(dim=32)
    cached = CachedEmbedder(inner, store)
    v = cached.embed(["a", "b", "a", "a", "b"])
    assert (inner.calls, inner.texts_embedded, cached.misses, cached.hits) == (1, 2, 2, 0)
    np.testing.assert_array_equal(v[0], v[2])
    cached.embed(["a", "c"])  # one hit, one miss, only "c" computed
    assert (inner.calls, inner.texts_embedded, cached.misses, cached.hits) == (2, 3, 3, 1)


def test_cache_persists_across_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "lab.db"
    with SQLiteStore(path) as s:
        before = CachedEmbedder(HashingEmbedder(dim=32), s).embed(TEXTS)
    with SQLiteStore(path) as s:
        inner = HashingEmbedder(dim=32)
        cached = CachedEmbedder(inner, s)
        after = cached.embed(TEXTS)
        assert inner.calls == 0 and cached.hits == 3 and cached.misses == 0
    assert after.tobytes() == before.tobytes()


def test_store_lookup_without_memory_layer(store: SQLiteStore) -> None:
    inner = HashingEmbedder(dim=32)
    cached = CachedEmbedder(inner, store, memory_items=0)
    cached.embed(TEXTS)
    cached.embed(TEXTS)
    assert inner.calls == 1 and cached.hits == 3
    assert set(store.get_cached_embeddings(inner.id, [text_sha256(t) for t in TEXTS])) == {
        text_sha256(t) for t in TEXTS
    }


def test_entries_are_keyed_by_embedder_id(store: SQLiteStore) -> None:
    CachedEmbedder(HashingEmbedder(dim=32), store).embed(TEXTS)
    other = HashingEmbedder(dim=16)
    CachedEmbedder(other, store).embed(TEXTS)
    assert other.calls == 1  # dim-32 vectors are never served to the dim-16 space


def test_wrong_shape_in_the_store_counts_as_a_miss(store: SQLiteStore) -> None:
    inner = HashingEmbedder(dim=32)
    store.put_cached_embeddings(inner.id, {text_sha256("a"): np.ones(5, dtype=np.float32)})
    cached = CachedEmbedder(inner, store)
    v = cached.embed(["a"])
    assert cached.misses == 1 and inner.calls == 1
    np.testing.assert_array_equal(v, HashingEmbedder(dim=32).embed(["a"]))


def test_same_id_and_dim_as_inner(store: SQLiteStore) -> None:
    inner = HashingEmbedder(dim=48)
    cached = CachedEmbedder(inner, store)
    assert (cached.id, cached.dim) == ("hashing@1:48", 48)


def test_lru_is_bounded(store: SQLiteStore) -> None:
    cached = CachedEmbedder(HashingEmbedder(dim=8), store, memory_items=2)
    cached.embed(["a", "b", "c", "d"])
    assert len(cached._memory) == 2


def test_bad_arguments(store: SQLiteStore) -> None:
    with pytest.raises(InvalidInputError, match="BaseEmbedder"):
        CachedEmbedder("hashing", store)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="memory_items"):
        CachedEmbedder(HashingEmbedder(), store, memory_items=-1)


def test_check_same_space_names_both_embedders() -> None:
    check_same_space("hashing@1:384", 384, "hashing@1:384", 384)
    with pytest.raises(EmbedderMismatchError, match=r"'hashing@1:384'.*'minilm@1:384'"):
        check_same_space("hashing@1:384", 384, "minilm@1:384", 384)
    with pytest.raises(EmbedderMismatchError, match="dim 64"):
        check_same_space("x@1:64", 64, "x@1:64", 32)
