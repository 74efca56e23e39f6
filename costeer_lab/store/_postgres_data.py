"""How ``PostgresStore`` stores vectors (pgvector), indexes them and filters records (the rest
of its data methods are shared with SQLite: ``_relational``).

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

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from costeer_lab.errors import InvalidInputError
from costeer_lab.store._base import VECTOR_PAGE, JSONScalar
from costeer_lab.store._codec import (
    check_str,
    check_where,
    decode_vector,
    id_list,
)
from costeer_lab.store._postgres_search import (
    OPS,
    PostgresSearchMixin,
    index_name,
    indexed_expression,
)

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["PostgresDataMixin"]


class PostgresDataMixin(PostgresSearchMixin):
    """Vector reads, binding and indexes, and the record ``where`` filter, over the search."""

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

    # -- vector collections ------------------------------------------------------------------
    _vector_column = "embedding"
    _vector_p = "%b"

    def _vector_values(self, matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        return matrix  # one pgvector value per row (binary)

    def _vectors_written(self, collection: str, dim: int) -> None:
        self._ensure_index(collection, dim)

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

    def _records_where(
        self, kind: str, where: Mapping[str, JSONScalar] | None
    ) -> tuple[str, tuple[Any, ...]]:
        return _where_sql(kind, where)

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
