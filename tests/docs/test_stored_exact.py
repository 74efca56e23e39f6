"""The document collection's stored records, exactly: names, the file record's JSON form, the
change counter and the collection register (a real SQLite file)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.docs._stored import DocStore, FileRecord, check_collection_name, list_collections
from costeer_lab.errors import InvalidInputError
from costeer_lab.store import BaseStore, get_store

_RECORD = FileRecord(
    path="guide/intro.md",
    fingerprint="fp-1",
    file_hash="hash-1",
    chunk_ids=("c1", "c2"),
    version="2.1",
    source="pkg",
    ingested_at=1234.5,
    origin="text",
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[BaseStore]:
    s = get_store(f"sqlite:///{tmp_path / 'docs.db'}")
    yield s
    s.close()


@pytest.mark.parametrize("name", ["notes", "X", "XX-notes", "a b", "v1.2_docs"])
def test_usable_collection_names_come_back_unchanged(name: str) -> None:
    assert check_collection_name(name) == name


@pytest.mark.parametrize("name", [123, None, "", "   ", "a:b", "a@b", "a/b", "a\nb"])
def test_unusable_collection_names_are_refused_naming_the_value(name: object) -> None:
    with pytest.raises(InvalidInputError, match="collection name must be") as info:
        check_collection_name(name)
    assert repr(name) in str(info.value)


def test_file_record_json_form_is_exact() -> None:
    assert _RECORD.to_dict() == {
        "path": "guide/intro.md",
        "fingerprint": "fp-1",
        "file_hash": "hash-1",
        "chunk_ids": ["c1", "c2"],
        "version": "2.1",
        "source": "pkg",
        "ingested_at": 1234.5,
        "origin": "text",
    }


def test_file_record_reads_back_field_for_field() -> None:
    back = FileRecord.from_dict(_RECORD.to_dict())
    assert back == _RECORD
    assert (back.file_hash, back.version, back.ingested_at) == ("hash-1", "2.1", 1234.5)


def test_a_minimal_file_record_reads_back_with_every_default() -> None:
    back = FileRecord.from_dict(
        {"path": "a.md", "fingerprint": "f", "file_hash": "h", "chunk_ids": []}
    )
    assert back == FileRecord("a.md", "f", "h", (), None, "", 0.0, "file")
    assert back.source == "" and back.origin == "file"
    assert back.ingested_at == 0.0 and isinstance(back.ingested_at, float)


def test_a_new_collection_has_version_zero_and_no_chunks(store: BaseStore) -> None:
    docs = DocStore(store, "notes")
    assert docs.version() == 0
    assert (docs.count_chunks(), docs.count_files()) == (0, 0)
    assert list_collections(store) == []


def test_bump_counts_one_per_change_and_registers_the_collection(store: BaseStore) -> None:
    docs = DocStore(store, "notes")
    before = time.time()
    with store.transaction():
        docs.bump()
    after = time.time()
    assert docs.version() == 1
    assert store.get_meta("doc_version:notes") == "1"
    created = store.get_record("doc_collection", "notes")
    assert isinstance(created, dict) and set(created) == {"created_at"}
    assert before <= created["created_at"] <= after
    with store.transaction():
        docs.bump()
    assert docs.version() == 2
    assert list_collections(store) == ["notes"]


def test_bump_keeps_an_existing_collection_record(store: BaseStore) -> None:
    registered = {"created_at": 1.0, "embedders": ["hashing-256"]}
    store.put_record("doc_collection", "notes", registered)
    docs = DocStore(store, "notes")
    with store.transaction():
        docs.bump()
        docs.bump()
    assert store.get_record("doc_collection", "notes") == registered
    assert docs.version() == 2


def test_put_file_stores_chunks_and_record_and_delete_removes_them(store: BaseStore) -> None:
    docs = DocStore(store, "notes")
    other = DocStore(store, "other")
    chunks = [("c1", "first part", {"h": 1}), ("c2", "second part", {"h": 2})]
    with store.transaction():
        docs.put_file(_RECORD, chunks)
        other.put_file(FileRecord("b.md", "f", "h", ("c9",), None, "", 0.0), [("c9", "x", {})])
    assert (docs.count_chunks(), docs.count_files()) == (2, 1)
    assert (other.count_chunks(), other.count_files()) == (1, 1)
    assert list(docs.iter_chunks()) == chunks
    assert docs.get_file("guide/intro.md") == _RECORD
    assert docs.get_file("missing.md") is None
    assert list(docs.iter_files()) == [_RECORD]
    assert docs.vector_collection("hashing-256") == "docs:notes@hashing-256"
    with store.transaction():
        docs.delete_file(_RECORD)
    assert (docs.count_chunks(), docs.count_files()) == (0, 0)
    assert (other.count_chunks(), other.count_files()) == (1, 1)
