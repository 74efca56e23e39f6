"""Lazy re-exports for package ``__init__`` modules (PEP 562 module ``__getattr__``).

One helper for every package that imports heavy or optional parts on first use, so that
``import costeer_lab`` (and ``import costeer_lab.coders``, …) stays fast and works without extras.

Example:
    >>> getattr_, dir_ = lazy_exports("costeer_lab", {"Task": "costeer_lab.records"}, ["x"])
    >>> getattr_("Task").__name__
    'Task'
    >>> dir_()
    ['Task', 'x']
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, str], eager: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` that import ``where[name]`` on first access.

    Args:
        package: the ``__name__`` of the package using the helper.
        where: public name -> module defining it; a module starting with ``.`` is relative to
            ``package``.
        eager: names the package imports itself (listed by ``__dir__`` too).

    The value is cached in the package's namespace, so each name is imported once.

    Usage in a package ``__init__``::

        __getattr__, __dir__ = lazy_exports(__name__, {"FaissIndex": "._faiss"}, __all__)
    """
    names = dict(where)
    listed = sorted({*names, *eager})

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return list(listed)

    return __getattr__, __dir__
