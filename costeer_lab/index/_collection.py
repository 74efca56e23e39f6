"""``VectorCollection``: texts in, similar ids out — store vectors, a cached embedder and an index.

The store's vector collection is the source of truth; the :class:`FaissIndex` is a derived view
that is loaded from ``index_path`` when fresh and rebuilt from the store otherwise. Freshness is
the collection's ``(version, etag)`` (:meth:`~costeer_lab.store.BaseStore.collection_state`),
which every write replaces: a file is reused only for exactly the store state it was saved at.

With ``kind="auto"`` the index is exact below ``hnsw_above`` vectors and HNSW from there on
(:func:`~costeer_lab.index.effective_kind`): an open picks the kind by the store's vector count
(so the same store state always gets the same kind, and its file of that kind), writes keep
following the index they have, and the first :meth:`VectorCollection.sync`, search or
:meth:`VectorCollection.checkpoint` after the count crossed the threshold rebuilds it once, in
the other kind, from the store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from costeer_lab.embed import BaseEmbedder, CachedEmbedder, check_same_space, text_sha256
from costeer_lab.errors import InvalidInputError
from costeer_lab.index._faiss import FaissIndex, IndexKind
from costeer_lab.index._kind import HNSW_ABOVE, IndexChoice, effective_kind
from costeer_lab.index._location import index_file
from costeer_lab.index._result import SearchResult
from costeer_lab.index._validate import Filter, check_ids, normalize_rows
from costeer_lab.store import BaseStore, BatchWrite, VectorWrite

__all__ = ["VectorCollection"]

_log = logging.getLogger(__name__)


class VectorCollection:
    """A named vector collection of a store, searchable by text through a FAISS index.

    Writes go to the store first (one transaction), then to the in-memory index. Before each
    search (when ``sync_on_search``) the store's collection state is compared with the index's,
    and the index is rebuilt if another process or store object changed the collection.

    Persistence (``index_path``, or ``persist=True`` for the store's own place, see
    :func:`~costeer_lab.index._location.index_file`): on open the file is loaded when it matches
    the store's collection state, else the index is rebuilt from the store and the file replaced
    atomically. Writes update the in-memory index only (the file, saved at an older state, is
    then stale and never trusted); :meth:`checkpoint` writes it again. A read-only store's file
    is read, never written.

    Args:
        store: the store holding the collection.
        name: collection name.
        embedder: embeds texts; wrapped in :class:`~costeer_lab.embed.CachedEmbedder` (cache in
            ``store``) unless it is one already.
        kind: ``"exact"``, ``"hnsw"`` or ``"auto"`` (exact below ``hnsw_above`` vectors, HNSW
            from there on).
        hnsw_above: the size from which ``auto`` uses HNSW.
        index_path: where the index is persisted (:meth:`save`); loaded on open when fresh (one
            path for either kind: the file's header names its kind).
        persist: with no ``index_path``, persist the index at the store's place for it
            (beside a SQLite file; in the cache directory for PostgreSQL; nowhere in memory),
            one file per kind.
        sync_on_search: check the store's collection state before every search.
        index_kw: further :class:`FaissIndex` arguments (``hnsw_m``, ``ef_search``, …).

    Raises:
        EmbedderMismatchError: the collection already holds vectors of another embedder id or
            dimension (both are named).

    Example:
        >>> from costeer_lab.embed import get_embedder
        >>> from costeer_lab.store import get_store
        >>> col = VectorCollection(get_store(":memory:"), "notes", get_embedder("hashing", dim=64))
        >>> col.upsert_texts(["a", "b"], ["rolling mean of close", "volume spike detector"])
        >>> col.search_text("mean of the close price", k=1).ids
        ('a',)
    """

    def __init__(
        self,
        store: BaseStore,
        name: str,
        embedder: BaseEmbedder,
        *,
        kind: IndexChoice = "exact",
        hnsw_above: int = HNSW_ABOVE,
        index_path: str | Path | None = None,
        persist: bool = False,
        sync_on_search: bool = True,
        **index_kw: Any,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidInputError(f"collection name must be a non-empty str, got {name!r}")
        self.store = store
        self.name = name
        self.embedder: CachedEmbedder = (
            embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(embedder, store)
        )
        effective_kind(kind, 0, hnsw_above)  # checks both
        #: The kind asked for (``exact``, ``hnsw`` or ``auto``); :attr:`kind` is the held one.
        self.kind_choice: IndexChoice = kind
        self.hnsw_above = hnsw_above
        self._path = None if index_path is None else Path(index_path)
        self._persist = persist
        self.sync_on_search = sync_on_search
        self._index_kw = dict(index_kw)
        #: Collection state the file at ``index_path`` holds (``None``: unknown / none).
        self.saved_state: tuple[int, str] | None = None
        info = store.collection_info(name)
        if info is not None:
            check_same_space(info[0], info[1], self.embedder.id, self.embedder.dim)
        self.index: FaissIndex = self._open_index()
        if self.index.origin == "loaded" or (self.index_path and self._may_save):
            self.saved_state = self.state

    def __len__(self) -> int:
        return len(self.index)

    def __contains__(self, item: object) -> bool:
        return item in self.index

    def __repr__(self) -> str:
        return f"<VectorCollection {self.name!r} {self.index!r}>"

    @property
    def kind(self) -> IndexKind:
        """The kind of the index held now (``auto`` resolved)."""
        return self.index.kind

    @property
    def index_path(self) -> Path | None:
        """Where the index of the held kind is persisted (``None``: nowhere)."""
        return self.path_for(self.index.kind)

    def path_for(self, kind: IndexKind) -> Path | None:
        """Where an index of ``kind`` is persisted (``None``: nowhere)."""
        if self._path is not None or not self._persist:
            return self._path
        return index_file(self.store, self.name, kind)

    def wanted_kind(self, n: int) -> IndexKind:
        """The kind a collection of ``n`` vectors gets (:func:`effective_kind`)."""
        return effective_kind(self.kind_choice, n, self.hnsw_above)

    # -- writes ------------------------------------------------------------------------------
    def upsert_texts(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Embed ``texts`` (cached) and store them under ``ids``, replacing existing ones.

        Raises:
            InvalidInputError: empty input, non-string or repeated ids, count mismatch.
        """
        id_list = check_ids(ids)
        if isinstance(texts, str) or len(texts) != len(id_list):
            raise InvalidInputError(
                f"got {len(id_list)} ids but {1 if isinstance(texts, str) else len(texts)} texts"
                "; pass one text per id"
            )
        self.upsert_embedded(id_list, list(texts), self.embedder.embed(texts, persist=False))

    def upsert_embedded(
        self, ids: Sequence[str], texts: Sequence[str], raw: npt.NDArray[np.float32]
    ) -> None:
        """Store ``raw`` (this collection's embedder's output for ``texts``) under ``ids``.

        Each vector is stored once: a row whose unit-normalised vector is the embedder's output
        bit for bit is tagged with its text's sha256 in the collection, and the embedding
        cache finds it there (it is not written to the cache a second time); any other row's
        raw output goes to the cache as before. Callers embed with ``persist=False``.

        Example:
            >>> from costeer_lab.embed import get_embedder
            >>> from costeer_lab.store import get_store
            >>> col = VectorCollection(get_store(":memory:"), "n", get_embedder("hashing"))
            >>> raw = col.embedder.embed(["a b"], persist=False)
            >>> col.upsert_embedded(["x"], ["a b"], raw)
            >>> fresh = CachedEmbedder(get_embedder("hashing"), col.store)  # another process
            >>> _ = fresh.embed(["a b"]); (fresh.hits, fresh.misses), len(col)
            ((1, 0), 1)
        """
        write, cached = self.vector_write(ids, texts, raw)
        [(before, after)] = self.store.write_batch(
            BatchWrite(cached=[(self.embedder.id, cached)], vectors=[write])
        )
        self.take_write(write, before, after)

    def vector_write(
        self, ids: Sequence[str], texts: Sequence[str], raw: npt.NDArray[np.float32]
    ) -> tuple[VectorWrite, dict[str, npt.NDArray[np.float32]]]:
        """What :meth:`upsert_embedded` writes, prepared (nothing is written): the collection's
        vectors, and the raw outputs for the embedding cache (``{text sha256: vector}``) that
        the collection's rows do not hold bit for bit. Written with
        :meth:`~costeer_lab.store.BaseStore.write_batch`, then :meth:`take_write`.

        Example:
            >>> from costeer_lab.embed import get_embedder
            >>> from costeer_lab.store import BatchWrite, get_store
            >>> col = VectorCollection(get_store(":memory:"), "n", get_embedder("hashing"))
            >>> write, cached = col.vector_write(["x"], ["a b"], col.embedder.embed(["a b"]))
            >>> [(before, after)] = col.store.write_batch(BatchWrite(vectors=[write]))
            >>> len(col), col.store.count_vectors("n")
            (0, 1)
            >>> col.take_write(write, before, after); len(col)
            1
        """
        id_list = check_ids(ids)
        vectors = normalize_rows(raw, self.embedder.dim, n_rows=len(id_list))
        same = (vectors == np.asarray(raw, dtype=np.float32)).all(axis=1)
        hashes = [text_sha256(t) for t in texts]
        cached = {} if same.all() else {h: raw[i] for i, h in enumerate(hashes) if not same[i]}
        if self.store.read_only:
            cached = {}  # a read-only store is never written, cache or not
        tags: list[str | None] = [h if ok else None for h, ok in zip(hashes, same, strict=True)]
        return VectorWrite(self.name, self.embedder.id, id_list, vectors, tags), cached

    def take_write(
        self, write: VectorWrite, before: tuple[int, str], after: tuple[int, str]
    ) -> None:
        """Bring the index along with a committed :meth:`vector_write` (the collection's state
        ``before`` and ``after`` it): the vectors are added, or the index is rebuilt from the
        store when it had fallen behind (another writer came first)."""
        self._follow(before, after, lambda: self.index.upsert(write.ids, write.vectors))

    def remove(self, ids: Collection[str]) -> int:
        """Delete ids from the store and the index; returns how many existed in the store."""
        if isinstance(ids, str) or not isinstance(ids, Collection):
            raise InvalidInputError(f"ids must be a collection of strings, got {ids!r:.60}")
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return 0
        with self.store.transaction():
            self.store.lock_for_update()  # no other writer between "before" and "after"
            before = self.store.collection_state(self.name)
            removed = self.store.delete_vectors(self.name, id_list)
            after = self.store.collection_state(self.name)
        self._follow(before, after, lambda: self.index.remove(id_list))
        return removed

    # -- searches ----------------------------------------------------------------------------
    def search_text(self, text: str, k: int, *, filter: Filter | None = None) -> SearchResult:
        """The ``k`` ids whose texts are most similar to ``text``."""
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a str, got {type(text).__name__} {text!r:.60}")
        return self.search_texts([text], k, filter=filter)[0]

    def search_texts(
        self, texts: Sequence[str], k: int, *, filter: Filter | None = None
    ) -> list[SearchResult]:
        """One :class:`SearchResult` per text (embedded in one cached call)."""
        queries = self.embedder.embed(texts)
        self.sync(only_if_enabled=True)
        self._settle_kind()
        return self.index.search_batch(queries, k, filter=filter, embedder_id=self.embedder.id)

    def search_vector(
        self, vector: object, k: int, *, filter: Filter | None = None
    ) -> SearchResult:
        """The ``k`` ids most similar to a query vector of this collection's embedder."""
        self.sync(only_if_enabled=True)
        self._settle_kind()
        return self.index.search(vector, k, filter=filter, embedder_id=self.embedder.id)

    # -- index lifecycle ---------------------------------------------------------------------
    @property
    def state(self) -> tuple[int, str] | None:
        """The collection state (``(version, etag)``) the in-memory index reflects."""
        version, etag = self.index.source_version, self.index.source_etag
        return None if version is None or etag is None else (version, etag)

    def sync(
        self, *, only_if_enabled: bool = False, stored: tuple[int, str] | None = None
    ) -> bool:
        """Rebuild the index if the store's collection changed since, or (``auto``) if its size
        now calls for the other kind; returns True if rebuilt.

        A persisted file that matches the store's new state (another process saved it) is
        loaded instead of rebuilding; a rebuilt index is saved by the next :meth:`checkpoint`.
        ``stored``: the collection's state just read from the store by the caller
        (:meth:`~costeer_lab.store.BaseStore.collection_states`), so it is not read again.
        """
        if only_if_enabled and not self.sync_on_search:
            return False
        if stored is None:
            stored = self.store.collection_state(self.name)
        if stored == self.state:
            return self._settle_kind()
        self._reopen()
        return True

    def _reopen(self) -> None:
        self.index = self._open_index(save=False)
        self.saved_state = self.state if self.index.origin == "loaded" else None

    def _settle_kind(self) -> bool:
        """Rebuild the index once in the kind its size calls for (``auto``); True if it did."""
        if self.wanted_kind(len(self.index)) == self.index.kind:
            return False
        self._reopen()
        return True

    def save(self, path: str | Path | None = None) -> Path | None:
        """Persist the index to ``path`` or ``index_path``; returns where (``None``: nowhere)."""
        target = Path(path) if path is not None else self.index_path
        if target is not None:
            self.index.save(target)
            if target == self.index_path:
                self.saved_state = self.state
                self._drop_other_kind(self.index.kind)
        return target

    def _drop_other_kind(self, saved: IndexKind) -> None:
        """Under ``auto`` the store's place holds one index, of the kind the size calls for:
        once it is saved, the file of the other kind (an exact index the store outgrew, up to
        N x dim x 4 bytes) can only be stale, and is removed. A fixed kind leaves it alone (it
        may be another user's)."""
        if self.kind_choice != "auto" or self._path is not None:
            return
        other = self.path_for("exact" if saved == "hnsw" else "hnsw")
        if other is not None:
            other.unlink(missing_ok=True)

    def checkpoint(self) -> bool:
        """Write the index to ``index_path`` if it moved on since the file was written (writes
        made through this object, or a rebuild); returns True if it wrote. Atomic: a reader
        sees the old file or the new one. Nothing happens without ``index_path``, on a
        read-only store, or when the in-memory index lags behind the store (the next open
        rebuilds then)."""
        if self.index_path is None or not self._may_save:
            return False
        if self.store.collection_state(self.name) == self.state:
            self._settle_kind()  # saved in the kind its size calls for
        if self.state == self.saved_state:
            return False
        if self.store.collection_state(self.name) != self.state:
            return False  # another writer moved on: this index is not the store's state
        try:
            self.save()
        except OSError as exc:  # a cache that cannot be written costs a rebuild, not the run
            _log.warning(
                "could not save the index of %r to %s: %s", self.name, self.index_path, exc
            )
            return False
        return True

    @property
    def _may_save(self) -> bool:
        return not getattr(self.store, "read_only", False)

    def _open_index(self, *, save: bool = True, persisted: bool = True) -> FaissIndex:
        """The index of the store's collection, in the kind its vector count calls for: the
        persisted file of that kind when fresh (and ``persisted``), else rebuilt."""
        n = 0 if self.kind_choice != "auto" else self.store.count_vectors(self.name)
        kind = self.wanted_kind(n)
        path = self.path_for(kind) if persisted else None
        index = FaissIndex.from_store(
            self.store,
            self.name,
            path=path,
            kind=kind,
            save=save and self._may_save,
            dim=self.embedder.dim,
            embedder_id=self.embedder.id,
            **self._index_kw,
        )
        if path is not None and save and self._may_save and index.origin != "loaded":
            self._drop_other_kind(index.kind)  # rebuilt and saved
        return index

    def _follow(
        self, before: tuple[int, str], after: tuple[int, str], apply: Callable[[], object]
    ) -> None:
        """Mirror a store write in the index, or rebuild if the index had fallen behind."""
        if before == self.state:
            apply()
            self.index.source_version, self.index.source_etag = after
        else:
            self.index = self._open_index(persisted=False)
