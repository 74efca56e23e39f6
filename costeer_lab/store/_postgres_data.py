"""Embedding cache, vector collections (pgvector) and JSON records of ``PostgresStore``.

Vectors sit in one ``vector`` column of any dimension. The write that brings a collection of
dimension ``d`` to ``index_min_rows`` vectors (default 1,000) builds a partial HNSW index (cosine)
restricted to that collection and dimension; smaller collections are scanned exactly (as fast at
that size, and inserts stay cheap: each insert into an HNSW index costs about a millisecond of
server CPU). What the index holds and how a search uses it: ``_postgres_search``.

Record ``where`` filters run in SQL on the ``json`` column with the same meaning as in SQLite:
``True`` matches only JSON ``true`` (not ``1``), ``None`` only an explicit ``null``, and ``1``
matches ``1`` and ``1.0``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from costeer_lab.errors import EmbedderMismatchError, InvalidInputError
from costeer_lab.store._base import VECTOR_PAGE, JSONScalar
from costeer_lab.store._codec import (
    as_matrix,
    check_str,
    check_where,
    decode_vector,
    dumps_json,
    encode_vector,
    loads_json,
    new_etag,
)
from costeer_lab.store._postgres_search import (
    OPS,
    PostgresSearchMixin,
    index_name,
    indexed_expression,
)
from costeer_lab.store._rows import vector_input
from costeer_lab.store._sqlite_base import id_list
from costeer_lab.store._types import JSONValue

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["PostgresDataMixin"]


class PostgresDataMixin(PostgresSearchMixin):
    """Embedding cache, vectors and records on top of :class:`PostgresSearchMixin`."""

    index_min_rows: int
    hnsw_m: int
    hnsw_ef_construction: int
    _indexed: set[tuple[str, int]]

    # -- embedding cache -------------------------------------------------------------------
    def get_cached_embeddings(
        self, embedder_id: str, text_hashes: Sequence[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        check_str(embedder_id, "embedder_id")
        hashes = id_list(text_hashes, "text hashes")
        if not hashes:
            return {}
        out = {  # vectors stored once in a collection, then the cache
            str(row[0]): np.asarray(row[1], dtype=np.float32).copy()
            for row in self._rows(
                "SELECT text_sha256, embedding FROM vectors "
                "WHERE text_sha256 = ANY(%s) AND embedder_id = %s",
                (hashes, embedder_id),
                binary=True,
            )
        }
        rows = self._rows(
            "SELECT text_sha256, dim, vector FROM embedding_cache "
            "WHERE embedder_id = %s AND text_sha256 = ANY(%s)",
            (embedder_id, [h for h in hashes if h not in out]),
        )
        out.update((row[0], decode_vector(bytes(row[2]), row[1])) for row in rows)
        return out

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
        with self._write() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO embedding_cache (embedder_id, text_sha256, dim, vector) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (embedder_id, text_sha256) DO UPDATE "
                "SET dim = excluded.dim, vector = excluded.vector",
                rows,
            )

    # -- vector collections ------------------------------------------------------------------
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
            (collection, key, embedder_id, dim, vec, tag)
            for key, vec, tag in zip(keys, matrix, tags, strict=True)
        ]
        with self._write() as conn:
            held = self.collection_info(collection)  # under the write lock: no race
            if held is not None and held != (embedder_id, dim):
                raise EmbedderMismatchError(
                    f"collection {collection!r} holds vectors of embedder {held[0]!r} "
                    f"(dim {held[1]}); refusing vectors of embedder {embedder_id!r} (dim {dim}). "
                    "Use another collection or delete the old vectors first."
                )
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO vectors (collection, item_id, embedder_id, dim, embedding, "
                    "text_sha256) VALUES (%s, %s, %s, %s, %b, %s) ON CONFLICT "
                    "(collection, item_id) DO UPDATE SET embedder_id = excluded.embedder_id, "
                    "dim = excluded.dim, embedding = excluded.embedding, "
                    "text_sha256 = excluded.text_sha256",
                    rows,
                )
            self._ensure_index(collection, dim)
            self._bump(collection)

    def _bump(self, collection: str) -> None:
        self._connection().execute(
            "INSERT INTO collections (name, version, etag) VALUES (%s, 1, %s) "
            "ON CONFLICT (name) DO UPDATE SET version = collections.version + 1, "
            "etag = excluded.etag",
            (collection, new_etag()),
        )

    def _ensure_index(self, collection: str, dim: int) -> None:
        """Create the partial HNSW cosine index of ``(collection, dim)`` once the collection
        holds ``index_min_rows`` vectors (a bulk build; below that an exact scan is as fast and
        inserts stay cheap). Called after a write, under the write lock."""
        from psycopg import sql

        if self.vector_index != "hnsw" or (collection, dim) in self._indexed:
            return
        held = self._rows(
            "SELECT count(*) FROM (SELECT 1 FROM vectors WHERE collection = %s LIMIT %s) AS t",
            (collection, self.index_min_rows),
        )
        if int(held[0][0]) < self.index_min_rows:
            return
        self._connection().execute(
            sql.SQL(
                "CREATE INDEX IF NOT EXISTS {} ON vectors USING hnsw ({} {}) "
                "WITH (m = {}, ef_construction = {}) WHERE collection = {} AND dim = {}"
            ).format(
                sql.Identifier(index_name(collection, dim, self.index_precision)),
                indexed_expression(dim, self.index_precision, "embedding"),
                sql.SQL(OPS[self.index_precision]),
                sql.Literal(self.hnsw_m),
                sql.Literal(self.hnsw_ef_construction),
                sql.Literal(collection),
                sql.Literal(dim),
            )
        )
        self._index_kinds[(collection, dim)] = self.index_precision
        self._indexed.add((collection, dim))

    def _forget_created(self) -> None:
        self._indexed.clear()
        self._index_kinds.clear()

    def delete_vectors(self, collection: str, ids: Sequence[str]) -> int:
        check_str(collection, "collection")
        keys = id_list(ids, "vector ids")
        if not keys:
            return 0
        with self._write() as conn:
            cur = conn.execute(
                "DELETE FROM vectors WHERE collection = %s AND item_id = ANY(%s)",
                (collection, keys),
            )
            if cur.rowcount > 0:
                self._bump(collection)
            return int(cur.rowcount)

    def load_vectors(
        self, collection: str
    ) -> tuple[list[str], npt.NDArray[np.float32], str | None]:
        check_str(collection, "collection")
        rows = self._rows(  # one statement: a consistent snapshot
            "SELECT item_id, embedder_id, embedding FROM vectors WHERE collection = %s "
            "ORDER BY seq",
            (collection,),
            binary=True,
        )
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32), None
        matrix = np.stack([r[2] for r in rows]).astype(np.float32, copy=False)
        return [r[0] for r in rows], matrix, str(rows[0][1])

    def iter_vectors(
        self, collection: str, page: int = VECTOR_PAGE
    ) -> Iterator[tuple[list[str], npt.NDArray[np.float32], str]]:
        check_str(collection, "collection")
        if page < 1:
            raise InvalidInputError(f"page must be a positive int, got {page!r}")
        last = -(2**63)
        while True:  # one query per page: no read cursor stays open between yields
            rows = self._rows(
                "SELECT seq, item_id, embedder_id, embedding FROM vectors "
                "WHERE collection = %s AND seq > %s ORDER BY seq LIMIT %s",
                (collection, last, page),
                binary=True,
            )
            if rows:
                matrix = np.stack([r[3] for r in rows]).astype(np.float32, copy=False)
                yield [r[1] for r in rows], matrix, str(rows[0][2])
            if len(rows) < page:
                return
            last = rows[-1][0]

    def count_vectors(self, collection: str) -> int:
        check_str(collection, "collection")
        rows = self._rows("SELECT count(*) FROM vectors WHERE collection = %s", (collection,))
        return int(rows[0][0])

    def collection_version(self, collection: str) -> int:
        check_str(collection, "collection")
        rows = self._rows("SELECT version FROM collections WHERE name = %s", (collection,))
        return int(rows[0][0]) if rows else 0

    def collection_state(self, collection: str) -> tuple[int, str]:
        check_str(collection, "collection")
        rows = self._rows("SELECT version, etag FROM collections WHERE name = %s", (collection,))
        return (int(rows[0][0]), str(rows[0][1])) if rows else (0, "")

    def collection_info(self, collection: str) -> tuple[str, int] | None:
        check_str(collection, "collection")
        rows = self._rows(
            "SELECT embedder_id, dim FROM vectors WHERE collection = %s LIMIT 1", (collection,)
        )
        return (str(rows[0][0]), int(rows[0][1])) if rows else None

    # -- JSON records ------------------------------------------------------------------------
    def put_records(self, kind: str, items: Iterable[tuple[str, JSONValue]]) -> None:
        check_str(kind, "record kind")
        now = time.time()
        rows = []
        for item in items:
            if not (isinstance(item, tuple | list) and len(item) == 2):
                raise InvalidInputError(f"records must be (key, data) pairs, got {item!r}")
            key = check_str(item[0], f"key of a {kind!r} record")
            rows.append((kind, key, dumps_json(item[1], what=f"record {kind}/{key}"), now, now))
        if not rows:
            return
        with self._write() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO records (kind, key, data, created_at, updated_at) "
                "VALUES (%s, %s, %s::json, %s, %s) ON CONFLICT (kind, key) DO UPDATE SET "
                "data = excluded.data, updated_at = excluded.updated_at",
                rows,
            )

    def get_record(self, kind: str, key: str) -> JSONValue | None:
        rows = self._rows(
            "SELECT data::text FROM records WHERE kind = %s AND key = %s",
            (check_str(kind, "record kind"), check_str(key, "record key")),
        )
        return loads_json(rows[0][0]) if rows else None

    def get_records(self, kind: str, keys: Sequence[str]) -> dict[str, JSONValue]:
        check_str(kind, "record kind")
        wanted = [check_str(key, "record key") for key in keys]
        if not wanted:
            return {}
        rows = self._rows(
            "SELECT key, data::text FROM records WHERE kind = %s AND key = ANY(%s)",
            (kind, wanted),
        )
        return {str(key): loads_json(data) for key, data in rows}

    def iter_records(
        self, kind: str, where: Mapping[str, JSONScalar] | None = None
    ) -> Iterator[tuple[str, JSONValue]]:
        clause, params = _where_sql(check_str(kind, "record kind"), where)
        sql = f"SELECT seq, key, data::text FROM records WHERE {clause} AND seq > %s"
        for row in self._paged(sql, params):
            yield row[1], loads_json(row[2])

    def count_records(self, kind: str, where: Mapping[str, JSONScalar] | None = None) -> int:
        clause, params = _where_sql(check_str(kind, "record kind"), where)
        return int(self._rows(f"SELECT COUNT(*) FROM records WHERE {clause}", params)[0][0])

    def delete_records(self, kind: str, keys: Sequence[str]) -> int:
        check_str(kind, "record kind")
        wanted = id_list(keys, "record keys")
        if not wanted:
            return 0
        with self._write() as conn:
            cur = conn.execute(
                "DELETE FROM records WHERE kind = %s AND key = ANY(%s)", (kind, wanted)
            )
            return int(cur.rowcount)


def _where_sql(kind: str, where: Mapping[str, Any] | None) -> tuple[str, tuple[Any, ...]]:
    """SQL condition and its parameters selecting records of ``kind`` matching ``where``."""
    parts = ["kind = %s"]
    params: list[Any] = [kind]
    for field, value in check_where(where):
        if value is None:
            parts.append("json_typeof(data -> %s) = 'null'")
            params.append(field)
        elif isinstance(value, bool):
            parts.append("json_typeof(data -> %s) = 'boolean' AND (data ->> %s) = %s")
            params += [field, field, "true" if value else "false"]
        elif isinstance(value, str):
            parts.append("json_typeof(data -> %s) = 'string' AND (data ->> %s) = %s")
            params += [field, field, value]
        else:
            parts.append(
                "json_typeof(data -> %s) = 'number' AND (data ->> %s)::numeric = %s::numeric"
            )
            params += [field, field, repr(value)]
    return " AND ".join(parts), tuple(params)
