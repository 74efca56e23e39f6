"""Input checks shared by every store backend: each turns what a caller passed into the rows a
backend writes, or raises :class:`~costeer_lab.errors.InvalidInputError` naming the bad item."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from costeer_lab.errors import InvalidInputError
from costeer_lab.store._codec import as_matrix, check_id, check_str, dumps_json, id_list
from costeer_lab.store._types import EdgeRecord, JSONValue, NodeRecord

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["CheckedRows", "edge_rows", "node_rows", "record_rows", "vector_input"]


@dataclass(frozen=True)
class CheckedRows:
    """The rows of one write, checked and encoded ahead (``BaseStore.check_nodes``,
    ``check_edges``, ``check_records``); ``put_nodes`` / ``put_edges`` / ``put_records`` take
    them in place of records and then run SQL only: a write handed to a writer process
    (:class:`~costeer_lab.store.BatchWrite`) is checked and encoded by the process that made it.

    Example:
        >>> from costeer_lab.store import NodeRecord, get_store
        >>> store = get_store(":memory:")
        >>> rows = store.check_nodes([NodeRecord("n1", "component", "op:mean")])
        >>> rows.table, rows.rows[0][:4]
        ('nodes', ('n1', 'component', 'op:mean', '{}'))
        >>> store.put_nodes(rows); store.count_nodes()
        1
    """

    #: ``nodes``, ``edges`` or ``records``.
    table: str
    rows: list[tuple[Any, ...]]

    def of(self, table: str) -> list[tuple[Any, ...]]:
        """The rows, if they are rows of ``table``."""
        if self.table != table:
            raise InvalidInputError(
                f"rows checked for {self.table!r} cannot be written to {table!r}"
            )
        return self.rows


def node_rows(
    nodes: Iterable[NodeRecord], now: float
) -> list[tuple[str, str, str, str, float, float]]:
    """``(id, kind, content, attrs_json, created_at, updated_at)`` per node."""
    rows = []
    for node in nodes:
        if not isinstance(node, NodeRecord):
            raise InvalidInputError(f"put_nodes expects NodeRecord items, got {node!r}")
        check_id(node.id, "node id")
        check_str(node.kind, f"kind of node {node.id!r}")
        check_str(node.content, f"content of node {node.id!r}")
        if not isinstance(node.attrs, dict):
            raise InvalidInputError(f"attrs of node {node.id!r} must be a dict")
        attrs = dumps_json(node.attrs, what=f"attrs of node {node.id!r}") if node.attrs else "{}"
        rows.append((node.id, node.kind, node.content, attrs, node.created_at or now, now))
    return rows


def edge_rows(edges: Iterable[EdgeRecord], now: float) -> list[tuple[str, str, str, str, float]]:
    """``(src, dst, kind, attrs_json, created_at)`` per edge."""
    rows = []
    for edge in edges:
        if not isinstance(edge, EdgeRecord):
            raise InvalidInputError(f"put_edges expects EdgeRecord items, got {edge!r}")
        check_id(edge.src, "edge src")
        check_id(edge.dst, "edge dst")
        check_str(edge.kind, "edge kind")
        if not isinstance(edge.attrs, dict):
            raise InvalidInputError(f"attrs of edge {edge.src!r}->{edge.dst!r} must be a dict")
        attrs = (
            dumps_json(edge.attrs, what=f"attrs of edge {edge.src!r}->{edge.dst!r}")
            if edge.attrs
            else "{}"
        )
        rows.append((edge.src, edge.dst, edge.kind, attrs, edge.created_at or now))
    return rows


def record_rows(
    kind: str, items: Iterable[tuple[str, JSONValue]], now: float
) -> list[tuple[str, str, str, float, float]]:
    """``(kind, key, data_json, created_at, updated_at)`` per ``(key, data)`` pair."""
    check_str(kind, "record kind")
    rows = []
    for item in items:
        if not (isinstance(item, tuple | list) and len(item) == 2):
            raise InvalidInputError(f"records must be (key, data) pairs, got {item!r}")
        key = check_id(item[0], f"key of a {kind!r} record")
        rows.append((kind, key, dumps_json(item[1], what=f"record {kind}/{key}"), now, now))
    return rows


def vector_input(
    collection: str,
    embedder_id: str,
    ids: Sequence[str],
    vectors: npt.NDArray[np.float32],
    text_hashes: Sequence[str | None] | None = None,
) -> tuple[list[str], npt.NDArray[np.float32], list[str | None]] | None:
    """The checked ``(ids, (n, d) float32 matrix, text hash or None per row)`` of a
    ``put_vectors`` call; ``None`` when there is nothing to write."""
    check_str(collection, "collection")
    check_str(embedder_id, "embedder_id")
    keys = id_list(ids, "vector ids")
    if not keys:
        if np.ndim(vectors) != 2 or np.shape(vectors)[0] != 0:
            raise InvalidInputError(
                f"vectors must be an empty 2-D array when no ids are given, "
                f"got shape {np.shape(vectors)}"
            )
        return None
    matrix = as_matrix(vectors, len(keys), f"vectors of collection {collection!r}")
    if text_hashes is None:
        return keys, matrix, [None] * len(keys)
    if isinstance(text_hashes, str) or len(text_hashes) != len(keys):
        raise InvalidInputError(
            f"text_hashes must hold one str or None per id ({len(keys)}), got {text_hashes!r:.80}"
        )
    tags = [None if h is None else check_str(h, "text hash") for h in text_hashes]
    return keys, matrix, tags
