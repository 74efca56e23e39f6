"""The shared backend: PostgreSQL with pgvector (psycopg 3; the ``postgres`` extra).

Open it by URL, ``get_store("postgresql://user:pass@host:5432/lab")`` (``postgres://`` too),
so the knowledge base, memories and logs of many processes on many machines sit in one database.
It keeps the whole :class:`~costeer_lab.store.BaseStore` contract and passes the shared
``StoreTestSuite``; psycopg is imported when a store is opened, so ``costeer_lab`` works without
the extra.

* **Durability.** A write method that returned has committed (``synchronous_commit = on``); a
  killed client loses only its open transaction, which the server rolls back.
* **Concurrency.** Writers of one store take a transaction-level advisory lock, so they commit
  one at a time and never deadlock; readers never wait (see ``_postgres_base.py``). Upserts are
  ``INSERT … ON CONFLICT``. One ``PostgresStore`` object (one connection) per thread.
* **Vectors.** A pgvector ``vector`` column with a partial HNSW cosine index per collection and
  dimension (built once the collection holds ``index_min_rows`` vectors); :meth:`search_vectors`
  ranks in SQL (see ``_postgres_search.py``).
* **Schema.** Versioned and migrated in place like the SQLite file (``_postgres_schema.py``).
  ``?schema=NAME`` keeps the store's tables in their own PostgreSQL schema (created if missing),
  so one database can hold several stores.

URL options (the rest of the query string goes to libpq, e.g. ``sslmode``, ``connect_timeout``):
``schema`` (default ``public``), ``vector_index`` (``hnsw`` or ``none``: exact scans),
``ef_search`` (HNSW candidates per search, default 100; raised to ``k``; a search may pass its
own, as the memory does), ``hnsw_m`` and
``hnsw_ef_construction`` (index build parameters, 16 and 64), ``index_min_rows`` (a collection
gets its index when it reaches this many vectors, default 1,000; exact scans below),
``index_precision`` (``half``: the index holds the unit-length vectors as pgvector ``halfvec``,
half the size and about twice as fast to search, needs pgvector 0.7+; ``single``: ``vector``;
``auto``, the default: ``half`` where the server's pgvector has it). Scores and thresholds are
always computed from the stored single-precision vectors.
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from costeer_lab._redact import redact_url
from costeer_lab.errors import ConfigurationError, StoreError
from costeer_lab.store._postgres_data import PostgresDataMixin
from costeer_lab.store._postgres_schema import advisory_key, migrate_postgres
from costeer_lab.store._snapshot_schema import VERSIONED, arm_postgres_triggers, as_of_sql
from costeer_lab.store._snapshots import SnapshotMixin

__all__ = ["PostgresStore"]

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_OPTIONS = (
    "schema",
    "vector_index",
    "ef_search",
    "hnsw_m",
    "hnsw_ef_construction",
    "index_min_rows",
    "index_precision",
)


class PostgresStore(PostgresDataMixin, SnapshotMixin):
    """A :class:`~costeer_lab.store.BaseStore` in a PostgreSQL database with pgvector.

    Args:
        url: ``postgresql://…`` or ``postgres://…`` (``postgresql+psycopg://`` is accepted);
            query options as in the module docstring.
        schema / vector_index / ef_search / hnsw_m / hnsw_ef_construction / index_min_rows /
            index_precision: override the URL's options.
        connect_timeout_s: how long to wait for the server.

    Raises:
        ConfigurationError: psycopg is not installed, or a malformed URL or option.
        StoreError: the server cannot be reached, the schema is not a costeer_lab store, or
            pgvector is missing.
        SchemaVersionError: the store was written by a newer costeer_lab.

    Example:
        >>> with PostgresStore("postgresql://me@db.internal/lab") as store:  # doctest: +SKIP
        ...     store.put_record("note", "a", {"text": "hello"})
        ...     store.get_record("note", "a")
        {'text': 'hello'}
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        vector_index: Literal["hnsw", "none"] | None = None,
        ef_search: int | None = None,
        hnsw_m: int | None = None,
        hnsw_ef_construction: int | None = None,
        index_min_rows: int | None = None,
        index_precision: Literal["auto", "half", "single"] | None = None,
        connect_timeout_s: float = 30.0,
    ) -> None:
        try:
            import psycopg
        except ImportError as exc:
            raise ConfigurationError(
                f"cannot open {redact_url(url)!r}: the PostgreSQL backend needs psycopg; "
                "install it with pip install 'costeer-lab[postgres]'"
            ) from exc
        conninfo, opts = _split_url(url)
        given = {
            "schema": schema,
            "vector_index": vector_index,
            "ef_search": ef_search,
            "hnsw_m": hnsw_m,
            "hnsw_ef_construction": hnsw_ef_construction,
            "index_min_rows": index_min_rows,
            "index_precision": index_precision,
        }
        opts.update({k: v for k, v in given.items() if v is not None})
        self.schema = _check_schema(str(opts.get("schema", "public")), url)
        self.vector_index = str(opts.get("vector_index", "hnsw"))
        if self.vector_index not in ("hnsw", "none"):
            raise ConfigurationError(
                f"vector_index must be 'hnsw' or 'none', got {self.vector_index!r} in "
                f"{redact_url(url)!r}"
            )
        self.ef_search = _positive(opts.get("ef_search", 100), "ef_search", url, 1, 1000)
        self.hnsw_m = _positive(opts.get("hnsw_m", 16), "hnsw_m", url, 2, 100)
        self.hnsw_ef_construction = _positive(
            opts.get("hnsw_ef_construction", 64), "hnsw_ef_construction", url, 4, 1000
        )
        precision = str(opts.get("index_precision", "auto"))
        if precision not in ("auto", "half", "single"):
            raise ConfigurationError(
                f"index_precision must be 'auto', 'half' or 'single', got {precision!r} in "
                f"{redact_url(url)!r}"
            )
        self.index_min_rows = _positive(
            opts.get("index_min_rows", 1000), "index_min_rows", url, 1, 10**9
        )
        self.url = url
        self._where = repr(redact_url(url))
        self._depth = 0
        self._lock_depth = None
        self._indexed = set()
        self._index_kinds = {}
        self._ef_session = None
        self._write_key = advisory_key("costeer_lab", self.schema, "write")
        self._conn = None
        try:
            conn = psycopg.connect(
                conninfo, autocommit=True, connect_timeout=max(1, round(connect_timeout_s))
            )
        except psycopg.Error as exc:
            raise StoreError(f"cannot open store {self._where}: {exc}".strip()) from exc
        try:
            conn.execute("SET synchronous_commit = on")
            exists = conn.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.schema,)
            ).fetchone()
            if not exists:  # (creating needs a privilege that using an existing one does not)
                _create_schema(conn, self.schema)
            conn.execute(f'SET search_path TO "{self.schema}", public')
            self._schema_version = migrate_postgres(conn, self.schema, self._where)
            from costeer_lab.store._postgres_vector import register_vector_adapters

            register_vector_adapters(conn)
            self.index_precision = _resolve_precision(conn, precision, self._where)
        except psycopg.Error as exc:
            conn.close()
            raise StoreError(f"cannot open store {self._where}: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    def __repr__(self) -> str:
        state = "closed" if self._conn is None else f"schema v{self._schema_version}"
        return f"PostgresStore({redact_url(self.url)!r}, {state})"

    def _delete_edge_keys(self, conn: Any, keys: list[tuple[str, ...]]) -> int:
        cur = conn.execute(
            "DELETE FROM edges e USING unnest(%s::text[], %s::text[], %s::text[]) "
            "AS k(src, dst, kind), ids s, ids d WHERE s.id = k.src AND d.id = k.dst "
            "AND e.src = s.seq AND e.dst = d.seq AND e.kind = k.kind",
            ([r[0] for r in keys], [r[1] for r in keys], [r[2] for r in keys]),
        )
        return int(cur.rowcount)

    # -- snapshot hooks (``_snapshots.py``) ------------------------------------------------------
    _snap_p = "%s"
    _snap_overriding = " OVERRIDING SYSTEM VALUE"

    def _snap_columns(self, table: str) -> list[str]:
        rows = self._rows(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s "
            "AND table_name = %s ORDER BY ordinal_position",
            (self.schema, table),
        )
        return [str(r[0]) for r in rows]

    def _snap_prefix(self) -> str:
        return f'"{self.schema}".'

    def _snap_arm(self, conn: Any, on: bool) -> None:
        arm_postgres_triggers(conn, self._snap_prefix(), on)

    def _snap_text(self, column: str) -> str:
        return f"{column}::text"

    def _snap_view(self, name: str, epoch: int) -> PostgresStore:
        view = PostgresStore(self.url, schema=self.schema)
        try:
            conn = view._connection()
            with view._guard():
                for table in VERSIONED:
                    sql = as_of_sql(table, view._snap_columns(table), epoch, self._snap_prefix())
                    conn.execute(f"CREATE TEMP VIEW {table} AS {sql}")  # shadows the table
        except BaseException:
            view.close()
            raise
        view.read_only = True
        view._read_only_reason = (
            f"snapshot view {name!r} of store {self._where} is read-only; write to the store "
            "itself, or branch(...) it into a new store"
        )
        return view


def _split_url(url: str) -> tuple[str, dict[str, Any]]:
    """libpq connection URL (costeer options removed, ``+driver`` dropped) and the options."""
    if not isinstance(url, str):
        raise ConfigurationError(f"a PostgreSQL URL must be a str, got {type(url).__name__}")
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower().split("+", 1)[0]
    if scheme not in ("postgresql", "postgres"):
        raise ConfigurationError(
            f"not a PostgreSQL URL: {redact_url(url)!r}; expected 'postgresql://user@host/db'"
        )
    try:
        pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError as exc:
        raise ConfigurationError(f"malformed query string in {redact_url(url)!r}: {exc}") from None
    ours = {k: v for k, v in pairs if k in _OPTIONS}
    rest = [(k, v) for k, v in pairs if k not in _OPTIONS]  # libpq refuses unknown ones
    conninfo = urlunsplit(
        ("postgresql", parts.netloc, parts.path, urlencode(rest), parts.fragment)
    )
    return conninfo, ours


def _create_schema(conn: Any, schema: str) -> None:
    """``CREATE SCHEMA IF NOT EXISTS`` under a database-wide advisory lock: two processes
    creating one schema at once would otherwise both pass the "if not exists" check and one
    fail on the catalogue's unique index (arms of a run opening their namespaces together)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key("costeer_lab", "ddl"),))
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')


def _check_schema(name: str, url: str) -> str:
    if not _SCHEMA_NAME.fullmatch(name):
        raise ConfigurationError(
            f"schema must be a lower-case SQL identifier (letters, digits, '_'; at most 63), "
            f"got {name!r} in {redact_url(url)!r}"
        )
    return name


def _positive(value: object, name: str, url: str, low: int, high: int) -> int:
    try:
        number = int(str(value))
    except ValueError:
        number = low - 1
    if not low <= number <= high:
        raise ConfigurationError(
            f"{name} must be an integer in [{low}, {high}], got {value!r} in {redact_url(url)!r}"
        )
    return number


def _pgvector_version(conn: Any) -> tuple[int, ...]:
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
        return ()
    return tuple(int(part) for part in re.findall(r"\d+", str(row[0]))[:3])


def _resolve_precision(conn: Any, asked: str, where: str) -> str:
    """``half`` or ``single``: what the HNSW indexes this store builds will hold."""
    has_half = _pgvector_version(conn) >= (0, 7)
    if asked == "auto":
        return "half" if has_half else "single"
    if asked == "half" and not has_half:
        raise ConfigurationError(
            f"index_precision=half needs pgvector 0.7 or later (halfvec); the server of "
            f"{where} has pgvector {'.'.join(map(str, _pgvector_version(conn))) or 'missing'}"
        )
    return asked
