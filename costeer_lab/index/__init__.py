"""Vector indexes: cosine-similarity search over string ids (FAISS exact / HNSW).

Names are imported lazily, so ``costeer_lab.index._settings`` (a plain pydantic model the
settings module may import) does not pull in faiss.

Example:
    >>> import numpy as np
    >>> from costeer_lab.index import FaissIndex
    >>> idx = FaissIndex(2, kind="exact")
    >>> idx.add(["a", "b"], np.eye(2, dtype=np.float32))
    >>> idx.search(np.array([0.9, 0.1]), k=1).ids
    ('a',)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from costeer_lab.index._collection import VectorCollection
    from costeer_lab.index._faiss import FaissIndex
    from costeer_lab.index._result import SearchResult
    from costeer_lab.index._settings import IndexSettings
    from costeer_lab.index._validate import DimensionMismatchError

__all__ = [
    "DimensionMismatchError",
    "FaissIndex",
    "IndexSettings",
    "SearchResult",
    "VectorCollection",
]

_WHERE = {
    "DimensionMismatchError": "costeer_lab.index._validate",
    "FaissIndex": "costeer_lab.index._faiss",
    "IndexSettings": "costeer_lab.index._settings",
    "SearchResult": "costeer_lab.index._result",
    "VectorCollection": "costeer_lab.index._collection",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
