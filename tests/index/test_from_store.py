"""Indexes built from a real SQLite store: loaded when fresh, else rebuilt."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.errors import EmbedderMismatchError, InvalidInputError
from costeer_lab.index import FaissIndex
from costeer_lab.index._faiss import IndexKind
from costeer_lab.store import SQLiteStore

from .conftest import Vecs

EMB = "hashing@1:32"


@pytest.fixture
def store(tmp_path: Path, vecs: Vecs) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "lab.db")
    s.put_vectors("docs", EMB, [f"d{i}" for i in range(300)], vecs(300, 32, seed=31))
    yield s
    s.close()


def _answers(index: FaissIndex, vecs: Vecs) -> list[tuple[str, ...]]:
    return [r.ids for r in index.search_batch(vecs(20, 32, seed=32), 5)]


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_rebuild_then_load(
    kind: IndexKind, store: SQLiteStore, tmp_path: Path, vecs: Vecs
) -> None:
    path = tmp_path / "docs.idx"
    first = FaissIndex.from_store(store, "docs", path=path, kind=kind)
    assert first.origin == "rebuilt" and path.exists() and len(first) == 300
    assert (first.embedder_id, first.dim, first.kind) == (EMB, 32, kind)
    assert (first.source_collection, first.source_version) == ("docs", 1)
    second = FaissIndex.from_store(store, "docs", path=path, kind=kind)
    assert second.origin == "loaded"
    assert _answers(second, vecs) == _answers(first, vecs)


@pytest.mark.parametrize("damage", ["deleted", "truncated", "flipped", "garbage"])
def test_damaged_file_is_rebuilt_with_same_answers(
    damage: str, store: SQLiteStore, tmp_path: Path, vecs: Vecs
) -> None:
    path = tmp_path / "docs.idx"
    reference = _answers(FaissIndex.from_store(store, "docs", path=path), vecs)
    data = path.read_bytes()
    if damage == "deleted":
        path.unlink()
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 3])
    elif damage == "flipped":
        path.write_bytes(data[:500] + bytes([data[500] ^ 0xFF]) + data[501:])
    else:
        path.write_bytes(b"not an index at all")
    again = FaissIndex.from_store(store, "docs", path=path)
    assert again.origin == "rebuilt" and _answers(again, vecs) == reference
    assert FaissIndex.from_store(store, "docs", path=path).origin == "loaded"  # repaired file


def test_stale_after_store_changes(store: SQLiteStore, tmp_path: Path, vecs: Vecs) -> None:
    path = tmp_path / "docs.idx"
    FaissIndex.from_store(store, "docs", path=path)
    new = vecs(1, 32, seed=33)
    store.put_vectors("docs", EMB, ["added"], new)
    index = FaissIndex.from_store(store, "docs", path=path)
    assert index.origin == "rebuilt" and "added" in index and index.source_version == 2
    assert index.search(new[0], 1).ids == ("added",)
    store.delete_vectors("docs", ["added", "d0"])
    index = FaissIndex.from_store(store, "docs", path=path)
    assert index.origin == "rebuilt" and "added" not in index and len(index) == 299


def test_wrong_kind_or_params_rebuilds(store: SQLiteStore, tmp_path: Path) -> None:
    path = tmp_path / "docs.idx"
    FaissIndex.from_store(store, "docs", path=path, kind="exact")
    assert FaissIndex.from_store(store, "docs", path=path, kind="hnsw").origin == "rebuilt"
    assert FaissIndex.from_store(store, "docs", path=path, kind="hnsw").origin == "loaded"
    changed = FaissIndex.from_store(store, "docs", path=path, kind="hnsw", hnsw_m=8)
    assert changed.origin == "rebuilt" and changed.hnsw_m == 8
    tuned = FaissIndex.from_store(store, "docs", path=path, kind="hnsw", ef_search=99)
    assert tuned.origin == "loaded" and tuned.ef_search == 99  # a search-time parameter


def test_another_collections_file_is_not_reused(
    store: SQLiteStore, tmp_path: Path, vecs: Vecs
) -> None:
    path = tmp_path / "shared.idx"
    store.put_vectors("other", EMB, ["o1"], vecs(1, 32, seed=34))
    FaissIndex.from_store(store, "docs", path=path)
    other = FaissIndex.from_store(store, "other", path=path)
    assert other.origin == "rebuilt" and other.ids() == ["o1"]


def test_empty_collection(store: SQLiteStore, tmp_path: Path) -> None:
    path = tmp_path / "none.idx"
    with pytest.raises(InvalidInputError, match="pass dim="):
        FaissIndex.from_store(store, "nothing", path=path)
    empty = FaissIndex.from_store(store, "nothing", path=path, dim=32, embedder_id=EMB)
    assert empty.origin == "empty" and len(empty) == 0 and empty.embedder_id == EMB
    assert FaissIndex.from_store(store, "nothing", path=path, dim=32).origin == "loaded"
    assert FaissIndex.from_store(store, "nothing", path=path, dim=16).origin == "empty"


def test_mismatched_embedder_or_dim_is_refused(store: SQLiteStore) -> None:
    with pytest.raises(EmbedderMismatchError, match=r"'hashing@1:32'.*'minilm@1:32'"):
        FaissIndex.from_store(store, "docs", embedder_id="minilm@1:32")
    with pytest.raises(EmbedderMismatchError, match="dimension 32, not 64"):
        FaissIndex.from_store(store, "docs", dim=64)


def test_from_store_without_path_does_not_write(store: SQLiteStore, tmp_path: Path) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    index = FaissIndex.from_store(store, "docs")
    assert index.origin == "rebuilt" and len(index) == 300
    assert sorted(p.name for p in tmp_path.iterdir()) == before
