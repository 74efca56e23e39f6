"""The read side of :class:`~costeer_lab.docs.DocumentKB`: the in-memory view of a collection,
kept in step with the store, and retrieval (vector, keyword, hybrid, topics, MMR), versions and
statistics.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

from costeer_lab.docs._rerank import EmbeddingReranker, Reranker
from costeer_lab.docs._search import Fusion, Mode, SearchView, rank
from costeer_lab.docs._stored import DocStore
from costeer_lab.embed import BaseEmbedder
from costeer_lab.errors import InvalidInputError
from costeer_lab.index import VectorCollection
from costeer_lab.store import BaseStore

__all__ = ["EmptyCollectionWarning", "KBReader"]


class EmptyCollectionWarning(UserWarning):
    """A retrieval ran on a collection (or a version) holding no chunks."""


class KBReader:
    """Retrieval methods of :class:`~costeer_lab.docs.DocumentKB` (which sets the attributes)."""

    collection: str
    store: BaseStore
    embedder: BaseEmbedder
    docs: DocStore
    vectors: VectorCollection
    rrf_k: int
    candidates: int
    mmr_lambda: float
    fusion: Fusion
    vector_weight: float
    min_score: float
    rerank: bool
    rerank_k: int
    reranker_spec: str | BaseEmbedder | Reranker
    rerank_weight: float
    rerank_floor: float
    default_mode: Mode
    _reranker: Reranker | None
    _view: SearchView | None
    _embedded_version: int

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
        min_score: float | None = None,
        rerank: bool | None = None,
        rerank_k: int | None = None,
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
            min_score: drop chunks scoring below it (default ``settings.docs.min_score``,
                0.18, calibrated for hybrid mode; 0 keeps everything). An unrelated query
                then returns ``[]``. Applied after reranking.
            rerank: re-score the best ``rerank_k`` first-stage candidates with the reranker
                (default ``settings.docs.rerank``; see :mod:`costeer_lab.docs._rerank`).
            rerank_k: candidates the reranker sees (default ``settings.docs.rerank_k``).

        Raises:
            InvalidInputError: a bad query, ``n_results``, mode, ``min_score``, ``rerank_k``
                or ``where`` (naming the operator).

        Example:
            >>> from costeer_lab.docs import DocumentKB
            >>> kb = DocumentKB("r", db_path=":memory:")
            >>> _ = kb.add_text("# Timeouts\\nSet timeout=20.", path="v2/a.md")
            >>> _ = kb.add_text("# Timeouts\\nSet timeout=30.", path="v3/a.md")
            >>> [d["metadata"]["version"] for d in kb.retrieve("timeout", version_filter="3")]
            ['3']
        """
        return self._search(
            query,
            n_results,
            where,
            version_filter,
            mode,
            mmr,
            mmr_lambda,
            min_score=min_score,
            rerank=rerank,
            rerank_k=rerank_k,
        )

    def reranker(self) -> Reranker:
        """The reranker (built on first use from the ``reranker`` argument, default
        ``settings.docs.rerank_model``, with ``rerank_weight`` and ``rerank_floor``)."""
        if self._reranker is None:
            spec = self.reranker_spec
            if isinstance(spec, str | BaseEmbedder):
                self._reranker = EmbeddingReranker(
                    spec, weight=self.rerank_weight, floor=self.rerank_floor
                )
            else:
                self._reranker = spec
        return self._reranker

    def search_by_topic(
        self, topic: str, n_results: int = 5, where: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Chunks about ``topic``, matched on section titles (and their parents) as well as on
        content; at most one chunk per section.

        Example:
            >>> from costeer_lab.docs import DocumentKB
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
        min_score: float | None = None,
        rerank: bool | None = None,
        rerank_k: int | None = None,
    ) -> list[dict[str, Any]]:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError(f"query must be a non-empty string, got {query!r:.60}")
        floor = self.min_score if min_score is None else min_score
        if isinstance(floor, bool) or not isinstance(floor, int | float) or not 0 <= floor <= 1:
            raise InvalidInputError(f"min_score must be a number in [0, 1], got {floor!r}")
        if isinstance(n_results, bool) or not isinstance(n_results, int) or n_results < 1:
            raise InvalidInputError(f"n_results must be a positive int, got {n_results!r}")
        k = self.rerank_k if rerank_k is None else rerank_k
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"rerank_k must be a positive int, got {k!r}")
        use_rerank = self.rerank if rerank is None else rerank
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
            fusion=self.fusion,
            vector_weight=self.vector_weight,
            min_score=float(floor),
            reranker=self.reranker() if use_rerank else None,
            rerank_k=k,
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
