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

__all__ = ["CheckedRows", "edge_key_rows", "edge_rows", "node_rows", "record_rows", "vector_input"]


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
    """``(id, kind, content, attrs_json, created_at, updated_at)`` per node.

    Plain values (``str`` fields, a ``dict`` of attributes) take a fast path: the ids are
    checked together (:func:`_check_ids`); anything else goes through the full checks, which
    name what is wrong.
    """
    rows = []
    for node in nodes:
        if not isinstance(node, NodeRecord):
            raise InvalidInputError(f"put_nodes expects NodeRecord items, got {node!r}")
        nid, kind, content, attrs = node.id, node.kind, node.content, node.attrs
        if not (type(nid) is str and type(kind) is str and type(content) is str):
            check_id(nid, "node id")
            check_str(kind, f"kind of node {nid!r}")
            check_str(content, f"content of node {nid!r}")
        if type(attrs) is not dict and not isinstance(attrs, dict):
            raise InvalidInputError(f"attrs of node {nid!r} must be a dict")
        text = dumps_json(attrs, what=f"attrs of node {nid!r}") if attrs else "{}"
        rows.append((nid, kind, content, text, node.created_at or now, now))
    _check_ids([row[0] for row in rows], "node id")
    return rows


def edge_rows(edges: Iterable[EdgeRecord], now: float) -> list[tuple[str, str, str, str, float]]:
    """``(src, dst, kind, attrs_json, created_at)`` per edge (fast path as in
    :func:`node_rows`)."""
    rows = []
    for edge in edges:
        if not isinstance(edge, EdgeRecord):
            raise InvalidInputError(f"put_edges expects EdgeRecord items, got {edge!r}")
        src, dst, kind, attrs = edge.src, edge.dst, edge.kind, edge.attrs
        if not (type(src) is str and type(dst) is str and type(kind) is str):
            check_id(src, "edge src")
            check_id(dst, "edge dst")
            check_str(kind, "edge kind")
        if type(attrs) is not dict and not isinstance(attrs, dict):
            raise InvalidInputError(f"attrs of edge {src!r}->{dst!r} must be a dict")
        text = dumps_json(attrs, what=f"attrs of edge {src!r}->{dst!r}") if attrs else "{}"
        rows.append((src, dst, kind, text, edge.created_at or now))
    _check_ids([row[0] for row in rows], "edge src")
    _check_ids([row[1] for row in rows], "edge dst")
    return rows


def edge_key_rows(
    keys: Iterable[tuple[str, str, str]], now: float
) -> list[tuple[str, str, str, str, float]]:
    """:func:`edge_rows` of attribute-less edges given as ``(src, dst, kind)`` triples (what a
    knowledge graph writes), without an :class:`EdgeRecord` per edge; the same checks."""
    try:
        rows = [(src, dst, kind, "{}", now) for src, dst, kind in keys]
    except (TypeError, ValueError):
        raise InvalidInputError("edge keys must be (src, dst, kind) triples") from None
    if not all(type(r[0]) is str and type(r[1]) is str and type(r[2]) is str for r in rows):
        return edge_rows((EdgeRecord(*r[:3]) for r in rows), now)  # names the bad item
    _check_ids([row[0] for row in rows], "edge src")
    _check_ids([row[1] for row in rows], "edge dst")
    return rows


def _check_ids(ids: list[str], what: str) -> None:
    """:func:`check_id` of many strings at once: one scan of them all, and a check of each
    only when that scan finds a NUL or a character beyond ASCII (which may be a lone
    surrogate)."""
    joined = "".join(ids)
    if "\x00" in joined or not joined.isascii():
        for i in ids:
            check_id(i, what)


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
