"""The embedder contract."""

from __future__ import annotations

import abc
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from costeer_lab.errors import InvalidInputError

__all__ = ["BaseEmbedder", "validate_texts"]


def validate_texts(texts: object) -> list[str]:
    """Check that ``texts`` is a non-empty sequence of strings and return it as a list.

    Raises:
        InvalidInputError: naming the problem (a bare string, an empty list, a non-string item).
    """
    if isinstance(texts, str | bytes):
        raise InvalidInputError(
            "embed() takes a list of strings, got a single "
            f"{type(texts).__name__}; wrap it in a list: embed([text])"
        )
    if not isinstance(texts, Sequence):
        raise InvalidInputError(f"embed() takes a list of strings, got {type(texts).__name__}")
    if len(texts) == 0:
        raise InvalidInputError("embed() got an empty list; pass at least one text")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise InvalidInputError(
                f"embed() takes strings only; item {i} is {type(t).__name__}: {t!r:.60}"
            )
    return list(texts)


class BaseEmbedder(abc.ABC):
    """Turns texts into L2-normalized float32 vectors.

    Subclasses set :attr:`name`, :attr:`version` and :attr:`dim` and implement :meth:`_embed`.
    The :attr:`id` (``name@version:dim``) identifies the vector space: vectors with different ids
    are never mixed. Embedders are stateless apart from counters and safe to call repeatedly.

    Example:
        >>> from costeer_lab.embed import get_embedder
        >>> e = get_embedder("hashing")
        >>> e.embed(["rolling mean of close"]).shape
        (1, 384)
    """

    name: str
    version: str
    dim: int

    def __init__(self) -> None:
        #: Number of texts this embedder actually computed (cache misses only, when cached).
        self.texts_embedded = 0
        #: Number of calls to :meth:`_embed`.
        self.calls = 0

    @property
    def id(self) -> str:
        """Stable identifier of the vector space, e.g. ``hashing@1:384``."""
        return f"{self.name}@{self.version}:{self.dim}"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` into a ``(len(texts), dim)`` float32 array of unit-norm rows.

        Raises:
            InvalidInputError: empty input or a non-string item.
        """
        items = validate_texts(texts)
        out = np.ascontiguousarray(self._embed(items), dtype=np.float32)
        self.calls += 1
        self.texts_embedded += len(items)
        if out.shape != (len(items), self.dim):
            raise AssertionError(
                f"{type(self).__name__} returned shape {out.shape}, "
                f"expected ({len(items)}, {self.dim})"
            )
        return out

    @abc.abstractmethod
    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Embed validated, non-empty ``texts``."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id}>"
