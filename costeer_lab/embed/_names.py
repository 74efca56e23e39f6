"""``check_embedder_name``: is a name one ``get_embedder`` knows, without building the embedder.

Building one can be costly (``minilm`` loads a model, ``openai:`` needs a key), so settings and
specs are checked by name only.

Example:
    >>> check_embedder_name("openai:text-embedding-3-small")
    >>> check_embedder_name("hashin")
    Traceback (most recent call last):
    ...
    costeer_lab.errors.UnknownNameError: unknown embedder 'hashin'; known: 'hashing', 'minilm', 'openai:<model>'; did you mean 'hashing'?
"""  # noqa: E501

from __future__ import annotations

from costeer_lab.embed._registry import known_embedders
from costeer_lab.errors import InvalidInputError, UnknownNameError, did_you_mean

__all__ = ["check_embedder_name"]

_MODEL = "<model>"


def check_embedder_name(name: str) -> None:
    """Raise when ``get_embedder(name)`` would refuse the name (the same messages).

    Raises:
        InvalidInputError: not a string, or a prefix without a model (``openai:``).
        UnknownNameError: no embedder of that name (the message names the closest one).
    """
    if not isinstance(name, str):
        raise InvalidInputError(f"embedder name must be a string, got {type(name).__name__}")
    known = known_embedders()
    prefixes = [k.removesuffix(_MODEL) for k in known if k.endswith(":" + _MODEL)]
    if name in known and not name.endswith(_MODEL):
        return
    prefix, sep, rest = name.partition(":")
    if sep and prefix + sep in prefixes:
        if not rest.strip():
            raise InvalidInputError(f"embedder name {name!r} needs a model after {prefix + ':'!r}")
        return
    raise UnknownNameError(f"unknown embedder {name!r}; {did_you_mean(name, known)}")
