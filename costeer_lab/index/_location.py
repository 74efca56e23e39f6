"""Where the persisted FAISS index of a store's vector collection lives.

* A SQLite file store ``…/lab.db``: in the folder ``…/lab.db.indexes/`` beside it, so a copy of
  the file together with that folder stays valid, and deleting the folder only costs a rebuild.
* A PostgreSQL store: in the cache directory of the machine that opens it,
  ``<cache_dir>/indexes/<sha256 of the URL without its password>/``. The shared server keeps
  only the vectors (the source of truth); every machine keeps its own index file, checked
  against the server's collection state on open, so no large blob is written to the server on
  every checkpoint and machines never contend for one.
* An in-memory SQLite store: nowhere (``None``).

A file holds one collection with one index kind (``exact`` and ``hnsw`` files coexist); its
header records the collection's ``(version, etag)`` (:meth:`BaseStore.collection_state`), so a
file found at the right place is still used only when it matches the store exactly.

Example:
    >>> from costeer_lab.store import get_store
    >>> index_file(get_store(":memory:"), "kg:component", "exact") is None
    True
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from costeer_lab._redact import redact_url
from costeer_lab.store import BaseStore

__all__ = ["index_dir", "index_file"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def index_dir(store: BaseStore) -> Path | None:
    """The folder of ``store``'s persisted indexes, or ``None`` when it has none (in memory).

    Example:
        >>> from costeer_lab.store import get_store
        >>> import tempfile, pathlib
        >>> db = pathlib.Path(tempfile.mkdtemp()) / "lab.db"
        >>> index_dir(get_store(db)).name
        'lab.db.indexes'
    """
    url = str(getattr(store, "url", ""))
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///") :]
        if not path or path == ":memory:" or path.startswith("file::memory:"):
            return None
        return Path(path + ".indexes")
    if url.startswith(("postgresql://", "postgres://")):
        from costeer_lab.settings import get_settings

        key = hashlib.sha256(redact_url(url).encode("utf-8")).hexdigest()[:24]
        return Path(get_settings().cache_dir) / "indexes" / key
    return None


def index_file(store: BaseStore, collection: str, kind: str) -> Path | None:
    """The file of ``collection``'s ``kind`` index (``exact`` / ``hnsw``) of ``store``.

    The name keeps the readable part of the collection name and a short digest of all of it,
    so two collections never share a file.

    Example:
        >>> from costeer_lab.store import get_store
        >>> import tempfile, pathlib
        >>> db = pathlib.Path(tempfile.mkdtemp()) / "lab.db"
        >>> index_file(get_store(db), "kg:task_description", "hnsw").name
        'kg_task_description-c3ae708b.hnsw.clvidx'
    """
    folder = index_dir(store)
    if folder is None:
        return None
    digest = hashlib.sha256(collection.encode("utf-8")).hexdigest()[:8]
    readable = _UNSAFE.sub("_", collection)[:80]
    return folder / f"{readable}-{digest}.{kind}.clvidx"
