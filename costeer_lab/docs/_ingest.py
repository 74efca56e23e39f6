"""Ingestion: files in, chunks and vectors written to the store in transactions.

Files are processed in batches: each batch is parsed, the new chunks are embedded in one call
(outside any transaction, through the store's embedding cache), then one transaction replaces
the chunks and vectors of every changed file and bumps the collection's change counter. A file
whose fingerprint (content hash, chunking settings, source, forced version) is unchanged is
skipped. A failure leaves the store as it was before the failing batch.

Before chunking, every document goes through the secret scan (:mod:`costeer_lab.docs._secrets`):
its credentials are redacted, or the document is refused, per ``docs.secrets``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costeer_lab.docs._secrets import SecretsMode, screen_secrets
from costeer_lab.docs._source import iter_document_files, parse_file, read_document, sha256_text
from costeer_lab.docs._stored import FileRecord
from costeer_lab.errors import NotFoundError

if TYPE_CHECKING:
    from costeer_lab.docs._kb import DocumentKB

__all__ = ["IngestReport", "ingest_paths", "remove_files"]

_BATCH_FILES = 64
#: Bumped when chunking changes, so re-ingestion re-chunks files ingested by older code.
_PARSER_VERSION = 1


@dataclass(frozen=True)
class IngestReport:
    """What an ingestion did.

    Attributes:
        files: document files seen.
        added / updated / unchanged / removed: documents new, changed, skipped, deleted.
        chunks_added / chunks_removed: chunks written and deleted.
        characters: characters of the files parsed (changed or new).
        seconds: wall time.
        secrets_redacted: credentials replaced by ``[REDACTED <kind>]`` in the documents
            ingested (``docs.secrets = "redact"``).
    """

    files: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    characters: int = 0
    seconds: float = 0.0
    secrets_redacted: int = 0

    def merge(self, other: IngestReport) -> IngestReport:
        """Field-wise sum of two reports."""
        return IngestReport(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _fingerprint(
    file_hash: str, kb: DocumentKB, source: str, version: str | None, secrets: str
) -> str:
    return sha256_text(
        json.dumps(
            [file_hash, kb.chunk_size, kb.chunk_overlap, source, version, _PARSER_VERSION, secrets]
        )
    )


def _secrets_mode(kb: DocumentKB) -> SecretsMode:
    if kb.secrets is not None:
        return kb.secrets
    from costeer_lab.settings import get_settings

    return get_settings().docs.secrets


def _targets(
    roots: Sequence[Path], source: str | None, texts: Mapping[str, str] | None
) -> list[tuple[Path, str, str | None]]:
    """``(path, source, text or None)`` of every document to ingest."""
    if texts is not None:
        return [(Path(key), source or "text", text) for key, text in texts.items()]
    out: list[tuple[Path, str, str | None]] = []
    for root in roots:
        full = root.expanduser().absolute()
        if not full.exists():
            raise NotFoundError(f"cannot ingest {str(root)!r}: no such file or directory")
        label = source if source is not None else str(root)
        out += [(p, label, None) for p in iter_document_files(full)]
    return out


def _progress(items: list[Any], show: bool) -> Iterator[Any]:
    if not show:
        yield from items
        return
    from costeer_lab._progress import progress_bar  # notebooks keep one final line

    yield from progress_bar(iterable=items, desc="ingesting documents", unit="file")


def ingest_paths(
    kb: DocumentKB,
    roots: Sequence[Path],
    *,
    source: str | None,
    version: str | None,
    progress: bool | None = None,
    texts: Mapping[str, str] | None = None,
) -> IngestReport:
    """Ingest the documents under ``roots`` (or the given ``texts`` keyed by path) into ``kb``.

    Raises:
        NotFoundError: a root does not exist.
        InvalidInputError: a file cannot be read or parsed (nothing of its batch is written).
    """
    start = time.perf_counter()
    targets = _targets(roots, source, texts)
    show = progress if progress is not None else len(targets) >= kb.progress_min_files
    report = IngestReport(files=len(targets))
    batch: list[tuple[Path, str, str | None]] = []
    for target in _progress(targets, show):
        batch.append(target)
        if len(batch) >= _BATCH_FILES:
            report = report.merge(_ingest_batch(kb, batch, version, texts is not None))
            batch = []
    if batch:
        report = report.merge(_ingest_batch(kb, batch, version, texts is not None))
    return report.merge(IngestReport(seconds=time.perf_counter() - start))


def _ingest_batch(
    kb: DocumentKB, batch: list[tuple[Path, str, str | None]], version: str | None, from_text: bool
) -> IngestReport:
    changed: list[tuple[FileRecord | None, FileRecord, list[tuple[str, str, dict[str, Any]]]]] = []
    unchanged = characters = redacted = 0
    secrets = _secrets_mode(kb)
    for path, source, given in batch:
        text = read_document(path) if given is None else given
        fingerprint = _fingerprint(sha256_text(text), kb, source, version, secrets)
        old = kb.docs.get_file(str(path))
        if old is not None and old.fingerprint == fingerprint:
            unchanged += 1
            continue
        text, found = screen_secrets(text, str(path), secrets)
        redacted += found
        parsed = parse_file(
            path,
            source=source,
            chunk_size=kb.chunk_size,
            chunk_overlap=kb.chunk_overlap,
            text=text,
            version=version,
        )
        doc_id = sha256_text(parsed.path)[:16]
        chunks = [
            (f"{doc_id}-{i}", content, meta) for i, (content, meta) in enumerate(parsed.chunks)
        ]
        record = FileRecord(
            path=parsed.path,
            fingerprint=fingerprint,
            file_hash=parsed.file_hash,
            chunk_ids=tuple(c[0] for c in chunks),
            version=parsed.version,
            source=source,
            ingested_at=time.time(),
            origin="text" if from_text else "file",
        )
        characters += sum(len(c[1]) for c in chunks)
        changed.append((old, record, chunks))
    if not changed:
        return IngestReport(unchanged=unchanged)
    new_texts = [content for _, _, chunks in changed for _, content, _ in chunks]
    if new_texts:
        kb.vectors.embedder.embed(new_texts)  # fills the embedding cache before the write lock
    removed_chunks = 0
    with kb.store.transaction():
        for _old, record, chunks in changed:
            # read again under the write lock: another writer may have replaced it meanwhile
            current = kb.docs.get_file(record.path)
            if current is not None:
                removed_chunks += len(current.chunk_ids)
                _remove(kb, current)
            kb.docs.put_file(record, chunks)
            if chunks:
                kb.vectors.upsert_texts([c[0] for c in chunks], [c[1] for c in chunks])
        kb.docs.bump()
    updated = sum(1 for old, _, _ in changed if old is not None)
    return IngestReport(
        added=len(changed) - updated,
        updated=updated,
        unchanged=unchanged,
        chunks_added=len(new_texts),
        chunks_removed=removed_chunks,
        characters=characters,
        secrets_redacted=redacted,
    )


def _remove(kb: DocumentKB, record: FileRecord) -> None:
    kb.docs.delete_file(record)
    if record.chunk_ids:
        kb.vectors.remove(list(record.chunk_ids))


def remove_files(kb: DocumentKB, records: Sequence[FileRecord]) -> None:
    """Delete documents (records, chunks, vectors) in one transaction."""
    if not records:
        return
    with kb.store.transaction():
        for record in records:
            _remove(kb, record)
        kb.docs.bump()
