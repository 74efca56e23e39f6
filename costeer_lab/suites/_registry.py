"""The suite registry: ``load_suite("alpha158")``, ``load_suite("humaneval")``, task files."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from costeer_lab.errors import InvalidInputError, UnknownNameError, did_you_mean
from costeer_lab.suites._suite import Suite

__all__ = ["list_suites", "load_suite", "register_suite"]

_FACTORIES: dict[str, Callable[..., Suite]] = {}
_LOCK = threading.Lock()
_FILE_SUFFIXES = (".json", ".yaml", ".yml")


def register_suite(name: str, factory: Callable[..., Suite], *, overwrite: bool = False) -> None:
    """Register ``factory(**options) -> Suite`` under ``name``.

    Example:
        >>> from costeer_lab.suites._humaneval import humaneval_suite
        >>> register_suite("humaneval-mini", lambda: humaneval_suite(limit=3), overwrite=True)
        >>> len(load_suite("humaneval-mini").tasks)
        3
    """
    if not name or any(ch in name for ch in "/\\") or name.endswith(_FILE_SUFFIXES):
        raise InvalidInputError(f"suite name {name!r} must be non-empty and not look like a path")
    with _LOCK:
        if name in _FACTORIES and not overwrite:
            raise InvalidInputError(f"suite {name!r} is already registered (pass overwrite=True)")
        _FACTORIES[name] = factory


def list_suites() -> list[str]:
    """Names of the registered suites, sorted.

    Example:
        >>> {"alpha158", "humaneval"} <= set(list_suites())
        True
    """
    with _LOCK:
        return sorted(_FACTORIES)


def load_suite(name_or_path: str | Path, **options: Any) -> Suite:
    """Load a registered suite by name (options go to its factory) or a JSON/YAML task file
    (an RD-Agent factor benchmark JSON file takes options: see ``rdagent_suite``).

    Raises:
        UnknownNameError: the name is neither registered nor a task file (lists the known
            names and the closest one).

    Example:
        >>> load_suite("humaneval", limit=2).task_ids
        ['humaneval/0', 'humaneval/1']
    """
    key = str(name_or_path)
    with _LOCK:
        factory = _FACTORIES.get(key)
    if factory is not None:
        return factory(**options)
    path = Path(key)
    if path.suffix.lower() in _FILE_SUFFIXES or path.is_file():
        if options and path.suffix.lower() != ".json":  # only benchmark files take options
            raise InvalidInputError(f"task files take no options, got {sorted(options)}")
        from costeer_lab.suites._taskfile import load_task_file

        return load_task_file(path, **options)
    raise UnknownNameError(f"unknown suite {key!r}; " + did_you_mean(key, list_suites()))


def _register_builtins() -> None:
    from costeer_lab.suites._alpha158 import alpha158_suite
    from costeer_lab.suites._humaneval import humaneval_suite

    register_suite("alpha158", alpha158_suite, overwrite=True)
    register_suite("humaneval", humaneval_suite, overwrite=True)


_register_builtins()
