"""``BatchWrite``: the rows of one bulk-insert transaction as plain data.

A knowledge base's bulk insert decides what a batch writes (nodes, vectors, edges, records:
:meth:`KnowledgeGraph.plan_write <costeer_lab.graph.KnowledgeGraph.plan_write>`) and a store
runs it as one transaction (:meth:`BaseStore.write_batch`), in this process or in a writer
process that runs while this one prepares the next batch (:mod:`costeer_lab.store._writer`).
To cross to that process a batch is turned into bytes and back (:meth:`BatchWrite.to_bytes`):
one JSON header (rows, ids, shapes) followed by the raw float32 vectors. Nothing is pickled.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from costeer_lab.errors import InvalidInputError
from costeer_lab.store._rows import CheckedRows

__all__ = ["BatchWrite", "CollectionState", "VectorWrite"]

#: A vector collection's ``(version, etag)`` (:meth:`BaseStore.collection_state`).
CollectionState = tuple[int, str]

_HEADER = struct.Struct("<Q")  # the JSON header's length in bytes


@dataclass(frozen=True)
class VectorWrite:
    """Vectors written to one collection (``put_vectors`` arguments, checked by the caller)."""

    collection: str
    embedder_id: str
    ids: list[str]
    #: ``(n, dim)`` float32, one row per id.
    vectors: npt.NDArray[np.float32]
    #: The sha256 of each row's text when the row is the embedder's output bit for bit (the
    #: embedding cache finds it in the collection), else ``None``.
    text_hashes: list[str | None]


@dataclass(frozen=True)
class BatchWrite:
    """What one transaction of a bulk insert writes, in this order: nodes, embedding-cache
    entries, vectors (each collection's state read before and after its write), edges,
    records.

    Example:
        >>> from costeer_lab.store import NodeRecord, get_store
        >>> store = get_store(":memory:")
        >>> vec = np.ones((1, 4), dtype=np.float32) / 2
        >>> batch = BatchWrite(
        ...     nodes=store.check_nodes([NodeRecord("n1", "component", "op:mean")]),
        ...     vectors=[VectorWrite("kg:component", "e", ["n1"], vec, [None])],
        ...     records=[("note", store.check_records("note", [("k", {"ok": True})]))])
        >>> again = BatchWrite.from_bytes(batch.to_bytes())
        >>> again.nodes == batch.nodes, again.vectors[0].vectors.tolist()
        (True, [[0.5, 0.5, 0.5, 0.5]])
        >>> [after[0] for before, after in store.write_batch(again)], store.count_records("note")
        ([1], 1)
    """

    nodes: CheckedRows | None = None
    #: ``(embedder id, {text sha256: vector})``: vectors for the embedding cache.
    cached: Sequence[tuple[str, Mapping[str, npt.NDArray[np.float32]]]] = ()
    vectors: Sequence[VectorWrite] = ()
    edges: CheckedRows | None = None
    #: ``(record kind, rows)`` pairs.
    records: Sequence[tuple[str, CheckedRows]] = field(default_factory=list)

    def to_bytes(self) -> bytes:
        """The batch as bytes (see the module): a length, a JSON header, the raw vectors."""
        return b"".join(self.to_parts())

    def to_parts(self) -> list[bytes]:
        """The pieces of :meth:`to_bytes`, in order, not joined (a batch of several MB is
        written to a pipe piece by piece instead of being copied into one bytes object)."""
        blobs: list[bytes] = []

        def matrix(m: npt.NDArray[np.float32]) -> list[int]:
            m = np.ascontiguousarray(m, dtype="<f4")
            blobs.append(m.tobytes())
            return list(m.shape)

        def table(rows: CheckedRows | None) -> list[Any] | None:
            return None if rows is None else _columns(rows.rows, blobs)

        header = {
            "nodes": table(self.nodes),
            "cached": [
                [embedder_id, list(items), matrix(_stack(list(items.values())))]
                for embedder_id, items in self.cached
            ],
            "vectors": [
                [v.collection, v.embedder_id, v.ids, v.text_hashes, matrix(v.vectors)]
                for v in self.vectors
            ],
            "edges": table(self.edges),
            "records": [[kind, table(rows)] for kind, rows in self.records],
        }
        text = json.dumps(header, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        head = text.encode("utf-8", "surrogatepass")
        return [_HEADER.pack(len(head)), head, *blobs]

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> BatchWrite:
        """The batch :meth:`to_bytes` made (from any bytes-like object; a ``memoryview``
        slice of a larger message is read without a copy).

        Raises:
            InvalidInputError: ``data`` is not such a batch (cut short, or another format).
        """
        try:
            view = memoryview(data).cast("B")
            (size,) = _HEADER.unpack_from(view, 0)
            at = _HEADER.size + size
            if at > len(view):
                raise ValueError("data cut short")
            header = json.loads(str(view[_HEADER.size : at], "utf-8", "surrogatepass"))

            def blob(n: int) -> memoryview:
                nonlocal at
                if n < 0 or at + n > len(data):
                    raise ValueError("data cut short")
                at += n
                return view[at - n : at]

            def matrix(shape: list[int]) -> npt.NDArray[np.float32]:
                m = np.frombuffer(blob(int(np.prod(shape)) * 4), dtype="<f4")
                return m.reshape(shape).astype(np.float32)

            def table(name: str, spec: list[Any] | None) -> CheckedRows | None:
                return None if spec is None else CheckedRows(name, _rows_of(spec, blob))

            nodes = table("nodes", header["nodes"])

            cached = [
                (embedder_id, dict(zip(hashes, matrix(shape), strict=True)))
                for embedder_id, hashes, shape in header["cached"]
            ]
            vectors = [
                VectorWrite(collection, embedder_id, ids, matrix(shape), hashes)
                for collection, embedder_id, ids, hashes, shape in header["vectors"]
            ]
            edges = table("edges", header["edges"])
            records = [(kind, table("records", spec)) for kind, spec in header["records"]]
            if at != len(view):
                raise ValueError(f"{len(view) - at} bytes left over")
            return cls(nodes, cached, vectors, edges, records)  # type: ignore[arg-type]
        except (struct.error, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise InvalidInputError(f"not a batch write: {exc}") from None


def _stack(vectors: list[npt.NDArray[np.float32]]) -> npt.NDArray[np.float32]:
    if not vectors:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([np.asarray(v, dtype=np.float32).reshape(-1) for v in vectors])


def _columns(rows: list[tuple[Any, ...]], blobs: list[bytes]) -> list[Any]:
    """``rows`` by column, for the header; a column of text or of floats goes to ``blobs``
    (text: each value's length, then all values as one UTF-8 string, so no value is escaped
    again as JSON; floats: float64), any other column stays JSON. ``[n_rows, [spec, …]]``."""
    n = len(rows)
    specs: list[Any] = []
    for column in zip(*rows, strict=True) if rows else ():
        kinds = set(map(type, column))
        if kinds == {str}:
            lengths = np.fromiter(map(len, column), dtype="<i8", count=n)
            text = "".join(column).encode("utf-8", "surrogatepass")
            blobs += [lengths.tobytes(), text]
            specs.append(["s", len(text)])
        elif kinds == {float}:
            blobs.append(np.asarray(column, dtype="<f8").tobytes())
            specs.append(["f"])
        else:
            specs.append(["j", list(column)])
    return [n, specs]


def _rows_of(spec: list[Any], blob: Any) -> list[tuple[Any, ...]]:
    """The rows :func:`_columns` described (``blob(n)``: the next ``n`` bytes)."""
    n, specs = int(spec[0]), spec[1]
    columns: list[Any] = []
    for col in specs:
        if col[0] == "s":
            ends = np.cumsum(np.frombuffer(blob(8 * n), dtype="<i8")).tolist()
            text = str(blob(int(col[1])), "utf-8", "surrogatepass")
            if n and ends[-1] != len(text):
                raise ValueError("text column lengths do not add up")
            columns.append([text[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)])
        elif col[0] == "f":
            columns.append(np.frombuffer(blob(8 * n), dtype="<f8").tolist())
        elif col[0] == "j" and len(col[1]) == n:
            columns.append(col[1])
        else:
            raise ValueError(f"unknown column {col[0]!r} of {n} rows")
    return list(zip(*columns, strict=True)) if specs else []
