"""The data methods both SQL backends share, written once over a small dialect.

:class:`RelationalMixin` holds every :class:`~costeer_lab.store.BaseStore` method whose SQL is
the same on SQLite and PostgreSQL but for a few spellings. A backend sets the dialect and keeps
only what truly differs (connection, transactions and locks, schema and migrations, vector
search, reading vectors back):

* ``_p``: the parameter placeholder (``?`` or ``%s``);
* ``_json_cast`` / ``_text_cast``: what makes a parameter a JSON value and reads a JSON column
  as text (``""`` in SQLite, whose JSON is text; ``::json`` / ``::text`` in PostgreSQL);
* ``_greatest``: ``MAX`` or ``GREATEST`` of two values;
* ``_in(column)`` and ``_array(values)``: the condition "``column`` is one of the values" and
  its one parameter (``json_each`` of a JSON array, or ``= ANY`` of an array: no limit on the
  number of values); ``_values()``: a ``SELECT`` of such a parameter's values;
* ``_many(conn, sql, rows)``: run one statement for many rows;
* ``_vector_column``, ``_vector_p`` and ``_vector_values(matrix)``: how a vector is stored
  (a float32 blob, or a pgvector value sent in binary); ``_vectors_written``: what follows a
  vector write (PostgreSQL builds its HNSW index once a collection is large enough);
* ``_rows``, ``_write`` and ``_connection`` (reads, one atomic write, the open connection),
  ``_records_where`` (a record ``where`` filter in the backend's JSON functions) and
  ``_delete_edge_keys`` (delete edges by key).

No SQL toolkit: SQLAlchemy Core cost 1.9-3.5x the CPU of the raw driver per call when
measured (``docs/benchmarks.md``), and the differences are these few spellings.

Example:
    >>> from costeer_lab.store import SQLiteStore
    >>> with SQLiteStore() as store:
    ...     store.put_records("note", [("a", {"ok": True}), ("b", {"ok": False})])
    ...     store.count_records("note", {"ok": True}), store.get_records("note", ["b", "c"])
    (1, {'b': {'ok': False}})
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from costeer_lab.errors import EmbedderMismatchError, InvalidInputError
from costeer_lab.store._base import BaseStore, JSONScalar
from costeer_lab.store._codec import (
    as_matrix,
    check_id,
    check_str,
    encode_vector,
    id_list,
    loads_json,
    new_etag,
)
from costeer_lab.store._rows import CheckedRows, vector_input
from costeer_lab.store._types import EdgeRecord, JSONValue, NodeRecord

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["EDGE_COLS", "NODE_COLS", "RelationalMixin", "node_from_row", "number_of"]

NODE_COLS = "id, kind, content, attrs, created_at, updated_at"
EDGE_COLS = "src, dst, kind, attrs, created_at"


def _name(number: str) -> str:
    """The text id whose number in ``ids`` is the column ``number``."""
    return f"(SELECT ids.id FROM ids WHERE ids.seq = {number})"


def number_of(param: str) -> str:
    """The number in ``ids`` of the text id given as the parameter ``param``."""
    return f"(SELECT ids.seq FROM ids WHERE ids.id = {param})"


#: A node's columns but its id (a ``nodes`` row holds the id's number as ``seq``).
_NODE_DATA = "kind, content, attrs, created_at, updated_at"
#: The columns of :data:`NODE_COLS`, read from ``nodes``.
_NODE_SELECT = f"{_name('nodes.seq')} AS id, {_NODE_DATA}"
#: An edge's endpoints, as text.
_EDGE_ENDS = f"{_name('edges.src')}, {_name('edges.dst')}"
_RESERVED_META = frozenset({"schema_version"})
_PAGE = 2000  # rows per query of a paged read


def node_from_row(row: Sequence[Any]) -> NodeRecord:
    """The :class:`NodeRecord` of a row of :data:`NODE_COLS`."""
    return NodeRecord(row[0], row[1], row[2], loads_json(row[3]), row[4], row[5])


class RelationalMixin(BaseStore):
    """Nodes, edges, records, metadata and collection bookkeeping in SQL (see the module)."""

    #: SQL parameter placeholder.
    _p = "?"
    #: Appended to a placeholder whose value is JSON text stored in a JSON column.
    _json_cast = ""
    #: Appended to a JSON column read back as text.
    _text_cast = ""
    #: The function giving the larger of two numbers.
    _greatest = "MAX"
    #: The column of ``vectors`` holding a vector, and the placeholder of its value.
    _vector_column = "vector"
    _vector_p = "?"

    _conn: Any
    _schema_version: int

    @property
    def schema_version(self) -> int:
        """Schema version of the opened store (the newest this costeer_lab knows once migrated)."""
        return self._schema_version

    def close(self) -> None:
        """Close the connection (idempotent). An open transaction is rolled back."""
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()

    # -- dialect hooks -------------------------------------------------------------------------
    @abc.abstractmethod
    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """All rows of one read statement."""

    @abc.abstractmethod
    def _write(self) -> AbstractContextManager[Any]:
        """One atomic write; yields the connection."""

    @abc.abstractmethod
    def _connection(self) -> Any:
        """The open connection (raises :class:`StoreError` once closed)."""

    @abc.abstractmethod
    def _in(self, column: str) -> str:
        """The condition "``column`` is one of" the values of one :meth:`_array` parameter."""

    @abc.abstractmethod
    def _values(self) -> str:
        """A ``SELECT`` of the values of one :meth:`_array` parameter, in order."""

    @abc.abstractmethod
    def _array(self, values: list[str]) -> Any:
        """The parameter of an :meth:`_in` condition holding ``values``."""

    @abc.abstractmethod
    def _many(self, conn: Any, sql: str, rows: list[Any]) -> None:
        """Run ``sql`` once per row of ``rows`` on ``conn`` (inside :meth:`_write`)."""

    @abc.abstractmethod
    def _records_where(
        self, kind: str, where: Mapping[str, JSONScalar] | None
    ) -> tuple[str, tuple[Any, ...]]:
        """SQL condition and parameters selecting records of ``kind`` matching ``where``."""

    @abc.abstractmethod
    def _delete_edge_keys(self, conn: Any, keys: list[tuple[str, ...]]) -> int:
        """Delete the edges of the (sorted, distinct) ``(src, dst, kind)`` keys; count them."""

    def _paged(self, sql: str, params: tuple[Any, ...]) -> Iterator[Any]:
        """Yield rows of ``sql`` (first column ``seq``, ending in ``seq > {_p}``) in ``seq``
        order, a page per query so no read cursor stays open between yields."""
        last = -(2**63)
        page = f"{sql} ORDER BY seq LIMIT {self._p}"
        while True:
            rows = self._rows(page, (*params, last, _PAGE))
            yield from rows
            if len(rows) < _PAGE:
                return
            last = rows[-1][0]

    # -- the snapshot hooks that are plain SQL (``_snapshots.SnapshotMixin``) -------------------
    def _snap_rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return self._rows(sql, params)

    def _snap_write(self) -> AbstractContextManager[Any]:
        return self._write()

    # -- nodes ---------------------------------------------------------------------------------
    # Node ids and edge endpoints are interned in ``ids`` (``_interned``): ``nodes.seq`` is the
    # id's number there, ``edges.src`` / ``edges.dst`` the endpoints' numbers.
    def _numbers(self, conn: Any, ids: Iterable[str]) -> dict[str, int]:
        """Each id of ``ids`` with its number in ``ids``, giving numbers to new ones in order
        (inside :meth:`_write`). Two statements over an array parameter, whatever the count:
        a row per id cost about twice the time, and a lookup per row written more again."""
        wanted = self._array(list(dict.fromkeys(ids)))
        conn.execute(
            f"INSERT INTO ids (id) {self._values()} ON CONFLICT (id) DO NOTHING", (wanted,)
        )
        rows = conn.execute(f"SELECT id, seq FROM ids WHERE {self._in('id')}", (wanted,))
        return {str(i): int(n) for i, n in rows.fetchall()}

    def put_nodes(self, nodes: Iterable[NodeRecord] | CheckedRows) -> None:
        rows = (nodes if isinstance(nodes, CheckedRows) else self.check_nodes(nodes)).of("nodes")
        if not rows:
            return
        p = self._p
        with self._write() as conn:
            number = self._numbers(conn, (row[0] for row in rows))
            self._many(
                conn,
                f"INSERT INTO nodes (seq, {_NODE_DATA}) VALUES ({p}, "
                f"{p}, {p}, {p}, {p}, {p}) ON CONFLICT (seq) DO UPDATE SET kind = excluded.kind, "
                "content = excluded.content, attrs = excluded.attrs, "
                f"updated_at = {self._greatest}(excluded.updated_at, nodes.updated_at + 1e-6)",
                [(number[row[0]], *row[1:]) for row in rows],
            )

    def get_nodes(self, ids: Sequence[str]) -> list[NodeRecord]:
        wanted = id_list(ids, "node ids")
        if not wanted:
            return []
        rows = self._rows(
            "SELECT i.id, n.kind, n.content, n.attrs, n.created_at, n.updated_at FROM ids i "
            f"JOIN nodes n ON n.seq = i.seq WHERE {self._in('i.id')}",
            (self._array(wanted),),
        )
        found = {row[0]: row for row in rows}
        return [node_from_row(found[i]) for i in wanted if i in found]

    def iter_nodes(self, kind: str | None = None) -> Iterator[NodeRecord]:
        for row in self._paged_kind(f"SELECT seq, {_NODE_SELECT} FROM nodes", kind):
            yield node_from_row(row[1:])

    def iter_node_kinds(self, kind: str | None = None) -> Iterator[tuple[str, str]]:
        for row in self._paged_kind(f"SELECT seq, {_name('nodes.seq')}, kind FROM nodes", kind):
            yield row[1], row[2]

    def count_nodes(self, kind: str | None = None) -> int:
        return self._count("nodes", kind)

    def delete_nodes(self, ids: Sequence[str]) -> int:
        wanted = id_list(ids, "node ids")
        if not wanted:
            return 0
        ids_ = self._array(wanted)
        numbers = f"(SELECT seq FROM ids WHERE {self._in('id')})"
        with self._write() as conn:
            conn.execute(
                f"DELETE FROM edges WHERE src IN {numbers} OR dst IN {numbers}", (ids_, ids_)
            )
            return int(conn.execute(f"DELETE FROM nodes WHERE seq IN {numbers}", (ids_,)).rowcount)

    # -- edges ---------------------------------------------------------------------------------
    def put_edges(self, edges: Iterable[EdgeRecord] | CheckedRows) -> None:
        rows = (edges if isinstance(edges, CheckedRows) else self.check_edges(edges)).of("edges")
        if not rows:
            return
        p = self._p
        with self._write() as conn:
            number = self._numbers(conn, (end for row in rows for end in row[:2]))
            self._many(
                conn,
                f"INSERT INTO edges ({EDGE_COLS}) VALUES ({p}, {p}, {p}, {p}, {p}) "
                "ON CONFLICT (src, dst, kind) DO UPDATE SET attrs = excluded.attrs",
                [(number[row[0]], number[row[1]], *row[2:]) for row in rows],
            )

    def iter_edges(self, kind: str | None = None, node: str | None = None) -> Iterator[EdgeRecord]:
        p, num = self._p, number_of(self._p)
        where, params = [], []
        if kind is not None:
            where.append(f"kind = {p}")
            params.append(check_str(kind, "kind"))
        if node is not None:
            where.append(f"(src = {num} OR dst = {num})")
            params += [check_id(node, "node"), node]
        sql = (
            f"SELECT seq, {_EDGE_ENDS}, kind, attrs, created_at FROM edges "
            f"WHERE {' AND '.join([*where, f'seq > {p}'])}"
        )
        for row in self._paged(sql, tuple(params)):
            yield EdgeRecord(row[1], row[2], row[3], loads_json(row[4]), row[5])

    def iter_edge_keys(self, kind: str | None = None) -> Iterator[tuple[str, str, str]]:
        for row in self._paged_kind(f"SELECT seq, {_EDGE_ENDS}, kind FROM edges", kind):
            yield row[1], row[2], row[3]

    def count_edges(self, kind: str | None = None) -> int:
        return self._count("edges", kind)

    def delete_edges(self, keys: Sequence[tuple[str, str, str]]) -> int:
        rows = []
        for key in keys:
            if not (isinstance(key, tuple | list) and len(key) == 3):
                raise InvalidInputError(f"edge keys must be (src, dst, kind) tuples, got {key!r}")
            src, dst, kind = key
            rows.append(
                (
                    check_id(src, "edge src"),
                    check_id(dst, "edge dst"),
                    check_str(kind, "edge kind"),
                )
            )
        if not rows:
            return 0
        with self._write() as conn:
            return self._delete_edge_keys(conn, sorted(set(rows)))

    def _paged_kind(self, select: str, kind: str | None) -> Iterator[Any]:
        """Rows of ``select`` (``seq`` first), all or those of one ``kind``, in ``seq`` order."""
        p = self._p
        if kind is None:
            return self._paged(f"{select} WHERE seq > {p}", ())
        return self._paged(f"{select} WHERE kind = {p} AND seq > {p}", (check_str(kind, "kind"),))

    def _count(self, table: str, kind: str | None) -> int:
        if kind is None:
            return int(self._rows(f"SELECT COUNT(*) FROM {table}")[0][0])
        sql = f"SELECT COUNT(*) FROM {table} WHERE kind = {self._p}"
        return int(self._rows(sql, (check_str(kind, "kind"),))[0][0])

    # -- embedding cache -----------------------------------------------------------------------
    def put_cached_embeddings(
        self, embedder_id: str, items: Mapping[str, npt.NDArray[np.float32]]
    ) -> None:
        check_str(embedder_id, "embedder_id")
        rows = []
        for text_hash, vector in items.items():
            check_str(text_hash, "text hash")
            vec = as_matrix(np.asarray(vector)[None, ...], 1, f"embedding of {text_hash!r}")[0]
            rows.append((embedder_id, text_hash, int(vec.shape[0]), encode_vector(vec)))
        if not rows:
            return
        p = self._p
        with self._write() as conn:
            self._many(
                conn,
                "INSERT INTO embedding_cache (embedder_id, text_sha256, dim, vector) "
                f"VALUES ({p}, {p}, {p}, {p}) ON CONFLICT (embedder_id, text_sha256) DO UPDATE "
                "SET dim = excluded.dim, vector = excluded.vector",
                rows,
            )

    # -- vector collections --------------------------------------------------------------------
    def put_vectors(
        self,
        collection: str,
        embedder_id: str,
        ids: Sequence[str],
        vectors: npt.NDArray[np.float32],
        *,
        text_hashes: Sequence[str | None] | None = None,
    ) -> None:
        checked = vector_input(collection, embedder_id, ids, vectors, text_hashes)
        if checked is None:
            return
        keys, matrix, tags = checked
        dim = int(matrix.shape[1])
        rows = [
            (collection, key, embedder_id, dim, value, tag)
            for key, value, tag in zip(keys, self._vector_values(matrix), tags, strict=True)
        ]
        p, col = self._p, self._vector_column
        with self._write() as conn:
            held = self.collection_info(collection)  # under the write lock: no race
            if held is not None and held != (embedder_id, dim):
                raise EmbedderMismatchError(
                    f"collection {collection!r} holds vectors of embedder {held[0]!r} "
                    f"(dim {held[1]}); refusing vectors of embedder {embedder_id!r} (dim {dim}). "
                    "Use another collection or delete the old vectors first."
                )
            self._many(
                conn,
                f"INSERT INTO vectors (collection, item_id, embedder_id, dim, {col}, "
                f"text_sha256) VALUES ({p}, {p}, {p}, {p}, {self._vector_p}, {p}) ON CONFLICT "
                "(collection, item_id) DO UPDATE SET embedder_id = excluded.embedder_id, "
                f"dim = excluded.dim, {col} = excluded.{col}, "
                "text_sha256 = excluded.text_sha256",
                rows,
            )
            self._vectors_written(collection, dim)
            self._bump(collection)

    @abc.abstractmethod
    def _vector_values(self, matrix: npt.NDArray[np.float32]) -> Iterable[Any]:
        """The value of each row of ``matrix`` as its ``vectors`` column takes it."""

    def _vectors_written(self, collection: str, dim: int) -> None:
        """Hook: vectors of ``dim`` were just written into ``collection`` (inside the write)."""

    def _bump(self, collection: str) -> None:
        """Give ``collection`` a new version and etag (inside :meth:`_write`)."""
        p = self._p
        self._connection().execute(
            f"INSERT INTO collections (name, version, etag) VALUES ({p}, 1, {p}) "
            "ON CONFLICT (name) DO UPDATE SET version = collections.version + 1, "
            "etag = excluded.etag",
            (collection, new_etag()),
        )

    def delete_vectors(self, collection: str, ids: Sequence[str]) -> int:
        check_str(collection, "collection")
        keys = id_list(ids, "vector ids")
        if not keys:
            return 0
        with self._write() as conn:
            cur = conn.execute(
                f"DELETE FROM vectors WHERE collection = {self._p} AND {self._in('item_id')}",
                (collection, self._array(keys)),
            )
            if cur.rowcount > 0:
                self._bump(collection)
            return int(cur.rowcount)

    def collection_version(self, collection: str) -> int:
        return self.collection_state(collection)[0]

    def collection_state(self, collection: str) -> tuple[int, str]:
        check_str(collection, "collection")
        rows = self._rows(
            f"SELECT version, etag FROM collections WHERE name = {self._p}", (collection,)
        )
        return (int(rows[0][0]), str(rows[0][1])) if rows else (0, "")

    def collection_states(self, collections: Sequence[str]) -> dict[str, tuple[int, str]]:
        names = list(dict.fromkeys(collections))
        for name in names:
            check_str(name, "collection")
        out = dict.fromkeys(names, (0, ""))
        if names:
            rows = self._rows(
                f"SELECT name, version, etag FROM collections WHERE {self._in('name')}",
                (self._array(names),),
            )
            out.update((str(r[0]), (int(r[1]), str(r[2]))) for r in rows)
        return out

    def collection_info(self, collection: str) -> tuple[str, int] | None:
        check_str(collection, "collection")
        rows = self._rows(
            f"SELECT embedder_id, dim FROM vectors WHERE collection = {self._p} LIMIT 1",
            (collection,),
        )
        return (str(rows[0][0]), int(rows[0][1])) if rows else None

    def count_vectors(self, collection: str) -> int:
        check_str(collection, "collection")
        sql = f"SELECT count(*) FROM vectors WHERE collection = {self._p}"
        return int(self._rows(sql, (collection,))[0][0])

    # -- JSON records --------------------------------------------------------------------------
    def put_records(self, kind: str, items: Iterable[tuple[str, JSONValue]] | CheckedRows) -> None:
        if isinstance(items, CheckedRows):
            checked = items
            if any(row[0] != kind for row in checked.of("records")):
                raise InvalidInputError(f"rows checked for another record kind than {kind!r}")
        else:
            checked = self.check_records(kind, items)
        rows = checked.rows
        if not rows:
            return
        p = self._p
        with self._write() as conn:
            self._many(
                conn,
                "INSERT INTO records (kind, key, data, created_at, updated_at) "
                f"VALUES ({p}, {p}, {p}{self._json_cast}, {p}, {p}) ON CONFLICT (kind, key) "
                "DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at",
                rows,
            )

    def get_record(self, kind: str, key: str) -> JSONValue | None:
        p = self._p
        rows = self._rows(
            f"SELECT data{self._text_cast} FROM records WHERE kind = {p} AND key = {p}",
            (check_str(kind, "record kind"), check_id(key, "record key")),
        )
        return loads_json(rows[0][0]) if rows else None

    def get_records(self, kind: str, keys: Sequence[str]) -> dict[str, JSONValue]:
        check_str(kind, "record kind")
        wanted = [check_id(key, "record key") for key in keys]
        if not wanted:
            return {}
        rows = self._rows(
            f"SELECT key, data{self._text_cast} FROM records "
            f"WHERE kind = {self._p} AND {self._in('key')}",
            (kind, self._array(wanted)),
        )
        return {str(key): loads_json(data) for key, data in rows}

    def iter_records(
        self, kind: str, where: Mapping[str, JSONScalar] | None = None
    ) -> Iterator[tuple[str, JSONValue]]:
        clause, params = self._records_where(check_str(kind, "record kind"), where)
        data = f"data{self._text_cast}"
        sql = f"SELECT seq, key, {data} FROM records WHERE {clause} AND seq > {self._p}"
        for row in self._paged(sql, params):
            yield row[1], loads_json(row[2])

    def count_records(self, kind: str, where: Mapping[str, JSONScalar] | None = None) -> int:
        clause, params = self._records_where(check_str(kind, "record kind"), where)
        return int(self._rows(f"SELECT COUNT(*) FROM records WHERE {clause}", params)[0][0])

    def delete_records(self, kind: str, keys: Sequence[str]) -> int:
        check_str(kind, "record kind")
        wanted = id_list(keys, "record keys")
        if not wanted:
            return 0
        with self._write() as conn:
            cur = conn.execute(
                f"DELETE FROM records WHERE kind = {self._p} AND {self._in('key')}",
                (kind, self._array(wanted)),
            )
            return int(cur.rowcount)

    # -- metadata ------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self._rows(
            f"SELECT value FROM meta WHERE key = {self._p}", (check_str(key, "meta key"),)
        )
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        check_str(key, "meta key")
        check_str(value, f"meta value of {key!r}")
        if key in _RESERVED_META:
            raise InvalidInputError(f"meta key {key!r} is reserved for the store itself")
        p = self._p
        with self._write() as conn:
            conn.execute(
                f"INSERT INTO meta (key, value) VALUES ({p}, {p}) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
