"""A persistent embedding cache in front of any embedder, and the vector-space mixing guard."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from costeer_lab.embed._base import BaseEmbedder, validate_texts
from costeer_lab.errors import EmbedderMismatchError, InvalidInputError
from costeer_lab.store._base import BaseStore

__all__ = ["CachedEmbedder", "check_same_space", "text_sha256"]


def text_sha256(text: str) -> str:
    """Hex sha256 of the UTF-8 bytes of ``text`` (the cache key of a text).

    Example:
        >>> text_sha256("")[:12]
        'e3b0c44298fc'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_same_space(id_a: str, dim_a: int, id_b: str, dim_b: int) -> None:
    """Refuse to mix vectors of two embedders (different ids or dimensions).

    Raises:
        EmbedderMismatchError: naming both embedder ids and dimensions.

    Example:
        >>> check_same_space("hashing@1:384", 384, "hashing@1:384", 384)  # fine
        >>> check_same_space("hashing@1:384", 384, "minilm@1:384", 384)
        Traceback (most recent call last):
        ...
        costeer_lab.errors.EmbedderMismatchError: vectors of embedder 'hashing@1:384' (dim 384) \
cannot be mixed with vectors of embedder 'minilm@1:384' (dim 384)
    """
    if id_a != id_b or dim_a != dim_b:
        raise EmbedderMismatchError(
            f"vectors of embedder {id_a!r} (dim {dim_a}) cannot be mixed with vectors of "
            f"embedder {id_b!r} (dim {dim_b})"
        )


class CachedEmbedder(BaseEmbedder):
    """Embeds each distinct text once, ever: vectors are cached in a store by
    ``(embedder id, sha256(text))``, with an in-process LRU in front.

    It has the inner embedder's :attr:`id` and :attr:`dim`, so cached and fresh vectors live in
    one space. Per call, each distinct text is looked up once (duplicates in a batch share one
    lookup) and the missing ones are embedded by the inner embedder in a single call.
    Counters (per distinct text per call): :attr:`hits` (found in memory or the store) and
    :attr:`misses` (computed by the inner embedder). :attr:`texts_embedded` counts misses too.
    Thread-safe: calls are serialised by a lock (a store is used by one thread at a time).

    Args:
        inner: the embedder that computes missing vectors.
        store: where vectors persist (``get_cached_embeddings`` / ``put_cached_embeddings``;
            a ``read_only`` store is only read).
        memory_items: size of the in-process LRU (0 disables it).

    Example:
        >>> from costeer_lab.embed import HashingEmbedder
        >>> from costeer_lab.store import get_store
        >>> cached = CachedEmbedder(HashingEmbedder(), get_store(":memory:"))
        >>> _ = cached.embed(["a", "b", "a"]); _ = cached.embed(["a"])
        >>> cached.misses, cached.hits, cached.inner.calls
        (2, 1, 1)
    """

    def __init__(self, inner: BaseEmbedder, store: BaseStore, *, memory_items: int = 10_000):
        super().__init__()
        if not isinstance(inner, BaseEmbedder):
            raise InvalidInputError(f"CachedEmbedder wraps a BaseEmbedder, got {inner!r}")
        if memory_items < 0:
            raise InvalidInputError(f"memory_items must be >= 0, got {memory_items}")
        self.inner = inner
        self.store = store
        self.name = inner.name
        self.version = inner.version
        self.dim = inner.dim
        self.memory_items = memory_items
        #: Distinct texts per call served from memory or the store.
        self.hits = 0
        #: Distinct texts per call computed by the inner embedder.
        self.misses = 0
        self._memory: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        """The inner embedder's id."""
        return self.inner.id

    def embed(self, texts: Sequence[str], *, persist: bool = True) -> npt.NDArray[np.float32]:
        """Embed ``texts`` (see :meth:`BaseEmbedder.embed`), computing only uncached texts.

        Args:
            persist: write freshly computed vectors to the store's cache. ``False`` when the
                caller stores them itself (a vector collection tags its rows with the text
                hash, and the store's cache look-up finds them there): each vector stored once.
        """
        items = validate_texts(texts)
        with self._lock:
            before = self.misses
            out = self._embed(items, persist)
            self.calls += 1
            self.texts_embedded += self.misses - before
        return out

    def _remember(self, key: str, vec: npt.NDArray[np.float32]) -> None:
        if self.memory_items == 0:
            return
        self._memory[key] = vec
        self._memory.move_to_end(key)
        while len(self._memory) > self.memory_items:
            self._memory.popitem(last=False)

    def persist(self, items: dict[str, npt.NDArray[np.float32]]) -> None:
        """Write vectors keyed by text sha256 to the store's cache (unless it is read-only)."""
        if items and not self.store.read_only:
            self.store.put_cached_embeddings(self.id, items)

    def _embed(self, texts: list[str], persist: bool = True) -> npt.NDArray[np.float32]:
        keys = [text_sha256(t) for t in texts]
        first: dict[str, str] = {}  # key -> text, distinct, in first-seen order
        for key, text in zip(keys, texts, strict=True):
            first.setdefault(key, text)
        found: dict[str, npt.NDArray[np.float32]] = {}
        for key in first:
            vec = self._memory.get(key)
            if vec is not None:
                self._memory.move_to_end(key)
                found[key] = vec
        todo = [k for k in first if k not in found]
        if todo:
            stored = self.store.get_cached_embeddings(self.id, todo)
            for key, vec in stored.items():
                arr = np.asarray(vec, dtype=np.float32).reshape(-1)
                if arr.shape == (self.dim,) and key in first:  # a wrong shape counts as a miss
                    found[key] = arr
                    self._remember(key, arr)
        self.hits += len(found)
        missing = [k for k in first if k not in found]
        if missing:
            fresh = self.inner.embed([first[k] for k in missing])
            new = {k: fresh[i].copy() for i, k in enumerate(missing)}
            if persist:  # a read-only store is never written, cache or not
                self.persist(new)
            for key, vec in new.items():
                found[key] = vec
                self._remember(key, vec)
            self.misses += len(missing)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out

    def clear_memory(self) -> None:
        """Drop the in-process LRU (the store keeps its vectors)."""
        with self._lock:
            self._memory.clear()
