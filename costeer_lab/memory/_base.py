"""What the pattern and failure memories share: the store, the embedder, the vector search, the
search log and the checks every stored text goes through."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from costeer_lab.embed import BaseEmbedder, CachedEmbedder, check_same_space, get_embedder
from costeer_lab.errors import InvalidInputError, MemoryRefusedError
from costeer_lab.memory._secrets import scan_credentials
from costeer_lab.memory._vectors import MemoryVectors
from costeer_lab.settings import MemorySettings, get_settings
from costeer_lab.store import BaseStore, get_store

__all__ = ["SEARCH_KIND", "MemoryBase", "check_text", "refuse_credentials"]

#: Record kind of the search log (one record per search that was recorded).
SEARCH_KIND = "memory.search"


def check_text(value: object, what: str, *, empty: bool = True) -> str:
    """``value`` if it is a str (non-empty unless ``empty``), else a clear InvalidInputError."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a str, got {type(value).__name__} {value!r:.60}")
    if not empty and not value.strip():
        raise InvalidInputError(f"{what} must be a non-empty str, got {value!r}")
    return value


def refuse_credentials(texts: Sequence[tuple[str, str]], what: str) -> None:
    """Raise MemoryRefusedError naming the first credential found in ``(label, text)`` pairs.

    The message names the kind of secret, the field and the line; never the secret.
    """
    for label, text in texts:
        found = scan_credentials(text)
        if found:
            first = found[0]
            more = f" (and {len(found) - 1} more finding(s))" if len(found) > 1 else ""
            raise MemoryRefusedError(
                f"refusing to store {what}: its {label} contains {first.describe()}{more}; "
                "credentials are never stored in the memory (read them from the environment)",
                kind=f"credential:{first.kind}",
            )


class MemoryBase:
    """A store, an embedder and one vector collection, plus the search log.

    Args:
        store: a :class:`BaseStore`, a store URL or path, or ``None`` (``settings.store_url``,
            else the top-level ``store_url``).
        embedder: an embedder or registry id (``None``: ``settings.embedder``, else the
            top-level ``embedder``).
        settings: memory settings (``None``: ``get_settings().memory``).
    """

    collection: str = ""
    memory_kind: str = ""

    def __init__(
        self,
        store: BaseStore | str | Path | None = None,
        *,
        embedder: BaseEmbedder | str | None = None,
        settings: MemorySettings | None = None,
    ) -> None:
        top = get_settings()
        self.settings = settings if settings is not None else top.memory
        if store is None:
            store = self.settings.store_url or top.store_url
        #: Whether this memory opened its store (then :meth:`close` closes it).
        self.owns_store = not isinstance(store, BaseStore)
        self.store = get_store(store)
        if embedder is None:
            embedder = self.settings.embedder or top.embedder
        self.embedder = get_embedder(embedder) if isinstance(embedder, str) else embedder
        if not isinstance(self.embedder, BaseEmbedder):
            raise InvalidInputError(f"embedder must be a BaseEmbedder or an id, got {embedder!r}")
        #: The embedder behind the store's embedding cache: a text (a query asked twice, a
        #: description stored after it was searched) is embedded once.
        self.cached_embedder = (
            self.embedder
            if isinstance(self.embedder, CachedEmbedder)
            else CachedEmbedder(self.embedder, self.store)
        )
        info = self.store.collection_info(self.collection)
        if info is not None:
            check_same_space(info[0], info[1], self.embedder.id, self.embedder.dim)
        self.vectors = MemoryVectors(
            self.store, self.collection, self.embedder.id, self.embedder.dim, self.settings
        )

    def _embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray(self.cached_embedder.embed(list(texts)), dtype=np.float32)

    def _threshold(self, value: object, default: float) -> float:
        threshold = default if value is None else value
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise InvalidInputError(f"threshold must be a number in [-1, 1], got {threshold!r}")
        if not -1.0 <= float(threshold) <= 1.0:
            raise InvalidInputError(f"threshold must be in [-1, 1] (cosine), got {threshold!r}")
        return float(threshold)

    def _limit(self, value: int | None) -> int:
        limit = self.settings.limit if value is None else value
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputError(f"limit must be an int >= 1, got {limit!r}")
        return limit

    def _lock_for_update(self) -> None:
        """Inside a transaction, make this store's writers wait before a read-modify-write, so
        the records read next cannot change before commit and no count is lost to another agent
        writing at the same time (:meth:`~costeer_lab.store.BaseStore.lock_for_update`)."""
        self.store.lock_for_update()

    def _log_search(self, hits: Sequence[tuple[str, float]], threshold: float) -> str:
        """Record one search (for the hit rate); joins the caller's transaction."""
        key = uuid.uuid4().hex
        self.store.put_record(
            SEARCH_KIND,
            key,
            {
                "memory": self.memory_kind,
                "t": time.time(),
                "hits": len(hits),
                "best": hits[0][1] if hits else None,
                "threshold": threshold,
                "ids": [h[0] for h in hits],
            },
        )
        return key

    def close(self) -> None:
        """Close the store when this memory opened it (from a URL, a path or the settings); a
        store object the caller passed in stays open: the caller closes it."""
        if self.owns_store:
            self.store.close()
