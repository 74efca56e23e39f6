"""Durable storage: the source of truth (see :class:`BaseStore`)."""

from costeer_lab.store._base import BaseStore
from costeer_lab.store._types import EdgeRecord, NodeRecord

__all__ = ["BaseStore", "EdgeRecord", "NodeRecord"]
