"""``index_kind="auto"``: the size rule, its persisted files, and reproducible HNSW builds."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pytest

from costeer_lab.embed import get_embedder
from costeer_lab.errors import InvalidInputError
from costeer_lab.index import HNSW_ABOVE, FaissIndex, VectorCollection, effective_kind
from costeer_lab.index._location import index_file
from costeer_lab.settings import DocsSettings, MemorySettings, RAGSettings
from costeer_lab.store import BaseStore, SQLiteStore
from costeer_lab.store._base import VECTOR_PAGE
from tests.index.conftest import unit_vectors

EMB = get_embedder("hashing", dim=32)
THRESHOLD = 40


class CountingStore(SQLiteStore):
    """A SQLite store counting the index rebuilds (full paged reads) per collection."""

    rebuilds: Counter[str]

    def iter_vectors(self, collection: str, page: int = VECTOR_PAGE) -> Any:
        self.rebuilds[collection] += 1
        return super().iter_vectors(collection, page)


def counting(path: Path) -> CountingStore:
    store = CountingStore(path)
    store.rebuilds = Counter()
    return store


def texts(lo: int, hi: int) -> tuple[list[str], list[str]]:
    ids = [f"t{i}" for i in range(lo, hi)]
    return ids, [f"task t{i} mean of close over {i % 17} days rank {i % 5}" for i in range(lo, hi)]


def held(col: VectorCollection) -> str:
    """The kind of the index ``col`` holds now (a plain str: it changes under the test)."""
    return col.kind


def collection(store: BaseStore, **kw: Any) -> VectorCollection:
    args: dict[str, Any] = {"kind": "auto", "hnsw_above": THRESHOLD, "persist": True}
    return VectorCollection(store, "c", EMB, **(args | kw))


def test_the_rule_on_both_sides_of_the_threshold() -> None:
    assert effective_kind("auto", THRESHOLD - 1, THRESHOLD) == "exact"
    assert effective_kind("auto", THRESHOLD, THRESHOLD) == "hnsw"
    assert effective_kind("auto", 0, 1) == "exact" and effective_kind("auto", 1, 1) == "hnsw"
    assert effective_kind("exact", 10**9, 1) == "exact"
    assert effective_kind("hnsw", 0, THRESHOLD) == "hnsw"
    assert effective_kind("auto", HNSW_ABOVE) == "hnsw"
    assert effective_kind("auto", HNSW_ABOVE - 1) == "exact"
    with pytest.raises(InvalidInputError, match="'exact', 'hnsw' or 'auto', got 'flat'"):
        effective_kind("flat", 3)
    with pytest.raises(InvalidInputError, match="hnsw_above must be an int >= 1, got 0"):
        effective_kind("auto", 3, 0)


def test_auto_is_the_default_of_the_knowledge_settings_with_one_threshold() -> None:
    assert RAGSettings().index_kind == "auto" and DocsSettings().index_kind == "auto"
    assert RAGSettings().hnsw_above == DocsSettings().hnsw_above == HNSW_ABOVE
    assert MemorySettings().index_kind == "auto"  # the memory's rule is the same function


def test_an_open_picks_the_kind_by_the_stored_count(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "kb.db")
    col = collection(store)
    col.upsert_texts(*texts(0, THRESHOLD - 1))
    assert held(col) == "exact" and not col.sync()
    assert collection(store).kind == "exact"  # below: exact on every open
    col.upsert_texts(*texts(THRESHOLD - 1, THRESHOLD))
    assert collection(store).kind == "hnsw"  # at the threshold: HNSW
    assert collection(store, kind="exact").kind == "exact"  # a fixed kind stays fixed
    with pytest.raises(InvalidInputError, match="got 'graph'"):
        collection(store, kind="graph")


def test_growing_past_the_threshold_rebuilds_once_and_persists_the_new_kind(
    tmp_path: Path,
) -> None:
    store = counting(tmp_path / "kb.db")
    col = collection(store)
    col.upsert_texts(*texts(0, THRESHOLD - 1))
    assert col.checkpoint() and col.index_path == index_file(store, "c", "exact")
    store.rebuilds.clear()
    col.upsert_texts(*texts(THRESHOLD - 1, THRESHOLD + 5))  # writes follow the held index
    assert held(col) == "exact" and store.rebuilds["c"] == 0
    hits = col.search_text("task t3 mean of close over 3 days", k=3)  # the search settles it
    assert held(col) == "hnsw" and store.rebuilds["c"] == 1 and hits.ids[0] == "t3"
    col.upsert_texts(*texts(THRESHOLD + 5, THRESHOLD + 8))  # followed in the HNSW graph
    assert not col.sync() and col.search_text("x", k=1) and store.rebuilds["c"] == 1
    assert col.checkpoint() and col.index_path == index_file(store, "c", "hnsw")
    assert not index_file(store, "c", "exact").exists()  # type: ignore[union-attr]  # outgrown
    again = collection(counting(tmp_path / "kb.db"))
    assert held(again) == "hnsw" and again.index.origin == "loaded"
    assert len(again) == THRESHOLD + 8


def test_checkpoint_saves_the_kind_the_size_calls_for(tmp_path: Path) -> None:
    store = counting(tmp_path / "kb.db")
    col = collection(store)
    store.rebuilds.clear()  # the open of the empty collection
    col.upsert_texts(*texts(0, THRESHOLD + 2))  # bulk writes: no search in between
    assert held(col) == "exact"
    assert col.checkpoint() and held(col) == "hnsw" and store.rebuilds["c"] == 1
    assert index_file(store, "c", "hnsw").exists()  # type: ignore[union-attr]
    reopened = collection(counting(tmp_path / "kb.db"))
    assert (held(reopened), reopened.index.origin) == ("hnsw", "loaded")
    assert reopened.store.rebuilds["c"] == 0  # type: ignore[attr-defined]


def test_a_file_of_the_other_kind_is_not_used_after_the_store_grew(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "kb.db")
    col = collection(store)
    col.upsert_texts(*texts(0, 10))
    col.checkpoint()
    other = VectorCollection(SQLiteStore(tmp_path / "kb.db"), "c", EMB)  # no file, exact
    other.upsert_texts(*texts(10, THRESHOLD))
    reopened = collection(counting(tmp_path / "kb.db"))
    assert (held(reopened), reopened.index.origin) == ("hnsw", "rebuilt")
    assert reopened.store.rebuilds["c"] == 1  # type: ignore[attr-defined]
    third = collection(counting(tmp_path / "kb.db"))  # the rebuilt HNSW index was saved
    assert (held(third), third.index.origin) == ("hnsw", "loaded")
    assert sorted(third.index.ids()) == sorted(f"t{i}" for i in range(THRESHOLD))


def test_two_opens_of_one_store_answer_identically(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "kb.db")
    collection(store, persist=False).upsert_texts(*texts(0, 3 * THRESHOLD))
    queries = [f"mean of close over {d} days rank {r}" for d in range(9) for r in range(3)]
    answers = []
    for _ in range(2):  # no file: each open rebuilds the HNSW graph from the store
        col = collection(SQLiteStore(tmp_path / "kb.db"), persist=False)
        assert (held(col), col.index.origin) == ("hnsw", "rebuilt")
        answers.append([(r.ids, r.scores) for r in col.search_texts(queries, k=10)])
    assert answers[0] == answers[1]


def test_an_hnsw_graph_built_twice_from_the_same_rows_is_the_same_graph() -> None:
    vecs = unit_vectors(600, 16, seed=3)
    ids = [f"v{i}" for i in range(600)]
    built = []
    for _ in range(2):
        idx = FaissIndex(16, kind="hnsw", hnsw_m=8, ef_construction=40)
        for lo in range(0, 600, 250):  # in pages, as a rebuild from the store adds them
            idx.upsert(ids[lo : lo + 250], vecs[lo : lo + 250])
        built.append(faiss.serialize_index(idx.export_rows()[0]).tobytes())
    assert built[0] == built[1]


def test_rebuild_reads_the_store_in_pages(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "kb.db")
    vecs = unit_vectors(25, 8, seed=4)
    store.put_vectors("p", "e@1:8", [f"v{i}" for i in range(25)], vecs)
    pages: list[int] = []

    class Paging(SQLiteStore):
        def iter_vectors(self, collection: str, page: int = VECTOR_PAGE) -> Any:
            for chunk in super().iter_vectors(collection, page=10):
                pages.append(len(chunk[0]))
                yield chunk

    idx = FaissIndex.from_store(Paging(tmp_path / "kb.db"), "p", kind="exact")
    assert pages == [10, 10, 5] and idx.origin == "rebuilt" and len(idx) == 25
    assert idx.search(vecs[7], k=1).ids == ("v7",)
    assert np.allclose(idx.search(vecs[7], k=1).scores[0], 1.0, atol=1e-5)


def test_auto_on_postgres_picks_the_kind_by_the_server_count(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from costeer_lab.settings import get_settings
    from costeer_lab.store import PostgresStore

    monkeypatch.setenv("COSTEER_LAB_CACHE_DIR", str(tmp_path))  # this machine's index files
    get_settings.cache_clear()
    try:
        with PostgresStore(postgres_url) as one, PostgresStore(postgres_url) as two:
            col = collection(one)
            col.upsert_texts(*texts(0, THRESHOLD - 1))
            assert col.checkpoint() and held(col) == "exact"
            other = VectorCollection(two, "c", EMB)  # another machine writes
            other.upsert_texts(*texts(THRESHOLD - 1, THRESHOLD + 3))
            assert col.search_text("x", k=1) and held(col) == "hnsw"  # caught up, other kind
            assert col.checkpoint() and col.index_path == index_file(one, "c", "hnsw")
        with PostgresStore(postgres_url) as three:
            again = collection(three)
            got = (held(again), again.index.origin, len(again))
            assert got == ("hnsw", "loaded", THRESHOLD + 3)
    finally:
        get_settings.cache_clear()


def test_a_fixed_kind_leaves_the_file_of_the_other_kind(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "kb.db")
    fixed = collection(store, kind="exact")
    fixed.upsert_texts(*texts(0, THRESHOLD + 2))
    assert fixed.checkpoint()
    auto = collection(SQLiteStore(tmp_path / "kb.db"))
    assert (held(auto), auto.index.origin) == ("hnsw", "rebuilt")  # and saved by the open
    assert index_file(store, "c", "hnsw").exists()  # type: ignore[union-attr]
    assert not index_file(store, "c", "exact").exists()  # type: ignore[union-attr]  # auto's
    fixed.upsert_texts(*texts(THRESHOLD + 2, THRESHOLD + 3))
    assert fixed.checkpoint()  # a fixed kind saves its own and removes nothing
    assert index_file(store, "c", "hnsw").exists()  # type: ignore[union-attr]
