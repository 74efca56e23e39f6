"""Coders by name and from JSON-able configs (what a process-pool worker receives)."""

from __future__ import annotations

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


def _scripted(**kwargs: Any) -> AbstractCoder:
    from costeer_lab.testing._scripted_coder import ScriptedCoder

    return ScriptedCoder(**kwargs)


#: Coder name -> factory taking the config's keyword arguments.
CODERS: dict[str, Callable[..., AbstractCoder]] = {
    "reuse": _reuse,
    "llm": _llm,
    "scripted": _scripted,  # costeer_lab.testing.ScriptedCoder, for tests
}


def register_coder(name: str, factory: Callable[..., AbstractCoder]) -> None:
    """Make ``get_coder(name, **kw)`` call ``factory(**kw)`` (replaces an existing entry)."""
    CODERS[name] = factory


def get_coder(name: str, **kwargs: Any) -> AbstractCoder:
    """A coder by registry name: ``"reuse"`` (offline default) or ``"llm"``.

    Raises:
        UnknownNameError: an unknown name (the message lists the known ones).
        ConfigurationError: arguments the coder does not accept.

    Example:
        >>> get_coder("reuse", seed=3).to_config()
        {'name': 'reuse', 'seed': 3, 'use_component_matches': True}
    """
    factory = CODERS.get(name)
    if factory is None:
        raise UnknownNameError(f"unknown coder {name!r}; {did_you_mean(name, list(CODERS))}")
    try:
        return factory(**kwargs)
    except TypeError as exc:
        raise ConfigurationError(f"bad arguments for coder {name!r}: {exc}") from exc


def coder_from_config(config: Mapping[str, Any]) -> AbstractCoder:
    """Rebuild a coder from ``coder.to_config()`` (a small JSON-able dict with a ``name``).

    Example:
        >>> coder_from_config({"name": "reuse", "seed": 1}).seed
        1
    """
    if not isinstance(config, Mapping) or not isinstance(config.get("name"), str):
        raise ConfigurationError(
            f"a coder config is a dict with a string 'name' (one of {sorted(CODERS)}), "
            f"got {config!r:.200}"
        )
    kwargs = {k: v for k, v in config.items() if k != "name"}
    return get_coder(config["name"], **kwargs)
