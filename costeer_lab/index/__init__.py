"""Vector indexes: cosine-similarity search over string ids (FAISS exact / HNSW).

Names are imported lazily, so importing the package does not pull in faiss.

Example:
    >>> import numpy as np
    >>> from costeer_lab.index import FaissIndex
    >>> idx = FaissIndex(2, kind="exact")
    >>> idx.add(["a", "b"], np.eye(2, dtype=np.float32))
    >>> idx.search(np.array([0.9, 0.1]), k=1).ids
    ('a',)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from costeer_lab._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from costeer_lab.index._collection import VectorCollection
    from costeer_lab.index._faiss import FaissIndex
    from costeer_lab.index._kind import HNSW_ABOVE, IndexChoice, effective_kind
    from costeer_lab.index._result import SearchResult
    from costeer_lab.index._validate import DimensionMismatchError
    from costeer_lab.settings import IndexSettings

__all__ = [
    "HNSW_ABOVE",
    "DimensionMismatchError",
    "FaissIndex",
    "IndexChoice",
    "IndexSettings",
    "SearchResult",
    "VectorCollection",
    "effective_kind",
]

_WHERE = {
    "DimensionMismatchError": "costeer_lab.index._validate",
    "FaissIndex": "costeer_lab.index._faiss",
    "HNSW_ABOVE": "costeer_lab.index._kind",
    "IndexChoice": "costeer_lab.index._kind",
    "effective_kind": "costeer_lab.index._kind",
    "IndexSettings": "costeer_lab.settings",
    "SearchResult": "costeer_lab.index._result",
    "VectorCollection": "costeer_lab.index._collection",
}


__getattr__, __dir__ = _lazy_exports(__name__, _WHERE, __all__)
