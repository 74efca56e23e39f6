"""costeer_lab: a research toolkit for knowledge-driven code evolution (the CoSTEER method).

Heavy parts are imported lazily, so ``import costeer_lab`` stays fast.

Example:
    >>> import costeer_lab
    >>> store = costeer_lab.get_store(":memory:")
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "get_store": "costeer_lab.store",
    "BaseStore": "costeer_lab.store",
    "SQLiteStore": "costeer_lab.store",
    "get_embedder": "costeer_lab.embed",
    "BaseEmbedder": "costeer_lab.embed",
    "CachedEmbedder": "costeer_lab.embed",
    "FaissIndex": "costeer_lab.index",
    "Task": "costeer_lab._records",
    "Workspace": "costeer_lab._records",
    "SingleFeedback": "costeer_lab._records",
    "MultiFeedback": "costeer_lab._records",
    "Knowledge": "costeer_lab._records",
    "QueriedKnowledge": "costeer_lab._records",
    "Settings": "costeer_lab.settings",
    "get_settings": "costeer_lab.settings",
    "CosteerLabError": "costeer_lab.errors",
}

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'costeer_lab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
