"""``DocumentKB``: a knowledge base of documents (Markdown, reStructuredText, text, Python
docstrings) that agents and notebooks retrieve context from.

The store is the source of truth (see :mod:`costeer_lab.docs._stored`); the FAISS index of the
chunk vectors, the BM25 index and the metadata columns are derived views, rebuilt when the
collection's change counter moves (also when another process wrote to the store).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from costeer_lab.docs._ingest import IngestReport, ingest_paths, remove_files
from costeer_lab.docs._reading import KBReader
from costeer_lab.docs._rerank import Reranker
from costeer_lab.docs._search import Fusion, Mode, SearchView
from costeer_lab.docs._secrets import SecretsMode
from costeer_lab.docs._stored import DocStore, FileRecord, check_collection_name
from costeer_lab.embed import BaseEmbedder, get_embedder
from costeer_lab.errors import InvalidInputError, NotFoundError
from costeer_lab.index import VectorCollection
from costeer_lab.store import BaseStore, get_store

__all__ = ["DocumentKB"]


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


class DocumentKB(KBReader):
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
        chunk_size / chunk_overlap / index_kind / rrf_k / candidates / mmr_lambda / fusion /
            vector_weight / min_score / rerank / rerank_k / rerank_weight / rerank_floor:
            override the ``docs`` settings (see :class:`~costeer_lab.settings.DocsSettings`).
        reranker: the reranker of ``retrieve(..., rerank=True)``: an embedder, its registry
            name (default ``settings.docs.rerank_model``, ``minilm``) or any
            :class:`~costeer_lab.docs.Reranker`; loaded on first use.

    Example:
        >>> kb = DocumentKB("demo", db_path=":memory:")
        >>> kb.add_text("# Retries\\nSet max_retries on the client.", path="guide.md").added
        1
        >>> kb.retrieve("how many retries", n_results=1)[0]["metadata"]["section_title"]
        'Retries'
    """

    #: What ingestion does with a credential in a document, ``"redact"`` or ``"refuse"``
    #: (``None``: the ``docs.secrets`` setting); see :mod:`costeer_lab.docs._secrets`.
    secrets: SecretsMode | None = None

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
        fusion: str | None = None,
        vector_weight: float | None = None,
        min_score: float | None = None,
        rerank: bool | None = None,
        rerank_k: int | None = None,
        reranker: str | BaseEmbedder | Reranker | None = None,
        rerank_weight: float | None = None,
        rerank_floor: float | None = None,
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
        self.fusion: Fusion = cfg.fusion if fusion is None else fusion  # type: ignore[assignment]
        if self.fusion not in ("score", "rrf"):
            raise InvalidInputError(f"fusion must be 'score' or 'rrf', got {self.fusion!r}")
        self.vector_weight = cfg.vector_weight if vector_weight is None else vector_weight
        if not 0.0 <= self.vector_weight <= 1.0:
            raise InvalidInputError(f"vector_weight must be in [0, 1], got {vector_weight!r}")
        self.min_score = cfg.min_score if min_score is None else min_score
        self.rerank = cfg.rerank if rerank is None else bool(rerank)
        self.rerank_k = cfg.rerank_k if rerank_k is None else rerank_k
        if isinstance(self.rerank_k, bool) or not isinstance(self.rerank_k, int):
            raise InvalidInputError(f"rerank_k must be a positive int, got {rerank_k!r}")
        if self.rerank_k < 1:
            raise InvalidInputError(f"rerank_k must be a positive int, got {rerank_k!r}")
        self.rerank_weight = cfg.rerank_weight if rerank_weight is None else rerank_weight
        if not 0.0 <= self.rerank_weight <= 1.0:
            raise InvalidInputError(f"rerank_weight must be in [0, 1], got {rerank_weight!r}")
        self.rerank_floor = cfg.rerank_floor if rerank_floor is None else rerank_floor
        if not 0.0 <= self.rerank_floor < 1.0:
            raise InvalidInputError(f"rerank_floor must be in [0, 1), got {rerank_floor!r}")
        self.reranker_spec = cfg.rerank_model if reranker is None else reranker
        self._reranker = None
        self.default_mode: Mode = cfg.mode
        self.progress_min_files = cfg.progress_min_files
        kind = cfg.index_kind if index_kind is None else index_kind
        if kind not in ("exact", "hnsw", "auto"):
            raise InvalidInputError(f"index_kind must be 'exact', 'hnsw' or 'auto', got {kind!r}")
        self.store, self._owns_store = _open_store(db_path)
        try:
            emb = embedder if embedder is not None else cfg.embedder
            self.embedder = get_embedder(emb) if isinstance(emb, str) else emb
            self.docs = DocStore(self.store, self.collection)
            self.vectors = VectorCollection(
                self.store,
                self.docs.vector_collection(self.embedder.id),
                self.embedder,
                kind=kind,  # type: ignore[arg-type]  # checked above
                hnsw_above=cfg.hnsw_above,
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
