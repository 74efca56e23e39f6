"""Saving, loading and rebuilding a :class:`FaissIndex` (file format in ``_persist``).

Only the index's public interface is used (``export_rows`` / ``import_rows``); the class is
passed in, so this module does not import ``_faiss`` at run time (``_faiss`` imports it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import faiss

from costeer_lab._fs import atomic_writer
from costeer_lab.errors import EmbedderMismatchError, InvalidInputError, VectorIndexError
from costeer_lab.index._persist import FORMAT_VERSION, read_index_header, write_index_file

if TYPE_CHECKING:
    from costeer_lab.index._faiss import FaissIndex, IndexKind
    from costeer_lab.store import BaseStore

__all__ = ["index_from_store", "load_index", "save_index"]

_PARAMS = ("hnsw_m", "ef_construction", "ef_search")
_log = logging.getLogger(__name__)


def save_index(index: FaissIndex, path: str | Path) -> None:
    """Write ``index`` to ``path`` atomically (see :meth:`FaissIndex.save`)."""
    raw, ids, labels, next_label = index.export_rows()
    header: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "kind": index.kind,
        "dim": index.dim,
        "embedder_id": index.embedder_id,
        "params": {name: getattr(index, name) for name in _PARAMS},
        "collection": index.source_collection,
        "collection_version": index.source_version,
        "collection_etag": index.source_etag,
        "ntotal": int(raw.ntotal),
        "next_label": next_label,
        "ids": ids,
        "labels": labels,
    }

    def payload(put: Callable[[bytes], object]) -> None:
        writer = faiss.PyCallbackIOWriter(put)  # type: ignore[attr-defined]  # not in the stub
        faiss.write_index(raw, writer)
        del writer  # flushes what it buffered

    with atomic_writer(path) as f:  # streamed: never the index a second time in memory
        write_index_file(f, header, payload)


def load_index(path: str | Path, cls: type[FaissIndex]) -> FaissIndex:
    """Read an index file (see :meth:`FaissIndex.load`); any defect raises VectorIndexError."""
    source = str(path)
    try:
        with open(path, "rb") as f:  # read a chunk at a time: the file is never held whole
            return _read_index(f, source, cls)
    except OSError as exc:
        raise VectorIndexError(f"cannot read index file {source}: {exc}") from exc


def _read_index(f: BinaryIO, source: str, cls: type[FaissIndex]) -> FaissIndex:
    header = read_index_header(f, source)
    try:
        index = cls(
            header["dim"],
            kind=header["kind"],
            embedder_id=header["embedder_id"],
            **{name: header["params"][name] for name in _PARAMS},
        )
        ids, labels = header["ids"], header["labels"]
        ntotal, next_label = header["ntotal"], header["next_label"]
        collection, version = header["collection"], header["collection_version"]
        etag = header["collection_etag"]
        if not (isinstance(version, int | None) and isinstance(etag, str | None)):
            raise VectorIndexError("collection_version / collection_etag have the wrong types")
        if not (isinstance(ids, list) and isinstance(labels, list) and len(ids) == len(labels)):
            raise VectorIndexError("ids and labels are not lists of equal length")
        if not all(isinstance(s, str) for s in ids) or len(set(ids)) != len(ids):
            raise VectorIndexError("ids are not distinct strings")
        if not all(isinstance(v, int) and 0 <= v < next_label for v in labels):
            raise VectorIndexError("labels are not ints below next_label")
        if len(set(labels)) != len(labels):
            raise VectorIndexError("labels are not distinct")
    except (KeyError, TypeError, InvalidInputError) as exc:
        raise VectorIndexError(f"index file {source} has an invalid header: {exc!r}") from exc
    try:
        reader = faiss.PyCallbackIOReader(f.read)  # type: ignore[attr-defined]  # not in the stub
        raw = faiss.read_index(reader)
    except RuntimeError as exc:
        raise VectorIndexError(f"index file {source}: faiss cannot read the index: {exc}") from exc
    _check_faiss(raw, index, ntotal, labels, next_label, source)
    index.import_rows(raw, ids, labels, next_label)
    index.source_collection, index.source_version = collection, version
    index.source_etag = etag
    index.origin = "loaded"
    return index


def _check_faiss(
    raw: Any, index: FaissIndex, ntotal: int, labels: list[int], next_label: int, src: str
) -> None:
    expected = faiss.IndexHNSWFlat if index.kind == "hnsw" else faiss.IndexFlat
    if not isinstance(raw, expected) or raw.metric_type != faiss.METRIC_INNER_PRODUCT:
        raise VectorIndexError(
            f"index file {src} holds a {type(raw).__name__}, expected an inner-product "
            f"{expected.__name__} for kind {index.kind!r}"
        )
    if raw.d != index.dim or raw.ntotal != ntotal:
        raise VectorIndexError(
            f"index file {src}: faiss index has dim {raw.d} and {raw.ntotal} vectors, header "
            f"says dim {index.dim} and {ntotal}"
        )
    if ntotal != next_label or any(v >= ntotal for v in labels):
        raise VectorIndexError(f"index file {src}: labels do not match the faiss rows")


def index_from_store(
    cls: type[FaissIndex],
    store: BaseStore,
    collection: str,
    *,
    path: str | Path | None = None,
    kind: IndexKind = "exact",
    save: bool = True,
    **kw: Any,
) -> FaissIndex:
    """Load ``path`` if it is fresh for ``collection`` in ``store``, else rebuild (and save it
    there atomically when ``save``).

    Fresh means: readable and uncorrupted, same kind, same collection name and state (version
    and etag) as ``store.collection_state(collection)``, same ``(embedder_id, dim)`` as
    ``store.collection_info(collection)``, and (an HNSW file) the same graph parameters when
    given in ``kw``. Anything else (missing, stale, corrupt, wrong kind) rebuilds from
    ``store.iter_vectors(collection)``, a page at a time. The result's ``origin`` is
    ``"loaded"``, ``"rebuilt"`` or ``"empty"`` (the collection holds no vectors; an empty index
    is built). A file that exists but cannot be trusted (corrupt, truncated, not an index) is
    never used: the rebuilt index's ``load_error`` names the defect, which is also logged as a
    warning.

    Args:
        kw: :class:`FaissIndex` arguments (``dim``, ``embedder_id``, ``hnsw_m``, …). ``dim`` is
            required when the collection is empty; ``embedder_id``/``dim`` are checked against
            the collection's.

    Raises:
        EmbedderMismatchError: ``kw`` names another embedder id or dimension than the collection.
        InvalidInputError: the collection is empty and no ``dim`` was given.
    """
    version, etag = store.collection_state(collection)
    info = store.collection_info(collection)
    want_dim, want_emb = kw.get("dim"), kw.get("embedder_id")
    if info is not None:
        if want_emb is not None and want_emb != info[0]:
            raise EmbedderMismatchError(
                f"collection {collection!r} holds vectors of embedder {info[0]!r}, "
                f"not {want_emb!r}"
            )
        if want_dim is not None and want_dim != info[1]:
            raise EmbedderMismatchError(
                f"collection {collection!r} holds vectors of dimension {info[1]}, not {want_dim}"
            )
    load_error = None
    if path is not None and Path(path).exists():
        try:
            loaded = load_index(path, cls)
        except VectorIndexError as exc:
            loaded, load_error = None, str(exc)
            _log.warning("rejected the persisted index (rebuilding it from the store): %s", exc)
        if loaded is not None and _is_fresh(loaded, collection, (version, etag), info, kind, kw):
            return loaded
    index = _rebuild(cls, store, collection, version, kind, kw)
    index.source_etag, index.load_error = etag, load_error
    if path is not None and save:
        try:
            save_index(index, path)
        except OSError as exc:  # a cache that cannot be written costs a rebuild, not the open
            _log.warning("could not save the rebuilt index to %s: %s", path, exc)
    return index


def _is_fresh(
    index: FaissIndex,
    collection: str,
    state: tuple[int, str],
    info: tuple[str, int] | None,
    kind: IndexKind,
    kw: dict[str, Any],
) -> bool:
    held = (index.kind, index.source_collection, index.source_version, index.source_etag)
    if held != (kind, collection, *state):
        return False
    if info is None:
        if len(index) or (kw.get("dim") is not None and kw["dim"] != index.dim):
            return False
        if kw.get("embedder_id") is not None and kw["embedder_id"] != index.embedder_id:
            return False
    elif (index.embedder_id, index.dim) != info:
        return False
    graph_params = _PARAMS[:2] if index.kind == "hnsw" else ()  # an exact index has no graph
    if any(kw.get(p) is not None and kw[p] != getattr(index, p) for p in graph_params):
        return False
    if kw.get("ef_search") is not None:
        index.ef_search = kw["ef_search"]
    return True


def _rebuild(
    cls: type[FaissIndex],
    store: BaseStore,
    collection: str,
    version: int,
    kind: IndexKind,
    kw: dict[str, Any],
) -> FaissIndex:
    """Build the index from the store a page of rows at a time (never the whole collection
    decoded besides the index), in the store's order: the same rows give the same index."""
    args = dict(kw)
    index: FaissIndex | None = None
    for ids, matrix, embedder_id in store.iter_vectors(collection):
        if index is None:
            args["dim"], args["embedder_id"] = int(matrix.shape[1]), embedder_id
            index = cls(kind=kind, **args)
        index.upsert(ids, matrix)  # an id a concurrent write moved between pages: kept once
        del matrix
    if index is None:
        if args.get("dim") is None:
            raise InvalidInputError(
                f"collection {collection!r} is empty; pass dim= to build an empty index"
            )
        index = cls(kind=kind, **args)
    index.source_collection, index.source_version = collection, version
    index.origin = "rebuilt" if len(index) else "empty"
    return index
