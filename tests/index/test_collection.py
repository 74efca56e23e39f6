"""VectorCollection over a real SQLite store and the hashing embedder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from costeer_lab.embed import BaseEmbedder, CachedEmbedder, get_embedder
from costeer_lab.errors import EmbedderMismatchError, InvalidInputError
from costeer_lab.index import FaissIndex, VectorCollection
from costeer_lab.index._faiss import IndexKind
from costeer_lab.store import SQLiteStore

TEXTS = {
    "rolling": "rolling mean of the close price over 20 days",
    "volume": "volume spike relative to the 60 day average volume",
    "rsi": "relative strength index of daily returns",
    "momentum": "price momentum: close divided by close 10 days ago",
    "vol": "volatility as the standard deviation of returns",
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "lab.db")
    yield s
    s.close()


@pytest.fixture
def embedder() -> BaseEmbedder:
    return get_embedder("hashing", dim=64)


def _filled(store: SQLiteStore, embedder: BaseEmbedder, **kw: Any) -> VectorCollection:
    col = VectorCollection(store, "factors", embedder, **kw)
    col.upsert_texts(list(TEXTS), list(TEXTS.values()))
    return col


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_upsert_and_search_by_text(
    kind: IndexKind, store: SQLiteStore, embedder: BaseEmbedder
) -> None:
    col = _filled(store, embedder, kind=kind)
    assert isinstance(col.embedder, CachedEmbedder) and col.embedder.inner is embedder
    assert len(col) == 5 and "rsi" in col
    ids, matrix, emb_id = store.load_vectors("factors")
    assert sorted(ids) == sorted(TEXTS) and emb_id == embedder.id and matrix.shape == (5, 64)
    assert col.search_text("mean of close price over days", 1).ids == ("rolling",)
    filtered = col.search_text("mean of close price", 2, filter={"volume", "rsi"})
    assert set(filtered.ids) == {"volume", "rsi"} and filtered.n_candidates == 2
    predicate = col.search_text("returns", 10, filter=lambda s: s.startswith("vol"))
    assert set(predicate.ids) == {"volume", "vol"} and predicate.fewer_than_k
    batch = col.search_texts(["volume spike", "strength index"], 1)
    assert [r.ids for r in batch] == [("volume",), ("rsi",)]
    vec = embedder.embed([TEXTS["vol"]])[0]
    assert col.search_vector(vec, 1).ids == ("vol",)


def test_texts_are_embedded_once(store: SQLiteStore, embedder: BaseEmbedder) -> None:
    col = _filled(store, embedder)
    col.upsert_texts(["rsi2"], [TEXTS["rsi"]])  # same text under another id: a cache hit
    col.search_text(TEXTS["rsi"], 2)
    assert embedder.texts_embedded == 5
    assert set(col.search_text(TEXTS["rsi"], 2).ids) == {"rsi", "rsi2"}


def test_upsert_replaces_and_remove_deletes(store: SQLiteStore, embedder: BaseEmbedder) -> None:
    col = _filled(store, embedder)
    col.upsert_texts(["rolling"], ["relative strength of daily returns index"])
    assert col.search_text("rolling mean of the close price", 1).ids != ("rolling",)
    assert col.remove(["rsi", "missing"]) == 1
    assert "rsi" not in col and "rsi" not in store.load_vectors("factors")[0]
    assert col.remove([]) == 0
    assert col.index.source_version == store.collection_version("factors")


def test_index_file_round_trip_and_rebuild(
    store: SQLiteStore, embedder: BaseEmbedder, tmp_path: Path
) -> None:
    path = tmp_path / "factors.idx"
    col = _filled(store, embedder, index_path=path)
    assert col.save() == path
    reopened = VectorCollection(store, "factors", embedder, index_path=path)
    assert reopened.index.origin == "loaded" and sorted(reopened.index.ids()) == sorted(TEXTS)
    path.unlink()
    rebuilt = VectorCollection(store, "factors", embedder, index_path=path)
    assert rebuilt.index.origin == "rebuilt" and path.exists()
    col.upsert_texts(["new"], ["brand new text about order book imbalance"])  # not saved
    stale = VectorCollection(store, "factors", embedder, index_path=path)
    assert stale.index.origin == "rebuilt" and "new" in stale


def test_changes_by_another_store_object_are_seen(
    store: SQLiteStore, embedder: BaseEmbedder, tmp_path: Path
) -> None:
    col = _filled(store, embedder)
    with SQLiteStore(tmp_path / "lab.db") as other:
        writer = VectorCollection(other, "factors", get_embedder("hashing", dim=64))
        writer.upsert_texts(["imbalance"], ["order book imbalance at the best bid"])
        writer.remove(["rsi"])
    assert col.search_text("order book imbalance", 1).ids == ("imbalance",)
    assert "rsi" not in col
    col.upsert_texts(["late"], ["late write after a foreign change"])  # index was behind
    assert sorted(col.index.ids()) == sorted(store.load_vectors("factors")[0])


def test_no_sync_on_search_keeps_the_old_view(
    store: SQLiteStore, embedder: BaseEmbedder, tmp_path: Path
) -> None:
    col = _filled(store, embedder, sync_on_search=False)
    with SQLiteStore(tmp_path / "lab.db") as other:
        other.delete_vectors("factors", ["rsi"])
    assert "rsi" in col.search_text(TEXTS["rsi"], 1).ids
    assert col.sync() is True and "rsi" not in col and col.sync() is False


def test_embedder_mismatch_is_refused(store: SQLiteStore, embedder: BaseEmbedder) -> None:
    _filled(store, embedder)
    with pytest.raises(EmbedderMismatchError, match=r"hashing@1:64.*hashing@1:32"):
        VectorCollection(store, "factors", get_embedder("hashing", dim=32))
    col = VectorCollection(store, "factors", embedder)
    with pytest.raises(EmbedderMismatchError, match="dimension 32"):
        col.search_vector(np.ones(32), 1)


def test_bad_input(store: SQLiteStore, embedder: BaseEmbedder) -> None:
    col = _filled(store, embedder)
    with pytest.raises(InvalidInputError, match="2 ids but 1 texts"):
        col.upsert_texts(["a", "b"], ["only one"])
    with pytest.raises(InvalidInputError, match="empty"):
        col.upsert_texts([], [])
    with pytest.raises(InvalidInputError, match="more than once"):
        col.upsert_texts(["a", "a"], ["x", "y"])
    with pytest.raises(InvalidInputError, match="text must be a str"):
        col.search_text(["list"], 1)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="k must be a positive int"):
        col.search_text("x", 0)
    with pytest.raises(InvalidInputError, match="collection name"):
        VectorCollection(store, "", embedder)
    assert len(col) == 5 and col.index.source_version == store.collection_version("factors")


def test_empty_collection_search(store: SQLiteStore, embedder: BaseEmbedder) -> None:
    col = VectorCollection(store, "empty", embedder, kind="hnsw")
    assert col.index.origin == "empty" and col.index.embedder_id == embedder.id
    result = col.search_text("anything", 3)
    assert result.ids == () and result.fewer_than_k
    assert isinstance(col.index, FaissIndex)


def test_writes_from_another_process_are_seen(
    store: SQLiteStore, embedder: BaseEmbedder, tmp_path: Path
) -> None:
    col = _filled(store, embedder, index_path=tmp_path / "f.idx")
    col.save()
    script = (
        "import sys\n"
        "from costeer_lab.embed import get_embedder\n"
        "from costeer_lab.index import VectorCollection\n"
        "from costeer_lab.store import SQLiteStore\n"
        "with SQLiteStore(sys.argv[1]) as s:\n"
        "    c = VectorCollection(s, 'factors', get_embedder('hashing', dim=64),\n"
        "                         index_path=sys.argv[2])\n"
        "    assert c.index.origin == 'loaded', c.index.origin\n"
        "    c.upsert_texts(['child'], ['written by a child process about skewness'])\n"
        "    c.remove(['vol'])\n"
    )
    root = Path(__file__).resolve().parents[2]
    subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "lab.db"), str(tmp_path / "f.idx")],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        check=True,
        timeout=120,
    )
    assert col.search_text("skewness written by a child", 1).ids == ("child",)
    assert "vol" not in col
    reopened = VectorCollection(store, "factors", embedder, index_path=tmp_path / "f.idx")
    assert reopened.index.origin == "rebuilt" and "child" in reopened  # the saved file was stale
