"""Embedding cache, vector collections (pgvector) and JSON records of ``PostgresStore``.

Vectors sit in one ``vector`` column of any dimension. The write that brings a collection of
dimension ``d`` to ``index_min_rows`` vectors (default 1,000) builds a partial HNSW index (cosine)
restricted to that collection and dimension; smaller collections are scanned exactly (as fast at
that size, and inserts stay cheap: each insert into an HNSW index costs about a millisecond of
server CPU). The index is on ``l2_normalize(embedding::vector(d))::halfvec(d)`` (precision
``half``, pgvector 0.7+: half the pages, so a search touches half the memory; normalising first
keeps every value within half precision's range and leaves cosines unchanged) or on
``embedding::vector(d)`` (``single``). :meth:`PostgresDataMixin.search_vectors` ranks with
``ORDER BY <that expression> <=> query LIMIT k``; the returned scores and ``min_score`` (in the
``WHERE`` clause) use the stored single-precision vectors, so half precision only decides which
candidates the index walk visits. A collection is searched through whichever index it has (one
built with another precision setting, or by another process, included). ``hnsw.ef_search`` is
raised to at least ``k`` for each search, so a threshold still leaves ``k`` results whenever
``k`` qualify among the nearest ``ef_search``. A search restricted to candidate ``ids`` ranks
exactly those candidates (no index, cost grows with ``len(ids)``).

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
from costeer_lab.store._base import JSONScalar
from costeer_lab.store._codec import (
    as_matrix,
    check_str,
    check_where,
    decode_vector,
    dumps_json,
    encode_vector,
    loads_json,
)
from costeer_lab.store._postgres_base import PostgresBase
from costeer_lab.store._postgres_schema import advisory_key
from costeer_lab.store._rows import vector_input
from costeer_lab.store._sqlite_base import id_list
from costeer_lab.store._types import JSONValue

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["PostgresDataMixin"]

#: pgvector's largest ``hnsw.ef_search``; a larger ``k`` is searched exactly.
_MAX_EF_SEARCH = 1000
#: The operator class of each index precision.
_OPS = {"half": "halfvec_cosine_ops", "single": "vector_cosine_ops"}


def _index_name(collection: str, dim: int, precision: str) -> str:
    kind = "hnswh" if precision == "half" else "hnsw"
    return f"vectors_{kind}_{advisory_key(collection) & 0xFFFFFFFFFFFF:012x}_{dim}"


def _indexed_expression(dim: int, precision: str, value: str) -> Any:
    """The expression an index of ``precision`` holds, applied to the column or a parameter
    (``value``: ``embedding`` or ``%b``)."""
    from psycopg import sql

    if precision == "half":
        return sql.SQL("(l2_normalize(" + value + "::vector({}))::halfvec({}))").format(
            sql.Literal(dim), sql.Literal(dim)
        )
    return sql.SQL("(" + value + "::vector({}))").format(sql.Literal(dim))


class PostgresDataMixin(PostgresBase):
    """Embedding cache, vectors and records on top of :class:`PostgresBase`."""

    vector_index: str
    ef_search: int
    index_min_rows: int
    hnsw_m: int
    hnsw_ef_construction: int
    index_precision: str
    _indexed: set[tuple[str, int]]
    _index_kinds: dict[tuple[str, int], str]
    _ef_session: int | None

    # -- embedding cache -------------------------------------------------------------------
    def get_cached_embeddings(
        self, embedder_id: str, text_hashes: Sequence[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        check_str(embedder_id, "embedder_id")
        hashes = id_list(text_hashes, "text hashes")
        if not hashes:
            return {}
        rows = self._rows(
            "SELECT text_sha256, dim, vector FROM embedding_cache "
            "WHERE embedder_id = %s AND text_sha256 = ANY(%s)",
            (embedder_id, hashes),
        )
        return {row[0]: decode_vector(bytes(row[2]), row[1]) for row in rows}

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
    ) -> None:
        checked = vector_input(collection, embedder_id, ids, vectors)
        if checked is None:
            return
        keys, matrix = checked
        dim = int(matrix.shape[1])
        rows = [
            (collection, key, embedder_id, dim, vec) for key, vec in zip(keys, matrix, strict=True)
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
                    "INSERT INTO vectors (collection, item_id, embedder_id, dim, embedding) "
                    "VALUES (%s, %s, %s, %s, %b) ON CONFLICT (collection, item_id) DO UPDATE "
                    "SET embedder_id = excluded.embedder_id, dim = excluded.dim, "
                    "embedding = excluded.embedding",
                    rows,
                )
            self._ensure_index(collection, dim)
            self._bump(collection)

    def _bump(self, collection: str) -> None:
        self._connection().execute(
            "INSERT INTO collections (name, version) VALUES (%s, 1) "
            "ON CONFLICT (name) DO UPDATE SET version = collections.version + 1",
            (collection,),
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
                sql.Identifier(_index_name(collection, dim, self.index_precision)),
                _indexed_expression(dim, self.index_precision, "embedding"),
                sql.SQL(_OPS[self.index_precision]),
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

    def _index_kind(self, collection: str, dim: int) -> str | None:
        """The precision of the HNSW index ``(collection, dim)`` has (``half``/``single``), or
        None when it has none yet (looked up until one exists, then remembered)."""
        known = self._index_kinds.get((collection, dim))
        if known is not None:
            return known
        names = {_index_name(collection, dim, kind): kind for kind in _OPS}
        rows = self._rows(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
            "AND tablename = 'vectors' AND indexname = ANY(%s)",
            (list(names),),
        )
        found = sorted(names[r[0]] for r in rows)
        if not found:
            return None
        kind = self.index_precision if self.index_precision in found else found[0]
        self._index_kinds[(collection, dim)] = kind
        return kind

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

    def collection_version(self, collection: str) -> int:
        check_str(collection, "collection")
        if self._depth:  # the caller may write against this version: hold it still
            self._lock_writes()
        rows = self._rows("SELECT version FROM collections WHERE name = %s", (collection,))
        return int(rows[0][0]) if rows else 0

    def collection_info(self, collection: str) -> tuple[str, int] | None:
        check_str(collection, "collection")
        rows = self._rows(
            "SELECT embedder_id, dim FROM vectors WHERE collection = %s LIMIT 1", (collection,)
        )
        return (str(rows[0][0]), int(rows[0][1])) if rows else None

    def search_vectors(
        self,
        collection: str,
        query: npt.NDArray[np.float32],
        k: int,
        *,
        min_score: float | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[tuple[str, float]]:
        """Cosine top-``k`` in SQL (see the module docstring); same contract as the default.

        Example:
            >>> store.search_vectors("notes", query, 5, min_score=0.7)  # doctest: +SKIP
            [('n12', 0.93), ('n3', 0.81)]
        """
        from psycopg import sql

        vector = np.asarray(query, dtype=np.float32)
        if vector.ndim != 1:
            raise InvalidInputError(f"search_vectors: query must be 1-D, got shape {vector.shape}")
        if k < 0:
            raise InvalidInputError(f"search_vectors: k must be >= 0, got {k}")
        candidates = None if ids is None else id_list(ids, "candidate ids")
        dim = int(vector.shape[0])
        if k == 0:
            return []
        if not np.isfinite(vector).all() or not np.any(vector):
            # pgvector's cosine distance is NaN here; the exact scan defines these scores.
            return super().search_vectors(collection, vector, k, min_score=min_score, ids=ids)
        exact = candidates is not None or self.vector_index != "hnsw" or k > _MAX_EF_SEARCH
        kind = None if exact else self._index_kind(collection, dim)
        exact = exact or kind is None  # no index yet: a scan, ranked exactly
        distance = sql.SQL("(embedding::vector({}) <=> %b::vector({}))").format(
            sql.Literal(dim), sql.Literal(dim)
        )
        # literals, not parameters: the planner matches them to the partial index's predicate
        where: list[sql.Composable] = [
            sql.SQL("collection = {} AND dim = {}").format(
                sql.Literal(collection), sql.Literal(dim)
            )
        ]
        params: list[Any] = [vector]
        if min_score is not None and min_score > -1.0:  # a cosine is never below -1
            where.append(sql.SQL("{} <= %s").format(distance))
            params += [vector, 1.0 - float(min_score)]
        if candidates is not None:
            where.append(sql.SQL("item_id = ANY(%s)"))
            params.append(candidates)
        if exact:  # ``+ 0`` keeps the planner off any index: exact ranking, ties by id
            order: sql.Composable = sql.SQL("{} + 0, item_id").format(distance)
        else:  # the indexed expression, so the planner walks the HNSW index
            order = sql.SQL("({} <=> {})").format(
                _indexed_expression(dim, str(kind), "embedding"),
                _indexed_expression(dim, str(kind), "%b"),
            )
        params += [vector, k]
        statement = sql.SQL(
            "SELECT item_id, {} FROM vectors WHERE {} ORDER BY {} LIMIT %s"
        ).format(distance, sql.SQL(" AND ").join(where), order)
        if not exact:
            self._set_ef_search(max(self.ef_search, k))
        rows = self._rows(statement, params)
        if not rows:  # empty, all filtered out, or another dimension: only the last is an error
            info = self.collection_info(collection)
            if info is not None and info[1] != dim:
                raise InvalidInputError(
                    f"search_vectors: query has dimension {dim}, collection "
                    f"{collection!r} holds dimension {info[1]}"
                )
            return []
        hits = [(str(r[0]), 1.0 - float(r[1])) for r in rows]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits

    def _set_ef_search(self, value: int) -> None:
        """``hnsw.ef_search`` for the coming search, sent only when it changes.

        Outside a transaction the session value is set (and remembered); inside one,
        ``SET LOCAL`` changes it until that transaction ends, when the session value returns.
        """
        if value == self._ef_session:
            return
        if self._depth:
            self._exec(f"SET LOCAL hnsw.ef_search = {int(value)}")
        else:
            self._exec(f"SET hnsw.ef_search = {int(value)}")
            self._ef_session = value

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
