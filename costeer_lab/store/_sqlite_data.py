"""Embedding cache, vector collections and JSON records of :class:`~costeer_lab.store.SQLiteStore`.

Vectors are stored as raw little-endian float32 blobs tagged with embedder id and dimension.
Record ``where`` filters run in SQL with ``json_type``/``json_extract``, so ``True`` matches only
JSON ``true`` (not ``1``), ``None`` only an explicit JSON ``null`` (not a missing field), and
``1`` matches ``1`` and ``1.0``.
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
    decode_matrix,
    decode_vector,
    dumps_json,
    encode_vector,
    loads_json,
    new_etag,
)
from costeer_lab.store._rows import vector_input
from costeer_lab.store._sqlite_base import SQLiteBase, id_list
from costeer_lab.store._types import JSONValue

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["SQLiteDataMixin"]


class SQLiteDataMixin(SQLiteBase):
    """Embedding cache, vectors and records on top of :class:`SQLiteBase`."""

    # -- embedding cache -------------------------------------------------------------------
    def get_cached_embeddings(
        self, embedder_id: str, text_hashes: Sequence[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        check_str(embedder_id, "embedder_id")
        hashes = dumps_json(id_list(text_hashes, "text hashes"), what="text hashes")
        rows = self._rows(  # the cache, then vectors stored once in a collection
            "SELECT text_sha256, dim, vector FROM vectors WHERE text_sha256 IN "
            "(SELECT value FROM json_each(?1)) AND embedder_id = ?2 UNION ALL "
            "SELECT text_sha256, dim, vector FROM embedding_cache WHERE embedder_id = ?2 "
            "AND text_sha256 IN (SELECT value FROM json_each(?1))",
            (hashes, embedder_id),
        )
        return {row[0]: decode_vector(row[2], row[1]) for row in rows}

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
        with self._write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO embedding_cache (embedder_id, text_sha256, dim, vector) "
                "VALUES (?, ?, ?, ?)",
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
        raw = encode_vector(matrix)
        step = dim * 4
        rows = [
            (collection, key, embedder_id, dim, raw[i * step : (i + 1) * step], tags[i])
            for i, key in enumerate(keys)
        ]
        with self._write() as conn:
            held = self.collection_info(collection)
            if held is not None and held != (embedder_id, dim):
                raise EmbedderMismatchError(
                    f"collection {collection!r} holds vectors of embedder {held[0]!r} "
                    f"(dim {held[1]}); refusing vectors of embedder {embedder_id!r} (dim {dim}). "
                    "Use another collection or delete the old vectors first."
                )
            conn.executemany(
                "INSERT INTO vectors (collection, item_id, embedder_id, dim, vector, "
                "text_sha256) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(collection, item_id) "
                "DO UPDATE SET embedder_id = excluded.embedder_id, dim = excluded.dim, "
                "vector = excluded.vector, text_sha256 = excluded.text_sha256",
                rows,
            )
            self._bump(collection)

    def _bump(self, collection: str) -> None:
        self._connection().execute(
            "INSERT INTO collections (name, version, etag) VALUES (?, 1, ?) "
            "ON CONFLICT(name) DO UPDATE SET version = version + 1, etag = excluded.etag",
            (collection, new_etag()),
        )

    def delete_vectors(self, collection: str, ids: Sequence[str]) -> int:
        check_str(collection, "collection")
        keys = dumps_json(id_list(ids, "vector ids"), what="ids")
        with self._write() as conn:
            cur = conn.execute(
                "DELETE FROM vectors WHERE collection = ? "
                "AND item_id IN (SELECT value FROM json_each(?))",
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
            "SELECT item_id, embedder_id, dim, vector FROM vectors WHERE collection = ? "
            "ORDER BY seq",
            (collection,),
        )
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32), None
        matrix = decode_matrix([r[3] for r in rows], int(rows[0][2]))
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
                "SELECT seq, item_id, embedder_id, dim, vector FROM vectors "
                "WHERE collection = ? AND seq > ? ORDER BY seq LIMIT ?",
                (collection, last, page),
            )
            if rows:
                matrix = decode_matrix([r[4] for r in rows], int(rows[0][3]))
                yield [r[1] for r in rows], matrix, str(rows[0][2])
            if len(rows) < page:
                return
            last = rows[-1][0]

    def count_vectors(self, collection: str) -> int:
        check_str(collection, "collection")
        rows = self._rows("SELECT count(*) FROM vectors WHERE collection = ?", (collection,))
        return int(rows[0][0])

    def collection_version(self, collection: str) -> int:
        check_str(collection, "collection")
        rows = self._rows("SELECT version FROM collections WHERE name = ?", (collection,))
        return int(rows[0][0]) if rows else 0

    def collection_state(self, collection: str) -> tuple[int, str]:
        check_str(collection, "collection")
        rows = self._rows("SELECT version, etag FROM collections WHERE name = ?", (collection,))
        return (int(rows[0][0]), str(rows[0][1])) if rows else (0, "")

    def collection_info(self, collection: str) -> tuple[str, int] | None:
        check_str(collection, "collection")
        rows = self._rows(
            "SELECT embedder_id, dim FROM vectors WHERE collection = ? LIMIT 1", (collection,)
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
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO records (kind, key, data, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(kind, key) DO UPDATE SET "
                "data = excluded.data, updated_at = excluded.updated_at",
                rows,
            )

    def get_record(self, kind: str, key: str) -> JSONValue | None:
        rows = self._rows(
            "SELECT data FROM records WHERE kind = ? AND key = ?",
            (check_str(kind, "record kind"), check_str(key, "record key")),
        )
        return loads_json(rows[0][0]) if rows else None

    def get_records(self, kind: str, keys: Sequence[str]) -> dict[str, JSONValue]:
        check_str(kind, "record kind")
        wanted = [check_str(key, "record key") for key in keys]
        out: dict[str, JSONValue] = {}
        for start in range(0, len(wanted), 500):  # under SQLite's bound-parameter limit
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._rows(
                f"SELECT key, data FROM records WHERE kind = ? AND key IN ({marks})",
                (kind, *chunk),
            )
            out.update((str(key), loads_json(data)) for key, data in rows)
        return out

    def iter_records(
        self, kind: str, where: Mapping[str, JSONScalar] | None = None
    ) -> Iterator[tuple[str, JSONValue]]:
        clause, params = _where_sql(check_str(kind, "record kind"), where)
        sql = f"SELECT seq, key, data FROM records WHERE {clause} AND seq > ?"
        for row in self._paged(sql, params):
            yield row[1], loads_json(row[2])

    def count_records(self, kind: str, where: Mapping[str, JSONScalar] | None = None) -> int:
        clause, params = _where_sql(check_str(kind, "record kind"), where)
        return int(self._rows(f"SELECT COUNT(*) FROM records WHERE {clause}", params)[0][0])

    def delete_records(self, kind: str, keys: Sequence[str]) -> int:
        check_str(kind, "record kind")
        wanted = dumps_json(id_list(keys, "record keys"), what="keys")
        with self._write() as conn:
            cur = conn.execute(
                "DELETE FROM records WHERE kind = ? AND key IN (SELECT value FROM json_each(?))",
                (kind, wanted),
            )
            return int(cur.rowcount)


def _where_sql(kind: str, where: Mapping[str, Any] | None) -> tuple[str, tuple[Any, ...]]:
    """SQL condition and its parameters selecting records of ``kind`` matching ``where``."""
    parts = ["kind = ?"]
    params: list[Any] = [kind]
    for field, value in check_where(where):
        path = f'$."{field}"'
        if value is None:
            parts.append("json_type(data, ?) = 'null'")
            params.append(path)
        elif isinstance(value, bool):
            parts.append("json_type(data, ?) = ?")
            params += [path, "true" if value else "false"]
        elif isinstance(value, str):
            parts.append("json_type(data, ?) = 'text' AND json_extract(data, ?) = ?")
            params += [path, path, value]
        else:
            parts.append("json_type(data, ?) IN ('integer', 'real') AND json_extract(data, ?) = ?")
            params += [path, path, value]
    return " AND ".join(parts), tuple(params)
