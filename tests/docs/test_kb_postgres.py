"""The document knowledge base on PostgreSQL + pgvector (a real server): the same store URL
scheme as the rest of the toolkit, ingestion idempotence, filters and a second writer."""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.store import get_store

from ._docs_helpers import open_kb, write_corpus

pytest.importorskip("psycopg")


def test_ingest_filter_and_reingest_on_postgres(postgres_url: str, tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    kb = open_kb(postgres_url)  # type: ignore[arg-type]
    first = kb.ingest(docs)
    assert (first.files, first.added) == (4, 4) and kb.stats()["vectors"] == first.chunks_added
    again = kb.ingest(docs)
    assert (again.added, again.updated, again.unchanged, again.chunks_added) == (0, 0, 4, 0)
    hits = kb.retrieve("pagination pages", n_results=3, mode="hybrid")
    assert hits and hits[0]["metadata"]["section_title"] == "Pagination"
    only = kb.retrieve("pages", n_results=10, where={"file_name": {"$ne": "api.md"}})
    assert only and all(h["metadata"]["file_name"] != "api.md" for h in only)
    kb.close()


def test_a_second_writer_on_postgres_is_seen(postgres_url: str) -> None:
    reader = open_kb(postgres_url)  # type: ignore[arg-type]
    reader.add_text("# One\nfirst", path="one.md")
    writer = open_kb(postgres_url)  # type: ignore[arg-type]
    writer.add_text("# Two\nsecond", path="two.md")
    writer.close()
    titles = {h["metadata"]["section_title"] for h in reader.retrieve("second", n_results=5)}
    assert titles == {"One", "Two"}
    reader.close()
    with get_store(postgres_url) as store:
        assert store.url.startswith("postgresql")
