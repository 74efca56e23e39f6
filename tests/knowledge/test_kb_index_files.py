"""A V2 KB keeps its FAISS indexes in files checked against the store (issue 27).

Reopening loads a file that matches the store's collection state (no vector is read from the
store, the file is not rewritten); a write by another process or connection makes it stale and
the next open rebuilds it from the store (the new item is found) and saves it again; a corrupt
file is rejected with a message naming the defect and rebuilt, never trusted. The store is real
(a SQLite file, a PostgreSQL server); a subclass only counts its ``iter_vectors`` calls, the
paged read that is what a rebuild reads.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.embed import get_embedder
from costeer_lab.graph import TASK_DESCRIPTION
from costeer_lab.index._location import index_dir
from costeer_lab.knowledge import KnowledgeBaseV2, RAGSettings, RAGStrategyV2
from costeer_lab.records import Task
from costeer_lab.store import BaseStore, PostgresStore, SQLiteStore
from costeer_lab.store._base import VECTOR_PAGE

from ._kb_helpers import code, crash, factor, ok, seed

MA5 = factor("MA5", "Mean($close, 5)/$close", "average close over 5 days", "MA")
STD5 = factor("STD5", "Std($close, 5)/$close", "standard deviation of close", "STD")
NEW = factor("SKEW9", "Skew($volume, 9)", "skewness of traded volume over nine days", "SKEW")
HNSW = {"hnsw_m": 8, "ef_construction": 40, "ef_search": 32}


class CountingSQLite(SQLiteStore):
    """The SQLite store, counting the full vector reads an index rebuild makes."""

    loads: Counter[str]

    def iter_vectors(self, collection: str, page: int = VECTOR_PAGE) -> Any:
        self.loads[collection] += 1
        return super().iter_vectors(collection, page)


class CountingPostgres(PostgresStore):
    """The PostgreSQL store, counting the full vector reads an index rebuild makes."""

    loads: Counter[str]

    def iter_vectors(self, collection: str, page: int = VECTOR_PAGE) -> Any:
        self.loads[collection] += 1
        return super().iter_vectors(collection, page)


def counting(path_or_url: str | Path) -> Any:
    """A counting store (``.loads``: collection → full vector reads) on a path or URL."""
    store: Any = (
        CountingPostgres(str(path_or_url))
        if str(path_or_url).startswith("postgresql://")
        else CountingSQLite(path_or_url)
    )
    store.loads = Counter()
    return store


def open_kb2(store: BaseStore, kind: str = "exact") -> KnowledgeBaseV2:
    return KnowledgeBaseV2(
        store, get_embedder("hashing"), index_kind=kind, index_kw=HNSW if kind == "hnsw" else None
    )


def fill(kb: KnowledgeBaseV2) -> None:
    kb.add_seed_knowledge([seed(MA5, "ma5")])
    rag = RAGStrategyV2(RAGSettings())
    rag.generate_knowledge(kb, [(STD5, code("a"), crash("KeyError: 'close'"))], run_id="r")
    rag.generate_knowledge(kb, [(STD5, code("b"), ok())], run_id="r")


def origins(kb: KnowledgeBaseV2) -> dict[str, str]:
    return {kind: col.index.origin for kind, col in kb.graph.collections.items()}


def files(kb: KnowledgeBaseV2) -> dict[str, int]:
    """mtime (ns) of each index file."""
    out = {}
    for kind, col in kb.graph.collections.items():
        assert col.index_path is not None
        out[kind] = col.index_path.stat().st_mtime_ns
    return out


def td_hits(kb: KnowledgeBaseV2, task: Task) -> tuple[str, ...]:
    col = kb.graph.collections[TASK_DESCRIPTION]
    return col.search_text(task.get_task_information(), k=3).ids


def write_in_another_process(path: Path) -> None:
    """Record a new task's attempt through a KB of another process (indexes not persisted)."""
    script = f"""
from costeer_lab.embed import get_embedder
from costeer_lab.knowledge import KnowledgeBaseV2
from costeer_lab.store import SQLiteStore
from tests.knowledge.test_kb_index_files import NEW
from tests.knowledge._kb_helpers import code, ok
with SQLiteStore({str(path)!r}) as store:
    kb = KnowledgeBaseV2(store, get_embedder("hashing"), persist_indexes=False)
    kb.record(NEW, code("skew"), ok(), run_id="other", attempt=1)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False,
        cwd=str(Path(__file__).parents[2]),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("kind", ["exact", "hnsw"])
def test_fresh_files_are_reused_without_reading_vectors(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "kb.db"
    with SQLiteStore(path) as store:
        kb = open_kb2(store, kind)
        fill(kb)
        expected = td_hits(kb, STD5)
        kb.close()  # writes the indexes the KB moved on
    first = counting(path)
    kb = open_kb2(first, kind)
    assert first.loads == Counter()  # nothing rebuilt
    assert set(origins(kb).values()) == {"loaded"}
    assert kb.graph.collections[TASK_DESCRIPTION].index.kind == kind
    stamps = files(kb)
    assert td_hits(kb, STD5) == expected and kb.is_solved("f/STD5", run_id="r")
    kb.close()  # nothing moved on: nothing rewritten
    first.close()
    second = counting(path)
    kb = open_kb2(second, kind)
    assert second.loads == Counter() and files(kb) == stamps
    second.close()


def test_exact_and_hnsw_files_live_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with SQLiteStore(path) as store:
        kb = open_kb2(store)
        fill(kb)
        kb.close()
    with SQLiteStore(path) as store:
        open_kb2(store, "hnsw")  # rebuilt from the store and saved at once
    names = sorted(p.name for p in (tmp_path / "kb.db.indexes").iterdir())
    assert [n.rsplit(".", 2)[1] for n in names if n.startswith("kg_task")] == ["exact", "hnsw"]
    for kind in ("exact", "hnsw"):
        with counting(path) as store:
            kb = open_kb2(store, kind)
            assert origins(kb)[TASK_DESCRIPTION] == "loaded" and not store.loads


def test_a_write_by_another_process_makes_the_file_stale(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with SQLiteStore(path) as store:
        kb = open_kb2(store)
        fill(kb)
        kb.close()
    write_in_another_process(path)
    store = counting(path)
    kb = open_kb2(store)
    assert origins(kb)[TASK_DESCRIPTION] == "rebuilt"
    assert store.loads["kg:task_description"] == 1
    assert td_hits(kb, NEW)[0] == kb.td_of(NEW)  # the other process's task is found
    assert kb.is_solved("f/SKEW9", run_id="other")
    stamps = files(kb)  # the rebuilt index was saved at once: the next open loads it
    store.close()
    with counting(path) as again:
        kb = open_kb2(again)
        assert origins(kb)[TASK_DESCRIPTION] == "loaded" and not again.loads
        assert files(kb) == stamps and td_hits(kb, NEW)[0] == kb.td_of(NEW)


def test_writes_of_an_open_kb_update_memory_and_are_saved_by_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    store = SQLiteStore(path)
    kb = open_kb2(store)
    fill(kb)
    kb.checkpoint()
    col = kb.graph.collections[TASK_DESCRIPTION]
    assert col.saved_state == col.state == store.collection_state("kg:task_description")
    kb.record(NEW, code("skew"), ok(), run_id="r", attempt=1)  # incremental, in memory
    assert td_hits(kb, NEW)[0] == kb.td_of(NEW) and col.index.origin != "rebuilt"
    assert col.saved_state != col.state  # the file is now stale
    with counting(path) as other:  # a reader now rebuilds instead of trusting the file
        assert origins(open_kb2(other))[TASK_DESCRIPTION] == "rebuilt"
    kb.checkpoint()
    with counting(path) as other:
        reopened = open_kb2(other)
        assert origins(reopened)[TASK_DESCRIPTION] == "loaded" and not other.loads
        assert td_hits(reopened, NEW) == td_hits(kb, NEW)
    store.close()


@pytest.mark.parametrize("damage", ["flipped", "truncated", "garbage"])
def test_a_corrupt_file_is_rejected_by_name_and_rebuilt(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "kb.db"
    with SQLiteStore(path) as store:
        kb = open_kb2(store)
        fill(kb)
        expected = td_hits(kb, STD5)
        kb.close()
    file = kb.graph.collections[TASK_DESCRIPTION].index_path
    assert file is not None
    data = file.read_bytes()
    damaged = {
        "flipped": data[:-9] + bytes([data[-9] ^ 0x01]) + data[-8:],
        "truncated": data[: len(data) // 2],
        "garbage": b"\x80not an index" * 7,
    }[damage]
    file.write_bytes(damaged)
    store = counting(path)
    with caplog.at_level(logging.WARNING, logger="costeer_lab.index"):
        kb = open_kb2(store)
    col = kb.graph.collections[TASK_DESCRIPTION]
    assert col.index.origin == "rebuilt" and store.loads["kg:task_description"] == 1
    reason = {"flipped": "sha256 checksum mismatch", "truncated": "sha256 checksum mismatch",
              "garbage": "not a costeer_lab index file"}[damage]  # fmt: skip
    assert col.index.load_error is not None and reason in col.index.load_error
    assert str(file) in col.index.load_error
    assert any(reason in r.getMessage() and "rejected" in r.getMessage() for r in caplog.records)
    assert td_hits(kb, STD5) == expected
    assert file.read_bytes() != damaged  # replaced by the rebuilt index
    store.close()
    with counting(path) as again:
        assert origins(open_kb2(again))[TASK_DESCRIPTION] == "loaded" and not again.loads


def test_a_store_recreated_at_the_same_path_does_not_reuse_old_files(tmp_path: Path) -> None:
    """Same path, same number of writes (equal versions): the etag tells them apart."""
    path = tmp_path / "kb.db"
    with SQLiteStore(path) as store:
        kb = open_kb2(store)
        kb.add_seed_knowledge([seed(MA5, "ma5")])
        kb.close()
        version = store.collection_version("kg:task_description")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with SQLiteStore(path) as store:  # another writer (no files of its own) fills the new one
        writer = KnowledgeBaseV2(store, get_embedder("hashing"), persist_indexes=False)
        writer.add_seed_knowledge([seed(NEW, "skew")])
        assert store.collection_version("kg:task_description") == version
    with counting(path) as store:
        kb = open_kb2(store)
        assert origins(kb)[TASK_DESCRIPTION] == "rebuilt"
        assert set(kb.graph.collections[TASK_DESCRIPTION].index.ids()) == {kb.td_of(NEW)}


def test_a_read_only_store_reads_fresh_files_and_writes_none(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with SQLiteStore(path) as store:
        kb = open_kb2(store)
        fill(kb)
        kb.close()
    write_in_another_process(path)  # the files are stale now
    folder = tmp_path / "kb.db.indexes"
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    with SQLiteStore(path, read_only=True) as ro:
        kb = open_kb2(ro)
        assert origins(kb)[TASK_DESCRIPTION] == "rebuilt"
        assert origins(kb)["error"] == "loaded"  # untouched by the other process
        assert td_hits(kb, NEW)[0] == kb.td_of(NEW)
        kb.close()
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before


def test_postgres_files_live_in_the_cache_dir_keyed_by_url(postgres_url: str) -> None:
    store = counting(postgres_url)
    folder = index_dir(store)
    assert folder is not None and postgres_url not in str(folder)
    kb = open_kb2(store)
    fill(kb)
    kb.close()
    store.close()
    assert sorted(p.suffix for p in folder.iterdir()) == [".clvidx"] * 3
    again = counting(postgres_url)
    kb = open_kb2(again)
    assert set(origins(kb).values()) == {"loaded"} and not again.loads
    stamps = files(kb)
    with PostgresStore(postgres_url) as other:  # another connection writes
        writer = KnowledgeBaseV2(other, get_embedder("hashing"), persist_indexes=False)
        writer.record(NEW, code("skew"), ok(), run_id="other", attempt=1)
    assert td_hits(kb, NEW)[0] == kb.td_of(NEW)  # the open KB syncs before searching
    kb.close()  # saves the synced index
    again.close()
    third = counting(postgres_url)
    kb = open_kb2(third)
    assert origins(kb)[TASK_DESCRIPTION] == "loaded" and not third.loads["kg:task_description"]
    assert files(kb)[TASK_DESCRIPTION] != stamps[TASK_DESCRIPTION]
    assert td_hits(kb, NEW)[0] == kb.td_of(NEW) and kb.is_solved("f/SKEW9", run_id="other")
    third.close()


def test_postgres_stale_file_is_rebuilt_on_open(postgres_url: str) -> None:
    with PostgresStore(postgres_url) as store:
        kb = open_kb2(store)
        fill(kb)
        kb.close()
    with PostgresStore(postgres_url) as other:
        writer = KnowledgeBaseV2(other, get_embedder("hashing"), persist_indexes=False)
        writer.record(NEW, code("skew"), ok(), run_id="other", attempt=1)
    with counting(postgres_url) as store:
        kb = open_kb2(store)
        assert origins(kb)[TASK_DESCRIPTION] == "rebuilt"
        assert origins(kb)["component"] == "rebuilt"  # SKEW's component is new too
        assert td_hits(kb, NEW)[0] == kb.td_of(NEW)
