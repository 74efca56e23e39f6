"""Embedders: texts → unit-norm float32 vectors."""

from costeer_lab.embed._base import BaseEmbedder, validate_texts

__all__ = ["BaseEmbedder", "validate_texts"]
