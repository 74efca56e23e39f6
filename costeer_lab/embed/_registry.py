"""Embedders by name: ``get_embedder("hashing")``, ``"minilm"``, ``"openai:<model>"``."""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable
from typing import Any

from costeer_lab.embed._base import BaseEmbedder
from costeer_lab.errors import InvalidInputError, UnknownNameError, did_you_mean

__all__ = ["EmbedderFactory", "get_embedder", "known_embedders", "register_embedder"]

#: Builds an embedder from keyword arguments; a prefix factory (name ending in ``:``) also
#: receives the rest of the name as its first positional argument (``openai:<model>``).
EmbedderFactory = Callable[..., BaseEmbedder]

_lock = threading.Lock()
_factories: dict[str, EmbedderFactory] = {}


def _hashing(**kwargs: Any) -> BaseEmbedder:
    from costeer_lab.embed._hashing import HashingEmbedder

    return HashingEmbedder(**kwargs)


def _minilm(**kwargs: Any) -> BaseEmbedder:
    from costeer_lab.embed._minilm import MiniLMEmbedder

    return MiniLMEmbedder(**kwargs)


def _openai(model: str, **kwargs: Any) -> BaseEmbedder:
    from costeer_lab.embed._openai import OpenAIEmbedder

    return OpenAIEmbedder(model, **kwargs)


def register_embedder(name: str, factory: EmbedderFactory, *, replace: bool = False) -> None:
    """Make ``get_embedder(name)`` call ``factory(**kwargs)``.

    A name ending in ``":"`` registers a prefix: ``get_embedder("myapi:model-x")`` then calls
    ``factory("model-x", **kwargs)``.

    Raises:
        InvalidInputError: ``name`` is empty or already registered (and ``replace`` is false).

    Example:
        >>> from costeer_lab.embed import HashingEmbedder
        >>> register_embedder("tiny-hashing", lambda **kw: HashingEmbedder(dim=16), replace=True)
        >>> get_embedder("tiny-hashing").dim
        16
    """
    if not isinstance(name, str) or not name.strip(":").strip() or not callable(factory):
        raise InvalidInputError(
            f"register_embedder needs a non-empty name and a callable, got {name!r}, {factory!r}"
        )
    with _lock:
        if name in _factories and not replace:
            raise InvalidInputError(
                f"embedder {name!r} is already registered; pass replace=True to override it"
            )
        _factories[name] = factory


def known_embedders() -> list[str]:
    """Registered names, prefixes shown as ``prefix:<model>``."""
    with _lock:
        names = list(_factories)
    return sorted(n + "<model>" if n.endswith(":") else n for n in names)


def get_embedder(name: str, **kwargs: Any) -> BaseEmbedder:
    """The embedder registered under ``name``, built with ``kwargs``.

    Raises:
        UnknownNameError: no such embedder (the message lists known names and the closest one).

    Example:
        >>> get_embedder("hashing", dim=64).id
        'hashing@1:64'
    """
    if not isinstance(name, str):
        raise InvalidInputError(f"embedder name must be a string, got {type(name).__name__}")
    with _lock:
        factory = None if name.endswith(":") else _factories.get(name)
        prefix, sep, rest = name.partition(":")
        prefix_factory = _factories.get(prefix + sep) if sep else None
        prefixes = [n for n in _factories if n.endswith(":")]
    if factory is not None:
        return factory(**kwargs)
    if prefix_factory is not None:
        if not rest.strip():
            raise InvalidInputError(f"embedder name {name!r} needs a model after {prefix + ':'!r}")
        return prefix_factory(rest, **kwargs)
    hint = did_you_mean(name, known_embedders())
    close = difflib.get_close_matches(prefix + sep, prefixes, n=1) if sep else []
    if close and "did you mean" not in hint:
        hint += f"; did you mean {close[0] + rest!r}?"
    raise UnknownNameError(f"unknown embedder {name!r}; {hint}")


register_embedder("hashing", _hashing)
register_embedder("minilm", _minilm)
register_embedder("openai:", _openai)
