"""Vector search of ``PostgresStore`` in SQL: the HNSW index walk, or an exact scan.

The write that brings a collection of dimension ``d`` to ``index_min_rows`` vectors builds a
partial HNSW index (cosine) restricted to that collection and dimension (see
``_postgres_data``). The index is on ``l2_normalize(embedding::vector(d))::halfvec(d)`` (precision
``half``, pgvector 0.7+: half the pages, so a search touches half the memory; normalising first
keeps every value within half precision's range and leaves cosines unchanged) or on
``embedding::vector(d)`` (``single``). :meth:`PostgresSearchMixin.search_vectors` ranks with
``ORDER BY <that expression> <=> query LIMIT k``; the returned scores and ``min_score`` (in the
``WHERE`` clause) use the stored single-precision vectors, so half precision only decides which
candidates the index walk visits. A collection is searched through whichever index it has (one
built with another precision setting, or by another process, included). ``hnsw.ef_search`` is
raised to at least ``k`` for each search, so a threshold still leaves ``k`` results whenever
``k`` qualify among the nearest ``ef_search``. A search restricted to candidate ``ids`` ranks
exactly those candidates (no index, cost grows with ``len(ids)``), as does one on a collection
without an index yet.

:meth:`PostgresSearchMixin.explain_search` shows the server's plan of that same statement, with
its execution time and the buffers it touched: what a search costs, measured where it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from costeer_lab.errors import InvalidInputError
from costeer_lab.store._codec import id_list
from costeer_lab.store._postgres_base import PostgresBase
from costeer_lab.store._postgres_schema import advisory_key

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["OPS", "PostgresSearchMixin", "index_name", "indexed_expression"]

#: pgvector's largest ``hnsw.ef_search``; a larger ``k`` is searched exactly.
_MAX_EF_SEARCH = 1000
#: The operator class of each index precision.
OPS = {"half": "halfvec_cosine_ops", "single": "vector_cosine_ops"}


def index_name(collection: str, dim: int, precision: str) -> str:
    kind = "hnswh" if precision == "half" else "hnsw"
    return f"vectors_{kind}_{advisory_key(collection) & 0xFFFFFFFFFFFF:012x}_{dim}"


def indexed_expression(dim: int, precision: str, value: str) -> Any:
    """The expression an index of ``precision`` holds, applied to the column or a parameter
    (``value``: ``embedding`` or ``%b``)."""
    from psycopg import sql

    if precision == "half":
        return sql.SQL("(l2_normalize(" + value + "::vector({}))::halfvec({}))").format(
            sql.Literal(dim), sql.Literal(dim)
        )
    return sql.SQL("(" + value + "::vector({}))").format(sql.Literal(dim))


def _beam(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_EF_SEARCH:
        raise InvalidInputError(
            f"search_vectors: ef_search must be an int in 1..{_MAX_EF_SEARCH}, got {value!r}"
        )
    return value


class PostgresSearchMixin(PostgresBase):
    """Cosine top-``k`` and its plan, on top of :class:`PostgresBase`."""

    vector_index: str
    ef_search: int
    index_precision: str
    _index_kinds: dict[tuple[str, int], str]
    _ef_session: int | None

    def search_vectors(
        self,
        collection: str,
        query: npt.NDArray[np.float32],
        k: int,
        *,
        min_score: float | None = None,
        ids: Sequence[str] | None = None,
        ef_search: int | None = None,
    ) -> list[tuple[str, float]]:
        """Cosine top-``k`` in SQL (see the module docstring); same contract as the default.

        ``ef_search`` (``None``: the store's ``ef_search``) is the beam width of this search's
        index walk, raised to ``k``.

        Example:
            >>> store.search_vectors("notes", query, 5, min_score=0.7)  # doctest: +SKIP
            [('n12', 0.93), ('n3', 0.81)]
        """
        vector, candidates = self._search_input(query, k, ids)
        if k == 0:
            return []
        if not np.isfinite(vector).all() or not np.any(vector):
            # pgvector's cosine distance is NaN here; the exact scan defines these scores.
            return super().search_vectors(collection, vector, k, min_score=min_score, ids=ids)
        statement, params = self._ranking(collection, vector, k, min_score, candidates, ef_search)
        rows = self._rows(statement, params)
        if not rows:  # empty, all filtered out, or another dimension: only the last is an error
            info = self.collection_info(collection)
            dim = int(vector.shape[0])
            if info is not None and info[1] != dim:
                raise InvalidInputError(
                    f"search_vectors: query has dimension {dim}, collection "
                    f"{collection!r} holds dimension {info[1]}"
                )
            return []
        hits = [(str(r[0]), 1.0 - float(r[1])) for r in rows]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits

    def explain_search(
        self,
        collection: str,
        query: npt.NDArray[np.float32],
        k: int,
        *,
        min_score: float | None = None,
        ids: Sequence[str] | None = None,
        ef_search: int | None = None,
        analyze: bool = True,
    ) -> str:
        """The server's plan for the statement :meth:`search_vectors` runs with these arguments.

        With ``analyze`` (the default) the statement is executed, and the plan reports its
        execution time on the server and the buffers it touched (``EXPLAIN (ANALYZE,
        BUFFERS)``): where a slow search spends its time, and whether it walks the HNSW index
        (``Index Scan using vectors_hnsw…``) or scans. ``k >= 1``; nothing is written.

        Example:
            >>> print(store.explain_search("memory.patterns", query, 10))  # doctest: +SKIP
            Limit  (cost=… rows=10 …) (actual time=2.9..2.9 rows=10 loops=1)
              Buffers: shared hit=2934
              ->  Index Scan using vectors_hnswh_2b10be1e84b2_384 on vectors …
            Execution Time: 2.951 ms
        """
        from psycopg import sql

        vector, candidates = self._search_input(query, k, ids)
        if k == 0:
            raise InvalidInputError("explain_search: k must be >= 1 (k=0 runs no statement)")
        statement, params = self._ranking(collection, vector, k, min_score, candidates, ef_search)
        options = "EXPLAIN (ANALYZE, BUFFERS) " if analyze else "EXPLAIN "
        return "\n".join(str(r[0]) for r in self._rows(sql.SQL(options) + statement, params))

    def _search_input(
        self, query: npt.NDArray[np.float32], k: int, ids: Sequence[str] | None
    ) -> tuple[npt.NDArray[np.float32], list[str] | None]:
        vector = np.asarray(query, dtype=np.float32)
        if vector.ndim != 1:
            raise InvalidInputError(f"search_vectors: query must be 1-D, got shape {vector.shape}")
        if k < 0:
            raise InvalidInputError(f"search_vectors: k must be >= 0, got {k}")
        return vector, None if ids is None else id_list(ids, "candidate ids")

    def _ranking(
        self,
        collection: str,
        vector: npt.NDArray[np.float32],
        k: int,
        min_score: float | None,
        candidates: list[str] | None,
        ef_search: int | None = None,
    ) -> tuple[Any, list[Any]]:
        """The ranking statement of a search and its parameters (``hnsw.ef_search`` is set for
        it when it walks the index)."""
        from psycopg import sql

        dim = int(vector.shape[0])
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
                indexed_expression(dim, str(kind), "embedding"),
                indexed_expression(dim, str(kind), "%b"),
            )
            beam = self.ef_search if ef_search is None else _beam(ef_search)
            self._set_ef_search(max(beam, k))
        params += [vector, k]
        statement = sql.SQL(
            "SELECT item_id, {} FROM vectors WHERE {} ORDER BY {} LIMIT %s"
        ).format(distance, sql.SQL(" AND ").join(where), order)
        return statement, params

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

    def _index_kind(self, collection: str, dim: int) -> str | None:
        """The precision of the HNSW index ``(collection, dim)`` has (``half``/``single``), or
        None when it has none yet (looked up until one exists, then remembered)."""
        known = self._index_kinds.get((collection, dim))
        if known is not None:
            return known
        names = {index_name(collection, dim, kind): kind for kind in OPS}
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
