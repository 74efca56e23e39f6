"""How :class:`~costeer_lab.store.SQLiteStore` stores vectors and filters records (the rest of
its data methods are shared with PostgreSQL: ``_relational``).

Vectors are stored as raw little-endian float32 blobs tagged with embedder id and dimension.
Record ``where`` filters run in SQL with ``json_type``/``json_extract``, so ``True`` matches only
JSON ``true`` (not ``1``), ``None`` only an explicit JSON ``null`` (not a missing field), and
``1`` matches ``1`` and ``1.0``.
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
    decode_matrix,
    decode_vector,
    dumps_json,
    encode_vector,
)
from costeer_lab.store._sqlite_base import SQLiteBase, id_list

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["SQLiteDataMixin"]


class SQLiteDataMixin(SQLiteBase):
    """Vector reads and binding, and the record ``where`` filter, on top of :class:`SQLiteBase`."""

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

    # -- vector collections ------------------------------------------------------------------
    def _vector_values(self, matrix: npt.NDArray[np.float32]) -> list[bytes]:
        raw, step = encode_vector(matrix), int(matrix.shape[1]) * 4
        return [raw[i * step : (i + 1) * step] for i in range(len(matrix))]

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
