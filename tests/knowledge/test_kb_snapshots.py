"""Knowledge-base snapshots on SQLite and PostgreSQL: a KB as of a snapshot, its vector index,
diff of attempts, rollback that rebuilds the lookups and indexes, branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.errors import StoreError, UnknownNameError
from costeer_lab.graph import TASK_DESCRIPTION
from costeer_lab.knowledge import KnowledgeBaseV2, open_kb
from costeer_lab.knowledge._kb_records import ATTEMPT_KIND
from costeer_lab.store import get_store

from ._kb_helpers import code, crash, factor, ok, seed

EARLY = [factor(f"ma{n}", f"Mean($close, {n})") for n in (3, 5, 10)]
LATE = [factor(f"std{n}", f"Std($volume, {n})") for n in (4, 8)]


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'kb.db'}"
    return str(request.getfixturevalue("postgres_url"))


def _index_ids(kb: KnowledgeBaseV2) -> set[str]:
    col = kb.graph.collections[TASK_DESCRIPTION]
    col.sync()
    return set(col.search_text("anything", 100).ids)


def _td_ids(kb: KnowledgeBaseV2) -> set[str]:
    return {str(d["td"]) for _, d in kb.store.iter_records(ATTEMPT_KIND)}


def _build(kb: KnowledgeBaseV2) -> None:
    kb.add_seed_knowledge([seed(t, f"# {t.name}") for t in EARLY[:2]])
    kb.record(EARLY[2], code("bad"), crash("ZeroDivisionError: x"), run_id="r1", attempt=1)


def _grow(kb: KnowledgeBaseV2) -> None:
    kb.record(EARLY[2], code("good"), ok(), run_id="r1", attempt=2)
    for t in LATE:
        kb.record(t, code(f"# {t.name}"), ok(), run_id="r2", attempt=1)


def test_a_kb_as_of_a_snapshot_matches_its_records_and_index(url: str) -> None:
    kb = open_kb(url, embedder="hashing")
    try:
        _build(kb)
        stats = kb.stats()
        tds = _td_ids(kb)
        kb.snapshot("s1")
        _grow(kb)
        assert kb.stats() != stats
        old = open_kb(url, embedder="hashing", snapshot="s1")
        try:
            assert old.stats() == stats
            assert _td_ids(old) == tds == _index_ids(old)
            assert not old.is_solved(EARLY[2].id, run_id="r1")
            assert kb.is_solved(EARLY[2].id, run_id="r1")
            with pytest.raises(StoreError, match="snapshot view 's1'"):
                old.record(LATE[0], code("x"), ok(), run_id="r3", attempt=1)
        finally:
            old.close()
        assert _index_ids(kb) == _td_ids(kb) and len(_td_ids(kb)) == 5
    finally:
        kb.close()


def test_diff_rollback_and_branch_of_a_kb(url: str, tmp_path: Path) -> None:
    kb = open_kb(url, embedder="hashing")
    try:
        _build(kb)
        stats, tds = kb.stats(), _td_ids(kb)
        kb.snapshot("s1")
        _grow(kb)
        attempts = kb.diff("s1").records(ATTEMPT_KIND)
        assert attempts.added == (
            ("r1\x1ff/ma10\x1f2",),
            ("r2\x1ff/std4\x1f1",),
            ("r2\x1ff/std8\x1f1",),
        )
        assert attempts.changed == attempts.removed == ()
        assert len(kb.diff("s1").tables["vectors"].added) >= 2  # the new task descriptions
        branch_store = kb.branch("s1", tmp_path / "branch.db")
        assert kb.rollback("s1") == []
        assert kb.stats() == stats
        assert _index_ids(kb) == tds  # the index was rebuilt from the restored vectors
        assert not kb.is_solved(EARLY[2].id, run_id="r1")
        _grow(kb)  # the line goes on from s1 and reaches the same state again
        assert _index_ids(kb) == _td_ids(kb)
        branched = open_kb(branch_store, embedder="hashing")
        try:
            assert branched.stats() == stats
            branched.record(LATE[0], code("other"), ok(), run_id="b", attempt=1)
            assert branched.is_solved(LATE[0].id, run_id="b")
            assert branched.diff("s1").records(ATTEMPT_KIND).added == (("b\x1ff/std4\x1f1",),)
        finally:
            branched.close()
            branch_store.close()
    finally:
        kb.close()


def test_open_kb_with_an_unknown_snapshot_lists_the_known_ones(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with get_store(path) as store:
        store.snapshot("monday")
    with pytest.raises(UnknownNameError, match="known: 'monday'"):
        open_kb(path, embedder="hashing", snapshot="mondya")
