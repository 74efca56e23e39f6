"""Schema versions of the PostgreSQL store and the steps that migrate an older database.

The layout mirrors the SQLite store (``_migrations.py``): a ``meta`` table holds
``schema_version``; :data:`PG_MIGRATIONS` is an ordered list where step ``i`` (1-based) turns a
version ``i - 1`` schema into version ``i``. Opening a store runs every missing step in one
transaction that first takes a transaction-level advisory lock, so processes (on any machine)
opening the same database at once serialise, and a failed migration changes nothing.

Differences from SQLite: insertion order is an identity column ``seq``; vectors live in a pgvector
``vector`` column (any dimension; each collection/dimension gets its own partial HNSW index, made
on first write, see ``_postgres_data.py``); JSON records are a ``json`` column (kept verbatim, so
key order and number spelling round-trip exactly, and ``where`` filters run in SQL).

Adding a version: append a step to :data:`PG_MIGRATIONS` (never edit a released one) and add a
test that opens a database of the previous version. Keep it in step with the SQLite
``SCHEMA_VERSION`` when the change is one of the contract.

Example:
    >>> PG_SCHEMA_VERSION
    6
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from costeer_lab.errors import SchemaVersionError, StoreError
from costeer_lab.store._interned import interned_ids_sql
from costeer_lab.store._snapshot_schema import install_postgres_snapshots

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "PG_MIGRATIONS",
    "PG_SCHEMA_VERSION",
    "STORE_TABLES",
    "advisory_key",
    "migrate_postgres",
    "read_pg_schema_version",
]

PgMigration = Callable[["psycopg.Connection[tuple[object, ...]]"], None]

#: Tables of the store; a schema holding some of them but no ``meta`` is not a store.
STORE_TABLES = ("nodes", "edges", "embedding_cache", "vectors", "collections", "records")

_V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);
CREATE TABLE nodes (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         text NOT NULL UNIQUE,
    kind       text NOT NULL,
    content    text NOT NULL,
    attrs      text NOT NULL,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL
);
CREATE INDEX nodes_kind ON nodes (kind, seq);
CREATE TABLE edges (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    src        text NOT NULL,
    dst        text NOT NULL,
    kind       text NOT NULL,
    attrs      text NOT NULL,
    created_at double precision NOT NULL,
    UNIQUE (src, dst, kind)
);
CREATE INDEX edges_dst ON edges (dst);
CREATE INDEX edges_kind ON edges (kind, seq);
CREATE TABLE embedding_cache (
    embedder_id text NOT NULL,
    text_sha256 text NOT NULL,
    dim         integer NOT NULL,
    vector      bytea NOT NULL,
    PRIMARY KEY (embedder_id, text_sha256)
);
CREATE TABLE vectors (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    collection  text NOT NULL,
    item_id     text NOT NULL,
    embedder_id text NOT NULL,
    dim         integer NOT NULL,
    embedding   vector NOT NULL,
    UNIQUE (collection, item_id)
);
CREATE INDEX vectors_order ON vectors (collection, seq);
CREATE TABLE collections (
    name    text PRIMARY KEY,
    version bigint NOT NULL
);
CREATE TABLE records (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind       text NOT NULL,
    key        text NOT NULL,
    data       json NOT NULL,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    UNIQUE (kind, key)
);
CREATE INDEX records_kind ON records (kind, seq)
"""


def _v1_initial(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Version 1: meta, nodes, edges, embedding cache, vector collections, JSON records."""
    for statement in _V1_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


def _v2_snapshots(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Version 2: named snapshots (an undo log kept by triggers; ``_snapshot_schema``)."""
    install_postgres_snapshots(conn)


def _v3_vectors_once(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Version 3: each vector stored once (a collection row may carry its text's sha256, and
    the embedding cache looks there; see ``_snapshot_schema.VECTORS_ONCE_SQL``). Rows written
    before keep their cache copy (the two encodings are not compared in SQL here)."""
    conn.execute("ALTER TABLE vectors ADD COLUMN text_sha256 text")
    conn.execute(
        "CREATE INDEX vectors_text ON vectors (text_sha256) WHERE text_sha256 IS NOT NULL"
    )
    install_postgres_snapshots(conn)  # snap_vectors gets the column; the trigger lists it


def _v4_collection_etag(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Version 4: ``collections.etag``, a random tag replaced on every write of a collection
    (with its version: what a persisted FAISS index is checked against). Existing collections
    get a random tag each; the snapshot log's copy of the table gets the column."""
    conn.execute("DROP TRIGGER IF EXISTS snap_log ON collections")
    conn.execute("ALTER TABLE collections ADD COLUMN etag text NOT NULL DEFAULT ''")
    conn.execute("UPDATE collections SET etag = substr(md5(random()::text || name), 1, 16)")
    install_postgres_snapshots(conn)


def _v5_triggers_while_snapshots(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Version 5: the undo-log triggers are enabled only while a snapshot exists and no longer
    check for one on every row (see ``_snapshot_schema``). Takes the store's write lock first:
    a process of the old version may be taking a snapshot meanwhile."""
    schema = str(conn.execute("SELECT current_schema()").fetchone()[0])  # type: ignore[index]
    conn.execute(
        "SELECT pg_advisory_xact_lock(%s)", (advisory_key("costeer_lab", schema, "write"),)
    )
    install_postgres_snapshots(conn)


def _v6_interned_ids(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Version 6: node ids and edge endpoints interned in ``ids``; nodes keyed by their id's
    integer, edges by their endpoints' (``_interned``). Takes the store's write lock first."""
    schema = str(conn.execute("SELECT current_schema()").fetchone()[0])  # type: ignore[index]
    conn.execute(
        "SELECT pg_advisory_xact_lock(%s)", (advisory_key("costeer_lab", schema, "write"),)
    )
    for statement in interned_ids_sql("postgres"):
        conn.execute(statement)
    install_postgres_snapshots(conn)  # shadow tables of the new layout, then their old entries
    for statement in interned_ids_sql("postgres", shadows=True):
        conn.execute(statement)


#: Ordered migration steps; ``PG_MIGRATIONS[i]`` upgrades version ``i`` to ``i + 1``.
PG_MIGRATIONS: tuple[PgMigration, ...] = (
    _v1_initial,
    _v2_snapshots,
    _v3_vectors_once,
    _v4_collection_etag,
    _v5_triggers_while_snapshots,
    _v6_interned_ids,
)

#: Schema version written by this code.
PG_SCHEMA_VERSION: int = len(PG_MIGRATIONS)


def advisory_key(*parts: str) -> int:
    """A stable signed 64-bit key for ``pg_advisory_xact_lock`` from some strings.

    Example:
        >>> advisory_key("costeer_lab", "public", "write") == advisory_key(
        ...     "costeer_lab", "public", "write")
        True
    """
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def read_pg_schema_version(
    conn: psycopg.Connection[tuple[object, ...]], schema: str, where: str
) -> int:
    """The schema version stored in ``schema`` (0 when it holds none of the store's tables).

    Raises:
        StoreError: the schema holds store tables but no ``meta`` table, or a bad version.
    """
    rows = conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
        (schema,),
    ).fetchall()
    tables = {str(r[0]) for r in rows}
    if "meta" not in tables:
        clash = sorted(tables.intersection(STORE_TABLES))
        if clash:
            raise StoreError(
                f"{where}: schema {schema!r} is not a costeer_lab store (no 'meta' table) but "
                f"holds tables named like the store's: {', '.join(clash)}; use another "
                "database or '?schema=NAME'"
            )
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        return 0
    try:
        return int(str(row[0]))
    except ValueError:
        raise StoreError(
            f"{where}: meta.schema_version is {row[0]!r}, expected an integer"
        ) from None


def migrate_postgres(
    conn: psycopg.Connection[tuple[object, ...]],
    schema: str,
    where: str,
    migrations: Sequence[PgMigration] = PG_MIGRATIONS,
) -> int:
    """Bring ``schema`` to ``len(migrations)``; return the final version.

    ``conn`` must be in autocommit mode with ``search_path`` starting at ``schema``. The
    missing steps run in one transaction holding an advisory lock (concurrent openers wait).

    Raises:
        SchemaVersionError: the schema was written by a newer version of costeer_lab.
        StoreError: the schema is not a costeer_lab store, or pgvector is missing.
    """
    target = len(migrations)
    current = read_pg_schema_version(conn, schema, where)  # cheap check without the lock
    if current == target:
        return current
    _check_not_newer(current, target, where)
    with conn.transaction():
        conn.execute(
            "SELECT pg_advisory_xact_lock(%s)", (advisory_key("costeer_lab", schema, "migrate"),)
        )
        current = read_pg_schema_version(conn, schema, where)  # another opener may have won
        _check_not_newer(current, target, where)
        if current < target:
            _require_pgvector(conn, where)
            for step in migrations[current:]:
                step(conn)
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('schema_version', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(target),),
            )
    return target


def _require_pgvector(conn: psycopg.Connection[tuple[object, ...]], where: str) -> None:
    """Create the ``vector`` extension unless it exists (needs the privilege to create it)."""
    import psycopg

    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    try:
        with conn.transaction():
            # database-wide: stores of two schemas migrating at once would both create it
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key("costeer_lab", "ddl"),))
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        raise StoreError(
            f"{where}: the pgvector extension is not installed in this database and could not "
            f"be created ({type(exc).__name__}: {exc}); install pgvector on the server and run "
            "'CREATE EXTENSION vector' as a privileged user"
        ) from exc


def _check_not_newer(current: int, target: int, where: str) -> None:
    if current > target:
        raise SchemaVersionError(
            f"store {where} has schema version {current}, but this costeer_lab understands "
            f"versions up to {target}; upgrade costeer_lab (pip install -U costeer-lab) "
            "to open it"
        )
