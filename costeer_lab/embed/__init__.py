"""Embedders: texts → unit-norm float32 vectors.

Example:
    >>> from costeer_lab.embed import get_embedder
    >>> get_embedder("hashing", dim=64).embed(["rolling mean of close"]).shape
    (1, 64)
"""

from costeer_lab.embed._base import BaseEmbedder, validate_texts
from costeer_lab.embed._cache import CachedEmbedder, check_same_space, text_sha256
from costeer_lab.embed._hashing import HashingEmbedder, tokenize
from costeer_lab.embed._minilm import MiniLMEmbedder, MiniLMSettings
from costeer_lab.embed._openai import KNOWN_DIMS, OpenAIEmbedder
from costeer_lab.embed._registry import (
    EmbedderFactory,
    get_embedder,
    known_embedders,
    register_embedder,
)

__all__ = [
    "KNOWN_DIMS",
    "BaseEmbedder",
    "CachedEmbedder",
    "EmbedderFactory",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "MiniLMSettings",
    "OpenAIEmbedder",
    "check_same_space",
    "get_embedder",
    "known_embedders",
    "register_embedder",
    "text_sha256",
    "tokenize",
    "validate_texts",
]
