"""How a document collection lives in a store (the source of truth).

Generic JSON records, one record kind per collection, so several collections share a store and
the store's schema is unchanged:

* ``doc_chunk:<collection>``: key = chunk id, data = ``{"content": str, "metadata": {...}}``;
* ``doc_file:<collection>``: key = document path, data = ``{"fingerprint", "file_hash",
  "chunk_ids", "version", "source", "ingested_at"}``;
* ``doc_collection``: key = collection name, data = ``{"created_at", "embedders"}``;
* store meta ``doc_version:<collection>``: a counter bumped by every change, which tells derived
  views (the BM25 index, the metadata columns) that they are stale.

Chunk vectors live in the store's vector collection ``docs:<collection>@<embedder id>``.

Example:
    >>> from costeer_lab.store import get_store
    >>> s = DocStore(get_store(":memory:"), "notes")
    >>> s.version()
    0
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from costeer_lab.errors import InvalidInputError
from costeer_lab.store import BaseStore

__all__ = ["DocStore", "FileRecord", "check_collection_name", "list_collections"]


def check_collection_name(name: object) -> str:
    """``name`` if it is a usable collection name (non-empty, no ``:``, ``@``, ``/``).

    Raises:
        InvalidInputError: naming the bad value.
    """
    if not isinstance(name, str) or not name.strip() or any(c in name for c in ":@/\n"):
        raise InvalidInputError(
            f"collection name must be a non-empty string without ':', '@', '/' or newlines, "
            f"got {name!r}"
        )
    return name


@dataclass(frozen=True)
class FileRecord:
    """What the store remembers of one ingested document."""

    path: str
    fingerprint: str
    file_hash: str
    chunk_ids: tuple[str, ...]
    version: str | None
    source: str
    ingested_at: float
    #: ``"file"`` (read from disk) or ``"text"`` (given by ``add_text``; never pruned).
    origin: str = "file"

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the record's data)."""
        return {
            "path": self.path,
            "fingerprint": self.fingerprint,
            "file_hash": self.file_hash,
            "chunk_ids": list(self.chunk_ids),
            "version": self.version,
            "source": self.source,
            "ingested_at": self.ingested_at,
            "origin": self.origin,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FileRecord:
        """Inverse of :meth:`to_dict`."""
        return cls(
            str(d["path"]),
            str(d["fingerprint"]),
            str(d["file_hash"]),
            tuple(d["chunk_ids"]),
            d.get("version"),
            str(d.get("source", "")),
            float(d.get("ingested_at", 0.0)),
            str(d.get("origin", "file")),
        )


class DocStore:
    """Reads and writes one collection's records in a store (no derived state)."""

    def __init__(self, store: BaseStore, collection: str) -> None:
        self.store = store
        self.collection = check_collection_name(collection)
        self.chunk_kind = f"doc_chunk:{collection}"
        self.file_kind = f"doc_file:{collection}"
        self._meta_key = f"doc_version:{collection}"

    def vector_collection(self, embedder_id: str) -> str:
        """Name of the store vector collection holding this collection's chunk vectors."""
        return f"docs:{self.collection}@{embedder_id}"

    # -- reads -------------------------------------------------------------------------------
    def version(self) -> int:
        """The change counter (0 for a collection never written)."""
        value = self.store.get_meta(self._meta_key)
        return int(value) if value is not None else 0

    def iter_chunks(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """``(chunk id, content, metadata)`` of every chunk, in insertion order."""
        for key, data in self.store.iter_records(self.chunk_kind):
            yield key, str(data["content"]), dict(data["metadata"])

    def get_file(self, path: str) -> FileRecord | None:
        """The record of the document at ``path``, or ``None``."""
        data = self.store.get_record(self.file_kind, path)
        return None if data is None else FileRecord.from_dict(data)

    def iter_files(self) -> Iterator[FileRecord]:
        """Records of every document, in ingestion order."""
        for _key, data in self.store.iter_records(self.file_kind):
            yield FileRecord.from_dict(data)

    def count_chunks(self) -> int:
        """Number of stored chunks."""
        return self.store.count_records(self.chunk_kind)

    def count_files(self) -> int:
        """Number of stored documents."""
        return self.store.count_records(self.file_kind)

    # -- writes (call inside ``store.transaction()``) ----------------------------------------
    def bump(self) -> None:
        """Mark the collection changed and register it in ``doc_collection``."""
        self.store.set_meta(self._meta_key, str(self.version() + 1))
        if self.store.get_record("doc_collection", self.collection) is None:
            self.store.put_record("doc_collection", self.collection, {"created_at": time.time()})

    def put_file(
        self, record: FileRecord, chunks: Sequence[tuple[str, str, dict[str, Any]]]
    ) -> None:
        """Store a document's record and its ``(id, content, metadata)`` chunks."""
        self.store.put_records(
            self.chunk_kind,
            [(cid, {"content": content, "metadata": meta}) for cid, content, meta in chunks],
        )
        self.store.put_record(self.file_kind, record.path, record.to_dict())

    def delete_file(self, record: FileRecord) -> None:
        """Remove a document's record and chunks (its vectors are removed by the caller)."""
        self.store.delete_records(self.chunk_kind, list(record.chunk_ids))
        self.store.delete_records(self.file_kind, [record.path])


def list_collections(store: BaseStore) -> list[str]:
    """Names of the document collections in ``store``, sorted.

    Example:
        >>> from costeer_lab.store import get_store
        >>> list_collections(get_store(":memory:"))
        []
    """
    return sorted(key for key, _ in store.iter_records("doc_collection"))
