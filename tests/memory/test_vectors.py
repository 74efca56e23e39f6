"""The search backend: FAISS on SQLite that follows other writers, the same answers as exact."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from costeer_lab.memory import PatternMemory, has_native_search, open_memory
from costeer_lab.settings import MemorySettings
from costeer_lab.store import SQLiteStore, register_store_scheme
from costeer_lab.store._factory import STORE_OPENERS


def _code(i: int) -> str:
    return f"def step_{i}(xs):\n    return [x + {i} for x in xs if x > {i % 7}]\n"


def test_sqlite_searches_through_faiss_and_follows_other_writers(sqlite_url: str) -> None:
    a = PatternMemory(sqlite_url, embedder="hashing")
    b = PatternMemory(sqlite_url, embedder="hashing")  # another store object: another agent
    assert not has_native_search(a.store) and a.vectors.backend == "faiss-exact"
    first = a.store_pattern("adder", _code(1), description="add one to each item")
    assert [m.id for m in a.search_patterns("adder add one", threshold=0.2)] == [first]
    assert a.vectors.last_sync == "built"
    second = b.store_pattern("filter", _code(2), description="keep items above a bound")
    found = a.search_patterns("filter keep items above a bound", threshold=0.2, record=False)
    assert found[0].id == second and a.vectors.last_sync == "caught_up"
    b.store.delete_vectors("memory.patterns", [first])
    assert first not in {m.id for m in a.search_patterns("adder", threshold=-1, record=False)}
    a.close()
    b.close()


def test_hnsw_above_the_size_threshold_answers_like_exact(sqlite_url: str) -> None:
    settings = MemorySettings(index_kind="auto", hnsw_above=50, ef_search=256)
    mem = PatternMemory(sqlite_url, embedder="hashing", settings=settings)
    mem.store_patterns(
        [
            {
                "problem_type": f"kind {i % 5}",
                "code": _code(i),
                "description": f"kind {i % 5} task {i}",
            }
            for i in range(120)
        ]
    )
    assert mem.vectors.backend == "faiss-exact"  # nothing searched yet
    query = "kind 3 task 42"
    got = mem.search_patterns(query, threshold=-1, limit=10, record=False)
    assert mem.vectors.backend == "faiss-hnsw"
    _, matrix, _ = mem.store.load_vectors("memory.patterns")
    q = mem.embedder.embed([query])[0]
    scores = matrix @ q / np.linalg.norm(matrix, axis=1)
    exact = np.sort(scores)[::-1][:10]  # equal scores may come in either order
    assert [m.similarity for m in got] == pytest.approx(exact.tolist(), abs=1e-5)
    mem.close()


class _SearchingStore(SQLiteStore):
    """A SQLite store that searches vectors itself (as PostgresStore does), counting calls."""

    calls = 0

    def search_vectors(self, *args: Any, **kwargs: Any) -> list[tuple[str, float]]:
        type(self).calls += 1
        return super().search_vectors(*args, **kwargs)


def test_the_url_alone_picks_the_backend() -> None:
    _SearchingStore.calls = 0  # a class counter: mutmut runs the tests twice in one process
    with open_memory("sqlite:///:memory:", embedder="hashing") as memory:
        assert memory.backend == "faiss-exact"
    register_store_scheme("searching", lambda url: _SearchingStore(":memory:"))
    try:
        with open_memory("searching://x", embedder="hashing") as memory:
            assert memory.backend == "store"
            pid = memory.patterns.store_pattern(
                "adder", _code(1), description="add one to each item"
            )
            hits = memory.patterns.search_patterns("adder add one", threshold=0.2)
            assert [m.id for m in hits] == [pid] and _SearchingStore.calls == 1
            assert memory.patterns.vectors._index is None  # no FAISS index was built
    finally:
        del STORE_OPENERS["searching"]


def test_the_memory_beam_width_reaches_postgresql(postgres_url: str) -> None:
    """``MemorySettings.ef_search`` is the beam of the memory's searches on PostgreSQL too (the
    store URL's ``ef_search`` stays the default of the store's other callers)."""
    url = postgres_url + ("&" if "?" in postgres_url else "?") + "index_min_rows=50&ef_search=30"
    settings = MemorySettings(ef_search=222)
    mem = PatternMemory(url, embedder="hashing", settings=settings)
    mem.store_patterns(
        [
            {
                "problem_type": f"kind {i % 5}",
                "code": _code(i),
                "description": f"kind {i % 5} task {i}",
            }
            for i in range(80)
        ]
    )
    conn: Any = mem.store._connection()  # type: ignore[attr-defined]
    got = mem.search_patterns("kind 3 task 42", threshold=-1, limit=5, record=False)
    assert len(got) == 5
    assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "222"
    query = mem.embedder.embed(["kind 3 task 42"])[0]
    mem.store.search_vectors("memory.patterns", query, 5)
    assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "30"
    mem.close()
