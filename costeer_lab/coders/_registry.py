"""Coders by name and from JSON-able configs (what a process-pool worker receives).

A coder is named by its registry name (``"reuse"``, ``"llm"``, or one added with
:func:`register_coder`) or by an import path ``"package.module:Class"``, so a coder defined
outside the package (for instance the test fake ``costeer_lab.testing:ScriptedCoder``) works in
an experiment spec and in process-pool workers without being registered there.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from costeer_lab.coders._base import AbstractCoder
from costeer_lab.errors import ConfigurationError, UnknownNameError, did_you_mean

__all__ = ["CODERS", "coder_from_config", "get_coder", "register_coder"]


def _reuse(**kwargs: Any) -> AbstractCoder:
    from costeer_lab.coders._reuse import ReuseCoder

    return ReuseCoder(**kwargs)


def _llm(**kwargs: Any) -> AbstractCoder:
    from costeer_lab.coders._llm import LLMCoder

    return LLMCoder(**kwargs)


#: Coder name -> factory taking the config's keyword arguments.
CODERS: dict[str, Callable[..., AbstractCoder]] = {
    "reuse": _reuse,
    "llm": _llm,
}


def register_coder(name: str, factory: Callable[..., AbstractCoder]) -> None:
    """Make ``get_coder(name, **kw)`` call ``factory(**kw)`` (replaces an existing entry)."""
    CODERS[name] = factory


def _import_path(name: str) -> Callable[..., AbstractCoder]:
    module_name, _, attr = name.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, ValueError) as exc:
        raise UnknownNameError(
            f"cannot import coder {name!r} ('package.module:Class'): {exc}"
        ) from exc
    if not callable(obj):
        raise UnknownNameError(f"coder {name!r} is not a class or factory: {obj!r:.80}")
    if isinstance(obj, type) and not _is_coder(obj):  # refused before it is called
        raise ConfigurationError(f"coder {name!r} is not a coder class: {_NOT_A_CODER}")
    factory: Callable[..., AbstractCoder] = obj
    return factory


#: What a coder must have (the experiment loop calls ``implement_with_info``).
_NOT_A_CODER = (
    "a coder has implement(task, queried_knowledge, last_feedback) and implement_with_info(...) "
    "methods; subclass costeer_lab.coders.AbstractCoder"
)


def _is_coder(obj: Any) -> bool:
    """Whether ``obj`` (a class or an instance) has the coder methods the loop calls."""
    return all(callable(getattr(obj, m, None)) for m in ("implement", "implement_with_info"))


def get_coder(name: str, **kwargs: Any) -> AbstractCoder:
    """A coder by registry name (``"reuse"``, the offline default, or ``"llm"``) or by import
    path ``"package.module:Class"`` (called with ``kwargs``).

    Raises:
        UnknownNameError: an unknown name (the message lists the known ones) or an import path
            that does not import.
        ConfigurationError: arguments the coder does not accept, or a name that does not make
            a coder (``"builtins:dict"``).

    Example:
        >>> get_coder("reuse", seed=3).to_config()
        {'name': 'reuse', 'seed': 3, 'use_component_matches': True}
        >>> get_coder("costeer_lab.coders:ReuseCoder", seed=3).seed
        3
    """
    factory = CODERS.get(name)
    if factory is None and ":" in name:
        factory = _import_path(name)
    if factory is None:
        raise UnknownNameError(
            f"unknown coder {name!r}; {did_you_mean(name, list(CODERS))} "
            "(or name one by import path, 'package.module:Class')"
        )
    try:
        coder = factory(**kwargs)
    except TypeError as exc:
        raise ConfigurationError(f"bad arguments for coder {name!r}: {exc}") from exc
    if not _is_coder(coder):
        raise ConfigurationError(
            f"coder {name!r} is not a coder: it made a {type(coder).__name__}; {_NOT_A_CODER}"
        )
    return coder


def coder_from_config(config: Mapping[str, Any]) -> AbstractCoder:
    """Rebuild a coder from ``coder.to_config()`` (a small JSON-able dict with a ``name``).

    Example:
        >>> coder_from_config({"name": "reuse", "seed": 1}).seed
        1
    """
    if not isinstance(config, Mapping) or not isinstance(config.get("name"), str):
        raise ConfigurationError(
            f"a coder config is a dict with a string 'name' (one of {sorted(CODERS)} or "
            "'package.module:Class'), "
            f"got {config!r:.200}"
        )
    kwargs = {k: v for k, v in config.items() if k != "name"}
    return get_coder(config["name"], **kwargs)
