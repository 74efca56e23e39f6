"""DocumentKB: ingestion (idempotent, changed, deleted files), retrieval modes, versions,
topics, collections, persistence, defaults and errors, on real SQLite files."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from costeer_lab.docs import DocumentKB, EmptyCollectionWarning, list_collections
from costeer_lab.embed import get_embedder
from costeer_lab.errors import InvalidInputError, NotFoundError, StoreError
from costeer_lab.settings import get_settings
from costeer_lab.store import SQLiteStore

from ._docs_helpers import CORPUS, open_kb, write_corpus


def snapshot(db: Path) -> list[tuple[object, ...]]:
    """Every stored row of the docs records and vectors (what re-ingestion must not touch)."""
    conn = sqlite3.connect(db)
    try:
        records = conn.execute(
            "SELECT kind, key, data, updated_at FROM records ORDER BY seq"
        ).fetchall()
        vectors = conn.execute("SELECT collection, item_id, vector FROM vectors ORDER BY seq")
        return [*records, *vectors.fetchall()]
    finally:
        conn.close()


def test_ingest_then_reingest_changes_nothing(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    db = tmp_path / "kb.db"
    kb = open_kb(db)
    first = kb.ingest(docs)
    assert (first.files, first.added, first.unchanged) == (4, 4, 0)
    stats = kb.stats()
    assert stats["documents"] == 4 and stats["chunks"] == first.chunks_added == 10
    assert stats["vectors"] == 10
    before, version = snapshot(db), kb.docs.version()
    again = kb.ingest(docs)
    assert (again.added, again.updated, again.unchanged, again.chunks_added) == (0, 0, 4, 0)
    assert snapshot(db) == before and kb.docs.version() == version
    kb.close()
    # a second process-like opener sees the same and also skips everything
    other = open_kb(db)
    assert other.ingest(docs).unchanged == 4 and snapshot(db) == before
    other.close()


def test_changed_file_replaces_its_chunks(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(docs)
    old_ids = set(kb.docs.get_file(str((docs / "notes/cooking.md").absolute())).chunk_ids)  # type: ignore[union-attr]
    (docs / "notes/cooking.md").write_text("# Salad\n\nToss the leaves with lemon juice.\n")
    report = kb.ingest(docs)
    assert (report.updated, report.unchanged, report.chunks_removed, report.chunks_added) == (
        1,
        3,
        2,
        1,
    )
    hits = kb.retrieve("bread dough knead", n_results=20)
    assert all("Knead" not in h["content"] for h in hits)
    assert "Salad" in kb.retrieve("lemon salad", n_results=1)[0]["content"]
    view = kb.view()
    assert len(view) == kb.stats()["vectors"] == 9
    assert set(kb.vectors.index.ids()) == set(view.ids)
    new_ids = set(kb.docs.get_file(str((docs / "notes/cooking.md").absolute())).chunk_ids)  # type: ignore[union-attr]
    assert len(new_ids) == 1 and new_ids <= old_ids  # the id of chunk 0 is reused, others gone
    kb.close()


def test_deleted_files_are_pruned_only_when_asked(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(docs)
    (docs / "notes/garden.txt").unlink()
    assert kb.ingest(docs).removed == 0 and kb.stats()["documents"] == 4
    report = kb.ingest(docs, prune=True)
    assert (report.removed, report.chunks_removed, report.unchanged) == (1, 1, 3)
    assert kb.stats()["documents"] == 3 and kb.stats()["vectors"] == 9
    with pytest.warns(EmptyCollectionWarning, match="no chunk matching"):
        assert kb.retrieve("tomatoes", where={"file_name": "garden.txt"}) == []
    kb.close()


def test_update_and_delete_documents(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    kb.add_text("# Old\nfirst text", path="memo.md", source="memos")
    assert kb.update_document("memo.md", "# New\nsecond text").updated == 1
    hits = kb.retrieve("text", n_results=5)
    assert [h["metadata"]["section_title"] for h in hits] == ["New"]
    assert hits[0]["metadata"]["source"] == "memos"
    assert kb.delete_document("memo.md") == 1
    assert kb.stats()["chunks"] == 0 and kb.stats()["vectors"] == 0
    with pytest.raises(NotFoundError, match=r"'memo\.md' is not in collection 'test'"):
        kb.delete_document("memo.md")
    # text documents are never pruned (they have no file)
    kb.add_text("kept", path="x.txt")
    assert kb.prune().removed == 0
    kb.close()


def test_versions_and_version_filter(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(docs)
    kb.add_text("---\nversion: 10\n---\n# Retries\nRetries are automatic.", path="api10.md")
    assert kb.get_versions() == ["1", "2", "10"]
    query = "retries of failed requests"
    for version in ("1", "2", "10"):
        hits = kb.retrieve(query, n_results=3, version_filter=version)
        assert hits and {h["metadata"]["version"] for h in hits} == {version}
    latest = kb.retrieve(query, n_results=3, version_filter="latest")
    assert [h["metadata"]["version"] for h in latest] == ["10"]
    newer = kb.retrieve(query, n_results=20, where={"version": {"$gt": "1"}})
    assert {h["metadata"]["version"] for h in newer} == {"2", "10"}
    forced = kb.ingest(docs / "notes", version="7", source="notes")
    assert forced.updated == 2 and "7" in kb.get_versions()
    kb.close()


def test_topic_search_matches_section_titles(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(write_corpus(tmp_path / "docs"))
    hits = kb.search_by_topic("pagination", n_results=3)
    assert hits[0]["metadata"]["section_title"] == "Pagination"
    # one chunk per section: the two Timeouts sections (v1, v2) are distinct documents
    titles = [
        (h["metadata"]["path"], h["metadata"]["section_path"])
        for h in kb.search_by_topic("timeouts", n_results=5)
    ]
    assert len(titles) == len(set(titles)) and sum("Timeouts" in t for _, t in titles) == 2
    kb.close()


def test_modes_scores_and_mmr(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(write_corpus(tmp_path / "docs"))
    query = "max_retries failed requests"
    for mode in ("vector", "keyword", "hybrid"):
        hits = kb.retrieve(query, n_results=5, mode=mode)
        assert len(hits) == 5
        scores = [h["relevance_score"] for h in hits]
        assert all(0.0 <= s <= 1.0 for s in scores) and scores == sorted(scores, reverse=True)
        assert hits[0]["metadata"]["section_title"] == "Retries"
    keyword = kb.retrieve(query, n_results=11, mode="keyword")
    # keyword: BM25 over the best score reachable for the query (not over the top hit)
    assert 0.0 < keyword[0]["relevance_score"] < 1.0 and keyword[-1]["relevance_score"] == 0.0
    hybrid = kb.retrieve(query, n_results=1, mode="hybrid")
    vector = kb.retrieve(query, n_results=1, mode="vector")
    assert hybrid[0]["content"] == vector[0]["content"] == keyword[0]["content"]
    mean = 0.5 * vector[0]["relevance_score"] + 0.5 * keyword[0]["relevance_score"]
    assert hybrid[0]["relevance_score"] == pytest.approx(mean, abs=1e-5)  # weighted mean
    # MMR: the two near-identical Retries sections are not both picked when lambda is low
    plain = kb.retrieve("retries", n_results=2, mode="vector")
    assert [h["metadata"]["section_title"] for h in plain] == ["Retries", "Retries"]
    diverse = kb.retrieve("retries", n_results=2, mode="vector", mmr=True, mmr_lambda=0.1)
    assert diverse[0] == plain[0]
    assert diverse[1]["metadata"]["section_title"] != "Retries"
    with pytest.raises(InvalidInputError, match="mode must be one of vector, keyword, hybrid"):
        kb.retrieve(query, mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="n_results must be a positive int, got 0"):
        kb.retrieve(query, n_results=0)
    with pytest.raises(InvalidInputError, match="query must be a non-empty string"):
        kb.retrieve("  ")
    kb.close()


def test_results_are_copies(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    kb.add_text("# A\nalpha", path="a.md")
    hit = kb.retrieve("alpha", n_results=1)[0]
    hit["metadata"]["section_title"] = "changed"
    assert kb.retrieve("alpha", n_results=1)[0]["metadata"]["section_title"] == "A"
    kb.close()


def test_several_collections_share_a_store_and_reopen(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    a = open_kb(db, "alpha")
    b = open_kb(db, "beta")
    a.add_text("# Apples\nred fruit", path="a.md")
    b.add_text("# Boats\nsail on water", path="b.md")
    assert [h["metadata"]["section_title"] for h in a.retrieve("water", n_results=5)] == ["Apples"]
    a.close()
    b.close()
    store = SQLiteStore(db)
    assert list_collections(store) == ["alpha", "beta"]
    store.close()
    again = open_kb(db, "beta")  # derived indexes rebuilt from the store
    assert again.retrieve("sail", n_results=1)[0]["metadata"]["section_title"] == "Boats"
    again.close()


def test_a_writer_elsewhere_is_seen(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    reader = open_kb(db)
    reader.add_text("# One\nfirst", path="one.md")
    assert len(reader.retrieve("first", n_results=5)) == 1
    writer = open_kb(db)
    writer.add_text("# Two\nsecond", path="two.md")
    writer.close()
    assert {h["metadata"]["section_title"] for h in reader.retrieve("second", n_results=5)} == {
        "One",
        "Two",
    }
    reader.close()


def test_another_embedder_embeds_existing_chunks_once(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    kb = open_kb(db)
    kb.ingest(write_corpus(tmp_path / "docs"))
    kb.close()
    other = open_kb(db, embedder=get_embedder("hashing", dim=32))
    assert other.stats()["vectors"] == 10
    assert other.vectors.embedder.misses == 10
    hits = other.retrieve("pagination pages", n_results=1, mode="vector")
    assert hits[0]["metadata"]["section_title"] == "Pagination"
    other.close()
    store = SQLiteStore(db)
    names = {c for c in ("docs:test@hashing@1:64", "docs:test@hashing@1:32")}
    assert all(store.collection_info(n) is not None for n in names)
    store.close()


def test_empty_collection_warns_and_returns_nothing(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    with pytest.warns(EmptyCollectionWarning, match="'test' is empty"):
        assert kb.retrieve("anything") == []
    with pytest.warns(EmptyCollectionWarning):
        assert kb.search_by_topic("anything") == []
    assert kb.get_versions() == [] and kb.stats()["chunks"] == 0
    kb.close()


def test_broken_store_raises_and_never_falls_back(tmp_path: Path) -> None:
    bad = tmp_path / "broken.db"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match=r"broken\.db"):
        DocumentKB("x", bad)
    with pytest.raises(StoreError, match="is a directory"):
        DocumentKB("x", tmp_path)
    with pytest.raises(InvalidInputError, match="collection name"):
        DocumentKB("a/b", tmp_path / "ok.db")
    assert bad.read_bytes().startswith(b"this is not")  # left untouched


def test_missing_paths_and_bad_files(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    with pytest.raises(NotFoundError, match="no-such-dir"):
        kb.ingest(tmp_path / "no-such-dir")
    docs = write_corpus(tmp_path / "docs")
    (docs / "z_bad.md").write_bytes(b"\xff\xfe")
    with pytest.raises(InvalidInputError, match=r"z_bad\.md.*not UTF-8"):
        kb.ingest(docs)
    assert kb.stats()["documents"] == 0  # the failing batch wrote nothing
    kb.close()


def test_defaults_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COSTEER_LAB_COLLECTION", "from_env")
    monkeypatch.setenv("COSTEER_LAB_DB_PATH", str(tmp_path / "env" / "docs.db"))
    monkeypatch.setenv("COSTEER_LAB_DOCS__CHUNK_SIZE", "321")
    get_settings.cache_clear()
    try:
        kb = DocumentKB()
        assert kb.collection == "from_env" and kb.chunk_size == 321
        assert kb.store.url == f"sqlite:///{tmp_path / 'env' / 'docs.db'}"
        kb.close()
        monkeypatch.delenv("COSTEER_LAB_DB_PATH")
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
        monkeypatch.delenv("COSTEER_LAB_DATA_DIR", raising=False)
        get_settings.cache_clear()
        kb = DocumentKB()
        assert kb.store.url == f"sqlite:///{tmp_path / 'xdg' / 'costeer_lab' / 'knowledge.db'}"
        kb.close()
    finally:
        get_settings.cache_clear()
    assert os.environ.get("COSTEER_LAB_COLLECTION") == "from_env"


def test_python_docstrings_are_ingested(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "mod.py").write_text(
        '"""Helpers."""\n\ndef rolling_mean(x, n):\n    """Mean of the last n values."""\n'
    )
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(pkg, source="pkg")
    hit = kb.retrieve("mean of the last values", n_results=1)[0]
    assert hit["content"] == "def rolling_mean\nMean of the last n values."
    assert hit["metadata"]["file_type"] == "python" and hit["metadata"]["source"] == "pkg"
    assert len(CORPUS) == 4 and np.isfinite(hit["relevance_score"])
    kb.close()


def test_chunks_added_through_another_embedder_get_vectors_here(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    small = open_kb(db, embedder=get_embedder("hashing", dim=32))
    big = open_kb(db)
    big.add_text("# Sailing\nboats on the lake", path="s.md")
    hits = small.retrieve("boats lake", n_results=1, mode="vector")
    assert hits[0]["metadata"]["section_title"] == "Sailing"
    assert small.stats()["vectors"] == 1
    big.delete_document("s.md")
    with pytest.warns(EmptyCollectionWarning):
        assert small.retrieve("boats", mode="vector") == []
    assert small.stats()["vectors"] == 1  # an orphan until a query meets chunks again
    small.add_text("# Other\ntext", path="o.md")
    small.retrieve("text", n_results=1)
    assert small.stats()["vectors"] == 1 and set(small.vectors.index.ids()) == set(
        small.view().ids
    )
    small.close()
    big.close()


def test_progress_bar_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = write_corpus(tmp_path / "docs")
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(docs, progress=False)
    assert "ingesting documents" not in capsys.readouterr().err
    kb.ingest(docs, progress=True)
    assert "ingesting documents: 100%" in capsys.readouterr().err
    kb.progress_min_files = 2  # the default shows it from settings.docs.progress_min_files on
    (docs / "new.md").write_text("# New\ntext")
    kb.ingest(docs)
    assert "ingesting documents" in capsys.readouterr().err
    kb.close()


def test_concurrent_writers_leave_no_orphan_chunks(tmp_path: Path) -> None:
    """Two processes ingest the same changing file (1 to 5 sections) 15 times each; the store
    ends with exactly the chunks of the last version written, with one vector each. (A stress
    test of the invariant; the interleaving that needs the re-read under the write lock is
    not forced, so it is not guaranteed to occur in a run.)"""
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from costeer_lab.docs import DocumentKB\n"
        "from costeer_lab.embed import get_embedder\n"
        "db, doc, n = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])\n"
        "kb = DocumentKB('test', db, embedder=get_embedder('hashing', dim=64))\n"
        "for i in range(15):\n"
        "    sections = (i * n) % 5 + 1\n"
        "    doc.write_text(''.join(f'# S{j}\\nv{i} w{n}\\n' for j in range(sections)))\n"
        "    kb.ingest(doc.parent)\n"
        "kb.close()\n"
    )
    db = str(tmp_path / "kb.db")
    procs = [
        subprocess.Popen([sys.executable, "-c", script, db, str(docs / "a.md"), str(n)])
        for n in (1, 2)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    kb = open_kb(tmp_path / "kb.db")
    record = kb.docs.get_file(str((docs / "a.md").absolute()))
    assert record is not None
    view = kb.view()
    assert sorted(view.ids) == sorted(record.chunk_ids)
    assert sorted(kb.vectors.index.ids()) == sorted(view.ids)
    kb.close()
