"""``DocumentKB``: a knowledge base of documents (Markdown, reStructuredText, text, Python
docstrings) that agents and notebooks retrieve context from.

The store is the source of truth (see :mod:`costeer_lab.docs._stored`); the FAISS index of the
chunk vectors, the BM25 index and the metadata columns are derived views, rebuilt when the
collection's change counter moves (also when another process wrote to the store).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from costeer_lab.docs._ingest import IngestReport, ingest_paths, remove_files
from costeer_lab.docs._search import Mode, SearchView, rank
from costeer_lab.docs._stored import DocStore, FileRecord, check_collection_name
from costeer_lab.embed import BaseEmbedder, get_embedder
from costeer_lab.errors import InvalidInputError, NotFoundError
from costeer_lab.index import VectorCollection
from costeer_lab.store import BaseStore, get_store

__all__ = ["DocumentKB", "EmptyCollectionWarning"]


class EmptyCollectionWarning(UserWarning):
    """A retrieval ran on a collection (or a version) holding no chunks."""


def _open_store(db_path: str | Path | BaseStore | None) -> tuple[BaseStore, bool]:
    from costeer_lab.settings import default_data_dir, get_settings

    if isinstance(db_path, BaseStore):
        return db_path, False
    if db_path is None:
        db_path = get_settings().db_path or default_data_dir() / "knowledge.db"
    text = str(db_path)
    if "://" in text or text == ":memory:":
        return get_store(text), True
    path = Path(text).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    from costeer_lab.store import SQLiteStore

    return SQLiteStore(path), True  # any suffix; a broken file raises StoreError


class DocumentKB:
    """A collection of chunked documents in a store, searchable by vector, keyword or both.

    Args:
        collection_name: the collection (default ``COSTEER_LAB_COLLECTION``, else
            ``costeer_lab_knowledge``); several collections share one store.
        db_path: a SQLite file (created with its directory), a store URL, an open
            :class:`~costeer_lab.store.BaseStore` (not closed by :meth:`close`), or ``None``
            for ``COSTEER_LAB_DB_PATH``, else ``<data dir>/knowledge.db``. A file that is not
            a store raises :class:`~costeer_lab.errors.StoreError`: there is no silent
            in-memory fallback.
        embedder: an embedder or its registry name (default ``settings.docs.embedder``). Each
            embedder has its own vector collection; opening a collection with a new embedder
            embeds its chunks once.
        chunk_size / chunk_overlap / index_kind / rrf_k / candidates / mmr_lambda: override
            the ``docs`` settings (see :class:`~costeer_lab.settings.DocsSettings`).

    Example:
        >>> kb = DocumentKB("demo", db_path=":memory:")
        >>> kb.add_text("# Retries\\nSet max_retries on the client.", path="guide.md").added
        1
        >>> kb.retrieve("how many retries", n_results=1)[0]["metadata"]["section_title"]
        'Retries'
    """

    def __init__(
        self,
        collection_name: str | None = None,
        db_path: str | Path | BaseStore | None = None,
        *,
        embedder: str | BaseEmbedder | None = None,
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        index_kind: str | None = None,
        rrf_k: int | None = None,
        candidates: int | None = None,
        mmr_lambda: float | None = None,
    ) -> None:
        from costeer_lab.settings import get_settings

        settings = get_settings()
        cfg = settings.docs
        name = collection_name if collection_name is not None else settings.collection
        self.collection = check_collection_name(name)
        self.chunk_size = cfg.chunk_size if chunk_size is None else chunk_size
        self.chunk_overlap = cfg.chunk_overlap if chunk_overlap is None else chunk_overlap
        from costeer_lab.docs._chunk import split_pieces

        split_pieces("", self.chunk_size, self.chunk_overlap)  # validates both
        self.rrf_k = cfg.rrf_k if rrf_k is None else rrf_k
        self.candidates = cfg.candidates if candidates is None else candidates
        self.mmr_lambda = cfg.mmr_lambda if mmr_lambda is None else mmr_lambda
        self.default_mode: Mode = cfg.mode
        self.progress_min_files = cfg.progress_min_files
        kind = cfg.index_kind if index_kind is None else index_kind
        if kind not in ("exact", "hnsw"):
            raise InvalidInputError(f"index_kind must be 'exact' or 'hnsw', got {kind!r}")
        self.store, self._owns_store = _open_store(db_path)
        try:
            emb = embedder if embedder is not None else cfg.embedder
            self.embedder = get_embedder(emb) if isinstance(emb, str) else emb
            self.docs = DocStore(self.store, self.collection)
            self.vectors = VectorCollection(
                self.store,
                self.docs.vector_collection(self.embedder.id),
                self.embedder,
                kind="exact" if kind == "exact" else "hnsw",
            )
            self._view: SearchView | None = None
            self._embedded_version = -1
            self._backfill()
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"<DocumentKB {self.collection!r} {self.embedder.id} store={self.store.url}>"

    def __enter__(self) -> DocumentKB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the store if this object opened it."""
        if self._owns_store:
            self.store.close()

    # -- ingestion ---------------------------------------------------------------------------
    def ingest(
        self,
        path: str | Path | Iterable[str | Path],
        *,
        source: str | None = None,
        version: str | None = None,
        prune: bool = False,
        progress: bool | None = None,
    ) -> IngestReport:
        """Ingest files or folders (``.md``, ``.markdown``, ``.mdx``, ``.rst``, ``.txt``,
        ``.py`` docstrings). Unchanged files are skipped, changed ones replace their chunks.

        Args:
            path: a file, a folder (searched recursively), or several.
            source: the ``source`` metadata (default: the path given, as written).
            version: force this version (default: front matter ``version:``, else a ``v3/``
                directory in the path, else none).
            prune: also remove documents under the given folders whose files are gone.
            progress: show a progress bar (default: when there are many files).

        Raises:
            NotFoundError: a path does not exist.
            InvalidInputError: a file is not UTF-8, has bad front matter or cannot be parsed.

        Example:
            >>> import tempfile, pathlib
            >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.md").write_text("# A\\nx")
            >>> kb = DocumentKB("t", db_path=":memory:")
            >>> kb.ingest(d).added, kb.ingest(d).unchanged
            (1, 1)
        """
        roots = [path] if isinstance(path, str | Path) else list(path)
        report = ingest_paths(
            self, [Path(p) for p in roots], source=source, version=version, progress=progress
        )
        if prune:
            report = report.merge(self.prune([Path(p) for p in roots]))
        return report

    def add_text(
        self,
        text: str,
        *,
        path: str,
        source: str = "text",
        version: str | None = None,
    ) -> IngestReport:
        """Ingest ``text`` as the document ``path`` (its suffix picks the parser; no file is
        read). Calling it again with new text replaces the document (an update)."""
        return ingest_paths(
            self, [Path(path)], source=source, version=version, texts={str(Path(path)): text}
        )

    def update_document(self, path: str | Path, text: str | None = None) -> IngestReport:
        """Re-ingest one document from its file, or from ``text`` when given.

        Raises:
            NotFoundError: the document is not in the collection.
        """
        record = self._record(path)
        if text is None:
            return ingest_paths(self, [Path(record.path)], source=record.source, version=None)
        return self.add_text(text, path=record.path, source=record.source)

    def delete_document(self, path: str | Path) -> int:
        """Remove a document and its chunks; returns the number of chunks removed.

        Raises:
            NotFoundError: the document is not in the collection.
        """
        record = self._record(path)
        remove_files(self, [record])
        return len(record.chunk_ids)

    def prune(self, roots: Iterable[str | Path] | None = None) -> IngestReport:
        """Remove documents whose files no longer exist (only those under ``roots``)."""
        under = None if roots is None else [str(Path(r).expanduser().absolute()) for r in roots]
        gone = [
            r
            for r in self.docs.iter_files()
            if (under is None or any(r.path == u or r.path.startswith(u + "/") for u in under))
            and r.origin == "file"
            and not Path(r.path).is_file()
        ]
        remove_files(self, gone)
        return IngestReport(removed=len(gone), chunks_removed=sum(len(r.chunk_ids) for r in gone))

    def _record(self, path: str | Path) -> FileRecord:
        for key in (str(path), str(Path(path).expanduser().absolute())):
            record = self.docs.get_file(key)
            if record is not None:
                return record
        raise NotFoundError(
            f"document {str(path)!r} is not in collection {self.collection!r}; "
            f"it holds {self.docs.count_files()} document(s)"
        )

    def _backfill(self) -> None:
        """Embed chunks that have no vector of this embedder yet (written by a knowledge base
        with another embedder, or before this one existed) and drop orphan vectors; checked
        once per change of the collection."""
        view = self.view()
        if view.version == self._embedded_version:
            return
        self.vectors.sync()
        have = set(self.vectors.index.ids())
        missing = [i for i, cid in enumerate(view.ids) if cid not in have]
        orphans = have - set(view.ids)
        if orphans:
            self.vectors.remove(orphans)
        for start in range(0, len(missing), 512):
            rows = missing[start : start + 512]
            self.vectors.upsert_texts(
                [view.ids[i] for i in rows], [view.contents[i] for i in rows]
            )
        self._embedded_version = view.version

    # -- reads -------------------------------------------------------------------------------
    def view(self) -> SearchView:
        """The in-memory view of the chunks, re-read when the store changed."""
        version = self.docs.version()
        if self._view is None or self._view.version != version:
            ids, contents, metas = [], [], []
            for cid, content, meta in self.docs.iter_chunks():
                ids.append(cid)
                contents.append(content)
                metas.append(meta)
            self._view = SearchView(ids, contents, metas, version)
        return self._view

    def retrieve(
        self,
        query: str,
        n_results: int = 5,
        where: dict[str, Any] | None = None,
        version_filter: str | None = None,
        *,
        mode: Mode | None = None,
        mmr: bool = False,
        mmr_lambda: float | None = None,
    ) -> list[dict[str, Any]]:
        """The chunks most relevant to ``query``: ``[{"content", "metadata",
        "relevance_score"}]``, best first (MMR picking order with ``mmr``), scores in [0, 1].

        Args:
            query: what to look for.
            n_results: how many chunks at most; fewer only when fewer match the filters.
            where: metadata filter applied before ranking (see :mod:`costeer_lab.docs._filter`).
            version_filter: only chunks of this version (``"latest"``: the highest version).
            mode: ``vector``, ``keyword`` or ``hybrid`` (default ``settings.docs.mode``).
            mmr: diversify the results by maximal marginal relevance.
            mmr_lambda: MMR trade-off (default ``settings.docs.mmr_lambda``).

        Raises:
            InvalidInputError: a bad query, ``n_results``, mode or ``where`` (naming the
                operator).

        Example:
            >>> kb = DocumentKB("r", db_path=":memory:")
            >>> _ = kb.add_text("# Timeouts\\nSet timeout=20.", path="v2/a.md")
            >>> _ = kb.add_text("# Timeouts\\nSet timeout=30.", path="v3/a.md")
            >>> [d["metadata"]["version"] for d in kb.retrieve("timeout", version_filter="3")]
            ['3']
        """
        return self._search(query, n_results, where, version_filter, mode, mmr, mmr_lambda)

    def search_by_topic(
        self, topic: str, n_results: int = 5, where: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Chunks about ``topic``, matched on section titles (and their parents) as well as on
        content; at most one chunk per section.

        Example:
            >>> kb = DocumentKB("t", db_path=":memory:")
            >>> _ = kb.add_text("# Pagination\\nList endpoints.\\n# Errors\\nRaised.", path="a.md")
            >>> kb.search_by_topic("pagination", 1)[0]["metadata"]["section_title"]
            'Pagination'
        """
        hits = self._search(
            topic, max(n_results * 3, n_results), where, None, "hybrid", False, None, topic=True
        )
        seen: set[tuple[str, str, int]] = set()
        out = []
        for hit in hits:
            m = hit["metadata"]
            key = (str(m.get("path")), str(m.get("section_path")), int(m.get("start_line", 0)))
            if key not in seen:
                seen.add(key)
                out.append(hit)
        return out[:n_results]

    def _search(
        self,
        query: str,
        n_results: int,
        where: dict[str, Any] | None,
        version_filter: str | None,
        mode: Mode | None,
        mmr: bool,
        mmr_lambda: float | None,
        *,
        topic: bool = False,
    ) -> list[dict[str, Any]]:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError(f"query must be a non-empty string, got {query!r:.60}")
        if isinstance(n_results, bool) or not isinstance(n_results, int) or n_results < 1:
            raise InvalidInputError(f"n_results must be a positive int, got {n_results!r}")
        view = self.view()
        if version_filter is not None:
            if not isinstance(version_filter, str):
                raise InvalidInputError(f"version_filter must be a str, got {version_filter!r}")
            if version_filter == "latest":
                versions = self.get_versions()
                version_filter = versions[-1] if versions else None
            if version_filter is not None:
                clause = {"version": version_filter}
                where = clause if where is None else {"$and": [where, clause]}
        mask = view.mask(where)
        if len(view) == 0 or (mask is not None and not mask.any()):
            what = "is empty" if len(view) == 0 else "has no chunk matching the filters"
            warnings.warn(
                f"document collection {self.collection!r} {what}; retrieve returns []",
                EmptyCollectionWarning,
                stacklevel=3,
            )
            return []
        self._backfill()
        self.vectors.sync()
        ranked = rank(
            view,
            self.vectors,
            query,
            n_results,
            mode=self.default_mode if mode is None else mode,
            mask=mask,
            rrf_k=self.rrf_k,
            candidates=max(self.candidates, 4 * n_results),
            mmr_lambda=(self.mmr_lambda if mmr_lambda is None else mmr_lambda) if mmr else None,
            topic=topic,
        )
        return [
            {
                "content": view.contents[r.row],
                "metadata": dict(view.metadata[r.row]),
                "relevance_score": round(r.score, 6),
            }
            for r in ranked
        ]

    def get_versions(self) -> list[str]:
        """The distinct document versions, in version order (``"2" < "10"``)."""
        from costeer_lab.docs._filter import version_key

        found = {str(m["version"]) for m in self.view().metadata if m.get("version") is not None}
        return sorted(found, key=version_key)

    def documents(self) -> list[dict[str, Any]]:
        """One summary per document: path, source, version, chunk count, ingestion time."""
        return [
            {
                "path": r.path,
                "source": r.source,
                "version": r.version,
                "chunks": len(r.chunk_ids),
                "ingested_at": r.ingested_at,
            }
            for r in self.docs.iter_files()
        ]

    def stats(self) -> dict[str, Any]:
        """Counts of the collection: documents, chunks, sources, versions, characters."""
        view = self.view()
        sizes = [len(c) for c in view.contents]
        return {
            "collection": self.collection,
            "store": self.store.url,
            "embedder": self.embedder.id,
            "documents": self.docs.count_files(),
            "chunks": len(view),
            "vectors": len(self.vectors),
            "sources": sorted({str(m.get("source")) for m in view.metadata}),
            "versions": self.get_versions(),
            "characters": sum(sizes),
            "mean_chunk_size": round(sum(sizes) / len(sizes), 1) if sizes else 0.0,
            "checked_at": time.time(),
        }
