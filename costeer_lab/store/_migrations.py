"""Schema versions of the SQLite store and the steps that migrate an older file in place.

The schema version lives in the ``meta`` table under the key ``schema_version``. A database with
no tables at all is version 0 (a fresh file). :data:`MIGRATIONS` is an ordered list: step ``i``
(1-based) turns a version ``i - 1`` database into version ``i``. Opening a store runs every
missing step inside one ``BEGIN IMMEDIATE`` transaction, so concurrent openers serialise and a
failed migration leaves the file untouched.

Adding a version: append a function to :data:`MIGRATIONS` (never edit a released step) and add a
test that opens a file of the previous version.

Example:
    >>> import sqlite3
    >>> conn = sqlite3.connect(":memory:", isolation_level=None)
    >>> migrate(conn, ":memory:")
    6
    >>> read_schema_version(conn, ":memory:")
    6
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from costeer_lab.errors import SchemaVersionError, StoreError
from costeer_lab.store._interned import interned_ids_sql
from costeer_lab.store._snapshot_schema import VECTORS_ONCE_SQL, install_sqlite_snapshots

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "migrate", "read_schema_version"]

Migration = Callable[[sqlite3.Connection], None]

_V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE nodes (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    kind       TEXT NOT NULL,
    content    TEXT NOT NULL,
    attrs      TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX nodes_kind ON nodes(kind, seq);
CREATE TABLE edges (
    seq        INTEGER PRIMARY KEY,
    src        TEXT NOT NULL,
    dst        TEXT NOT NULL,
    kind       TEXT NOT NULL,
    attrs      TEXT NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (src, dst, kind)
);
CREATE INDEX edges_dst ON edges(dst);
CREATE INDEX edges_kind ON edges(kind, seq);
CREATE TABLE embedding_cache (
    embedder_id TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim         INTEGER NOT NULL,
    vector      BLOB NOT NULL,
    PRIMARY KEY (embedder_id, text_sha256)
) WITHOUT ROWID;
CREATE TABLE vectors (
    seq         INTEGER PRIMARY KEY,
    collection  TEXT NOT NULL,
    item_id     TEXT NOT NULL,
    embedder_id TEXT NOT NULL,
    dim         INTEGER NOT NULL,
    vector      BLOB NOT NULL,
    UNIQUE (collection, item_id)
);
CREATE INDEX vectors_order ON vectors(collection, seq);
CREATE TABLE collections (
    name    TEXT PRIMARY KEY,
    version INTEGER NOT NULL
);
CREATE TABLE records (
    seq        INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL,
    key        TEXT NOT NULL,
    data       TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    UNIQUE (kind, key)
);
CREATE INDEX records_kind ON records(kind, seq);
"""


def _v1_initial(conn: sqlite3.Connection) -> None:
    """Version 1: meta, nodes, edges, embedding cache, vector collections, JSON records."""
    for statement in _V1_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


def _v2_snapshots(conn: sqlite3.Connection) -> None:
    """Version 2: named snapshots (an undo log kept by triggers; ``_snapshot_schema``)."""
    install_sqlite_snapshots(conn)


def _v3_vectors_once(conn: sqlite3.Connection) -> None:
    """Version 3: each vector stored once (see :data:`VECTORS_ONCE_SQL`)."""
    for event in ("insert", "update", "delete"):  # the backfill is not a change to log
        conn.execute(f"DROP TRIGGER IF EXISTS snap_vectors_{event}")
    for statement in VECTORS_ONCE_SQL:
        conn.execute(statement)
    install_sqlite_snapshots(conn)  # snap_vectors gets the column; triggers list it


def _v4_collection_etag(conn: sqlite3.Connection) -> None:
    """Version 4: ``collections.etag``, a random tag replaced on every write of a collection
    (with its version: what a persisted FAISS index is checked against). Existing collections
    get a random tag each; the snapshot log's copy of the table gets the column."""
    for event in ("insert", "update", "delete"):  # the new tags are not a change to log
        conn.execute(f"DROP TRIGGER IF EXISTS snap_collections_{event}")
    conn.execute("ALTER TABLE collections ADD COLUMN etag TEXT NOT NULL DEFAULT ''")
    conn.execute("UPDATE collections SET etag = lower(hex(randomblob(8)))")
    install_sqlite_snapshots(conn)


def _v5_triggers_while_snapshots(conn: sqlite3.Connection) -> None:
    """Version 5: the undo-log triggers exist only while a snapshot does, and no longer check
    for one on every row (see ``_snapshot_schema``): recreated or dropped accordingly."""
    install_sqlite_snapshots(conn)


def _v6_interned_ids(conn: sqlite3.Connection) -> None:
    """Version 6: node ids and edge endpoints interned in ``ids`` (see
    :func:`~costeer_lab.store._interned.interned_ids_sql`); nodes are keyed by their id's
    integer, edges by the integers of their endpoints, so new rows append to the indexes."""
    for table in ("nodes", "edges", "vectors", "records", "collections"):
        for event in ("insert", "update", "delete"):  # the rebuild is not a change to log
            conn.execute(f"DROP TRIGGER IF EXISTS snap_{table}_{event}")
    for statement in interned_ids_sql("sqlite"):
        conn.execute(statement)
    install_sqlite_snapshots(conn)  # shadow tables of the new layout, then their old entries
    for statement in interned_ids_sql("sqlite", shadows=True):
        conn.execute(statement)


#: Ordered migration steps; ``MIGRATIONS[i]`` upgrades version ``i`` to ``i + 1``.
MIGRATIONS: tuple[Migration, ...] = (
    _v1_initial,
    _v2_snapshots,
    _v3_vectors_once,
    _v4_collection_etag,
    _v5_triggers_while_snapshots,
    _v6_interned_ids,
)

#: Schema version written by this code.
SCHEMA_VERSION: int = len(MIGRATIONS)


def read_schema_version(conn: sqlite3.Connection, path: str) -> int:
    """The schema version stored in ``conn`` (0 for a database without tables).

    Raises:
        StoreError: the database has tables but is not a costeer_lab store.
    """
    tables = {
        row[0]
        for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not str(row[0]).startswith("sqlite_")
    }
    if not tables:
        return 0
    if "meta" not in tables:
        listed = ", ".join(sorted(tables))
        raise StoreError(
            f"{path!r} is a SQLite database but not a costeer_lab store "
            f"(no 'meta' table; tables: {listed})"
        )
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        return 0
    try:
        return int(row[0])
    except ValueError:
        raise StoreError(
            f"{path!r}: meta.schema_version is {row[0]!r}, expected an integer"
        ) from None


def migrate(
    conn: sqlite3.Connection, path: str, migrations: Sequence[Migration] = MIGRATIONS
) -> int:
    """Bring the database behind ``conn`` to ``len(migrations)``; return the final version.

    ``conn`` must be in autocommit mode (``isolation_level=None``). All missing steps run in
    one ``BEGIN IMMEDIATE`` transaction; on any error nothing is changed.

    Raises:
        SchemaVersionError: the database was written by a newer schema version.
        StoreError: the database is not a costeer_lab store.
    """
    target = len(migrations)
    current = read_schema_version(conn, path)  # cheap check without a write lock
    if current == target:
        return current
    _check_not_newer(current, target, path)
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = read_schema_version(conn, path)  # another process may have migrated meanwhile
        _check_not_newer(current, target, path)
        for step in migrations[current:]:
            step(conn)
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (str(target),),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return target


def _check_not_newer(current: int, target: int, path: str) -> None:
    if current > target:
        raise SchemaVersionError(
            f"store {path!r} has schema version {current}, but this costeer_lab understands "
            f"versions up to {target}; upgrade costeer_lab (pip install -U costeer-lab) "
            "to open it"
        )
