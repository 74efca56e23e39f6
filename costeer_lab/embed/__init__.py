"""Embedders: texts → unit-norm float32 vectors.

Example:
    >>> from costeer_lab.embed import get_embedder
    >>> get_embedder("hashing", dim=64).embed(["rolling mean of close"]).shape
    (1, 64)
"""

from costeer_lab.embed._base import BaseEmbedder
from costeer_lab.embed._cache import CachedEmbedder, check_same_space, text_sha256
from costeer_lab.embed._hashing import HashingEmbedder
from costeer_lab.embed._minilm import MiniLMEmbedder, MiniLMSettings
from costeer_lab.embed._names import check_embedder_name
from costeer_lab.embed._openai import KNOWN_DIMS, OpenAIEmbedder
from costeer_lab.embed._registry import EmbedderFactory, get_embedder, register_embedder

__all__ = [
    "KNOWN_DIMS",
    "BaseEmbedder",
    "CachedEmbedder",
    "EmbedderFactory",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "MiniLMSettings",
    "OpenAIEmbedder",
    "check_embedder_name",
    "check_same_space",
    "get_embedder",
    "register_embedder",
    "text_sha256",
]
