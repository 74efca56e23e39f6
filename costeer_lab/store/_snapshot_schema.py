"""Schema of store snapshots: an undo log kept by triggers, and the SQL that reads through it.

How it works (design and costs are argued in :mod:`costeer_lab.store._snapshots`):

* ``snapshots(epoch, name, parent, created_at)`` names marks; ``snapshot_clock(epoch)`` is the
  epoch of the newest snapshot ever taken (it never goes down, so an epoch is never reused).
* Each versioned table ``T`` (:data:`VERSIONED`) has a shadow table ``snap_T`` with the same
  columns plus ``tag`` and ``existed``. While at least one snapshot exists, a trigger on ``T``
  writes the row's *pre-image* (``existed = 1`` with the old columns; ``existed = 0`` for a row
  that did not exist yet) into ``snap_T``, tagged with the clock, the first time a key changes
  after each snapshot (a unique ``(key, tag)`` index makes later changes of the key no-ops).
* The triggers exist only while a snapshot does (:func:`arm_sqlite_triggers`,
  :func:`arm_postgres_triggers`): the first snapshot creates (SQLite) or enables (PostgreSQL)
  them and dropping the last one removes / disables them, **in the transaction that writes the
  snapshot row**, under the store's write lock, so no write can fall between the mark and the
  first logged change. A store without snapshots writes at full speed (an empty-table check
  per row cost about 40 % of an edge insert). PostgreSQL disables rather than drops: ``ALTER
  TABLE … ENABLE/DISABLE TRIGGER`` takes a ``SHARE ROW EXCLUSIVE`` lock, which readers do not
  wait for, where ``DROP TRIGGER`` would wait for (and block) every reader of the table.
* The state as of snapshot ``e`` is: every current row whose key has no shadow row tagged
  ``>= e``, plus for every key that has, the pre-image of its earliest such shadow row (when it
  existed). :func:`as_of_sql` writes that as one ``SELECT``.

The embedding cache is not versioned: it is content-addressed (a vector per embedder and text
hash), so an entry added after a snapshot is right in every version. ``meta`` is not versioned
(store-level settings and persisted-index bookkeeping).

A later migration that adds a column to a versioned table must call the install function again
(it adds the column to the shadow table and recreates the triggers).

Example:
    >>> import sqlite3
    >>> from costeer_lab.store._migrations import migrate
    >>> conn = sqlite3.connect(":memory:", isolation_level=None)
    >>> migrate(conn, ":memory:")
    6
    >>> sorted(r[0] for r in conn.execute(
    ...     "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'snap_*'"))
    ['snap_collections', 'snap_edges', 'snap_nodes', 'snap_records', 'snap_vectors']
    >>> sqlite_triggers_armed(conn)  # no snapshot yet: no trigger
    False
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "INTERNED",
    "RESTORED",
    "VERSIONED",
    "arm_postgres_triggers",
    "arm_sqlite_triggers",
    "as_of_sql",
    "install_postgres_snapshots",
    "install_sqlite_snapshots",
    "key_match",
    "sqlite_triggers_armed",
]

#: Versioned tables and their key columns.
VERSIONED: dict[str, tuple[str, ...]] = {
    "nodes": ("seq",),
    "edges": ("src", "dst", "kind"),
    "vectors": ("collection", "item_id"),
    "records": ("kind", "key"),
    "collections": ("name",),
}
#: Key columns holding the number of an interned id (``_interned``): a diff names their text.
INTERNED: dict[str, tuple[str, ...]] = {"nodes": ("seq",), "edges": ("src", "dst")}
#: Tables a rollback restores (collection versions only ever go up: a rollback bumps them).
RESTORED = ("nodes", "edges", "vectors", "records")

#: Schema step "each vector stored once" (SQLite version 3, PostgreSQL version 3): a vector
#: collection row may carry the sha256 of the text it embeds, and the embedding cache looks
#: there before its own table, so a vector kept in a collection is not cached a second time.
#: Existing knowledge-graph rows (ids ``<kind>:<sha256 of the text>``) whose cached vector is
#: the same bytes get their hash, and those cache rows are dropped. Run before (re)installing
#: the snapshot triggers, so the backfill is not logged as a change.
VECTORS_ONCE_SQL: tuple[str, ...] = (
    "ALTER TABLE vectors ADD COLUMN text_sha256 TEXT",
    "CREATE INDEX vectors_text ON vectors (text_sha256) WHERE text_sha256 IS NOT NULL",
    "UPDATE vectors SET text_sha256 = substr(item_id, length(collection) - 1) "
    "WHERE collection LIKE 'kg:%' AND item_id = substr(collection, 4) || ':' "
    "|| substr(item_id, length(collection) - 1) AND EXISTS (SELECT 1 FROM embedding_cache c "
    "WHERE c.embedder_id = vectors.embedder_id "
    "AND c.text_sha256 = substr(vectors.item_id, length(vectors.collection) - 1) "
    "AND c.vector = vectors.vector)",
    "DELETE FROM embedding_cache WHERE EXISTS (SELECT 1 FROM vectors v WHERE "
    "v.text_sha256 = embedding_cache.text_sha256 AND v.embedder_id = embedding_cache.embedder_id)",
)

_SQLITE_BOOK = """
CREATE TABLE IF NOT EXISTS snapshots (
    epoch      INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    parent     TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshot_clock (epoch INTEGER NOT NULL);
INSERT INTO snapshot_clock (epoch) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM snapshot_clock)
"""

_PG_BOOK = """
CREATE TABLE IF NOT EXISTS snapshots (
    epoch      bigint PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    parent     text,
    created_at double precision NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshot_clock (epoch bigint NOT NULL);
INSERT INTO snapshot_clock (epoch) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM snapshot_clock)
"""


def key_match(keys: tuple[str, ...], left: str, right: str) -> str:
    """``left.k = right.k AND …`` over the key columns.

    Example:
        >>> key_match(("kind", "key"), "h", "t")
        'h.kind = t.kind AND h.key = t.key'
    """
    return " AND ".join(f"{left}.{k} = {right}.{k}" for k in keys)


def as_of_sql(
    table: str, columns: list[str], epoch: int, prefix: str = "", keys_in: str | None = None
) -> str:
    """One ``SELECT`` of ``table`` (all ``columns``) as it was at snapshot ``epoch``.

    ``prefix`` qualifies the tables read (``main.`` in SQLite, ``"schema".`` in PostgreSQL), so
    the statement can define a temporary view of the same name. ``keys_in``, a subquery of key
    tuples, restricts both halves to those keys (a diff reads only what changed); its
    parameters then appear twice.

    Example:
        >>> sql = as_of_sql("collections", ["name", "version"], 3)
        >>> print(sql)  # doctest: +NORMALIZE_WHITESPACE
        SELECT t.name, t.version FROM collections t WHERE NOT EXISTS (SELECT 1 FROM
        snap_collections h WHERE h.name = t.name AND h.tag >= 3) UNION ALL SELECT h.name,
        h.version FROM snap_collections h WHERE h.existed = 1 AND h.tag = (SELECT MIN(h2.tag)
        FROM snap_collections h2 WHERE h2.name = h.name AND h2.tag >= 3)
    """
    keys = VERSIONED[table]
    epoch = int(epoch)
    shadow = f"{prefix}snap_{table}"
    live = ", ".join(f"t.{c}" for c in columns)
    old = ", ".join(f"h.{c}" for c in columns)

    def only(alias: str) -> str:
        return (
            ""
            if keys_in is None
            else f" AND ({', '.join(f'{alias}.{k}' for k in keys)}) IN ({keys_in})"
        )

    return (
        f"SELECT {live} FROM {prefix}{table} t WHERE NOT EXISTS (SELECT 1 FROM {shadow} h "
        f"WHERE {key_match(keys, 'h', 't')} AND h.tag >= {epoch}){only('t')} "
        f"UNION ALL SELECT {old} FROM {shadow} h WHERE h.existed = 1{only('h')} AND h.tag = "
        f"(SELECT MIN(h2.tag) FROM {shadow} h2 WHERE {key_match(keys, 'h2', 'h')} "
        f"AND h2.tag >= {epoch})"
    )


# -- SQLite ---------------------------------------------------------------------------------
def sqlite_columns(conn: sqlite3.Connection, table: str, schema: str = "main") -> list[str]:
    """Column names of a table in declaration order."""
    return [str(r[1]) for r in conn.execute(f"PRAGMA {schema}.table_info({table})")]


def install_sqlite_snapshots(conn: sqlite3.Connection) -> None:
    """Create (or bring up to date) the snapshot tables and shadow tables; the triggers exist
    afterwards exactly when a snapshot does (recreated, so they list every column).

    Runs inside the caller's write transaction (a migration's ``BEGIN IMMEDIATE``)."""
    for statement in _SQLITE_BOOK.split(";"):
        conn.execute(statement)
    for table, keys in VERSIONED.items():
        cols = sqlite_columns(conn, table)
        shadow = f"snap_{table}"
        if not sqlite_columns(conn, shadow):
            conn.execute(
                f"CREATE TABLE {shadow} AS SELECT 0 AS tag, 0 AS existed, * FROM {table} WHERE 0"
            )
            conn.execute(f"CREATE UNIQUE INDEX {shadow}_key ON {shadow} ({', '.join(keys)}, tag)")
            conn.execute(f"CREATE INDEX {shadow}_tag ON {shadow} (tag)")
        for col in sorted(set(cols) - set(sqlite_columns(conn, shadow))):
            conn.execute(f"ALTER TABLE {shadow} ADD COLUMN {col}")
    arm_sqlite_triggers(
        conn, conn.execute("SELECT 1 FROM snapshots LIMIT 1").fetchone() is not None
    )


_EVENTS = (("insert", "NEW"), ("update", "OLD"), ("delete", "OLD"))


def sqlite_triggers_armed(conn: sqlite3.Connection) -> bool:
    """Whether the undo-log triggers exist (they should exactly when a snapshot does)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'snap_nodes_insert'"
    ).fetchone()
    return row is not None


def arm_sqlite_triggers(conn: sqlite3.Connection, on: bool) -> None:
    """Create (``on``) or drop the undo-log triggers of every versioned table.

    Call inside the write transaction that inserts the first snapshot row (``on``) or deletes
    the last one: DDL is transactional in SQLite, and the write lock keeps every other writer
    out until the commit. Three triggers per table log pre-images. ``NOT EXISTS`` rather than
    ``INSERT OR IGNORE``: the conflict policy of the outer statement (an upsert's ``ABORT``)
    would override the latter.
    """
    clock = "(SELECT epoch FROM snapshot_clock)"
    for table, keys in VERSIONED.items():
        shadow = f"snap_{table}"
        cols = sqlite_columns(conn, table)
        for event, row in _EVENTS:
            conn.execute(f"DROP TRIGGER IF EXISTS {shadow}_{event}")
            if not on:
                continue
            logged = keys if event == "insert" else tuple(cols)
            values = ", ".join(f"{row}.{c}" for c in logged)
            fresh = " AND ".join(f"h.{k} = {row}.{k}" for k in keys)
            conn.execute(
                f"CREATE TRIGGER {shadow}_{event} AFTER {event.upper()} ON {table} BEGIN "
                f"INSERT INTO {shadow} (tag, existed, {', '.join(logged)}) "
                f"SELECT {clock}, {int(event != 'insert')}, {values} WHERE NOT EXISTS "
                f"(SELECT 1 FROM {shadow} h WHERE {fresh} AND h.tag = {clock}); END"
            )


# -- PostgreSQL -----------------------------------------------------------------------------
def postgres_columns(conn: psycopg.Connection[tuple[object, ...]], table: str) -> list[str]:
    """Column names of a table of the current schema in declaration order."""
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = "
        "current_schema() AND table_name = %s ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [str(r[0]) for r in rows]


def install_postgres_snapshots(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Create (or bring up to date) the snapshot tables, shadow tables and triggers; the
    triggers are enabled afterwards exactly when a snapshot exists.

    ``conn``'s ``search_path`` starts at the store's schema (as during a migration), inside a
    transaction that holds the store's write lock (so no snapshot is taken or dropped between
    reading whether one exists and setting the triggers).
    """
    for statement in _PG_BOOK.split(";"):
        conn.execute(statement)
    schema = str(conn.execute("SELECT current_schema()").fetchone()[0])  # type: ignore[index]
    prefix = f'"{schema}".'
    for table, keys in VERSIONED.items():
        cols = postgres_columns(conn, table)
        shadow = f"snap_{table}"
        if not postgres_columns(conn, shadow):
            conn.execute(
                f"CREATE TABLE {shadow} AS SELECT 0::bigint AS tag, 0::smallint AS existed, * "
                f"FROM {table} WITH NO DATA"
            )
            conn.execute(f"CREATE UNIQUE INDEX {shadow}_key ON {shadow} ({', '.join(keys)}, tag)")
            conn.execute(f"CREATE INDEX {shadow}_tag ON {shadow} (tag)")
        missing = set(cols) - set(postgres_columns(conn, shadow))
        for col in sorted(missing):
            kind = conn.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = %s::regclass AND attname = %s",
                (f"{prefix}{table}", col),
            ).fetchone()[0]  # type: ignore[index]
            conn.execute(f"ALTER TABLE {shadow} ADD COLUMN {col} {kind}")
        _postgres_trigger(conn, prefix, table, keys, cols)
    armed = conn.execute(f"SELECT 1 FROM {prefix}snapshots LIMIT 1").fetchone() is not None
    arm_postgres_triggers(conn, prefix, armed)


def arm_postgres_triggers(
    conn: psycopg.Connection[tuple[object, ...]], prefix: str, on: bool
) -> None:
    """Enable (``on``) or disable the undo-log trigger of every versioned table.

    Call inside the transaction, holding the store's advisory write lock, that inserts the
    first snapshot row (``on``) or deletes the last one: the change commits with the row, and
    every writer of the store waits for that lock before its first write, so none can write
    unlogged after the mark (several processes may share the store). ``prefix`` qualifies the
    tables (``"schema".``).
    """
    state = "ENABLE" if on else "DISABLE"
    for table in VERSIONED:
        conn.execute(f"ALTER TABLE {prefix}{table} {state} TRIGGER snap_log")


def _postgres_trigger(
    conn: psycopg.Connection[tuple[object, ...]],
    prefix: str,
    table: str,
    keys: tuple[str, ...],
    cols: list[str],
) -> None:
    shadow = f"{prefix}snap_{table}"
    key_cols = ", ".join(keys)
    new_keys = ", ".join(f"NEW.{k}" for k in keys)
    all_cols = ", ".join(cols)
    old_cols = ", ".join(f"OLD.{c}" for c in cols)
    conn.execute(
        f"CREATE OR REPLACE FUNCTION {prefix}snap_log_{table}() RETURNS trigger "
        "LANGUAGE plpgsql AS $body$ DECLARE e bigint; BEGIN "
        f"SELECT epoch INTO e FROM {prefix}snapshot_clock; "
        "IF TG_OP = 'INSERT' THEN "
        f"INSERT INTO {shadow} (tag, existed, {key_cols}) VALUES (e, 0, {new_keys}) "
        "ON CONFLICT DO NOTHING; ELSE "
        f"INSERT INTO {shadow} (tag, existed, {all_cols}) VALUES (e, 1, {old_cols}) "
        "ON CONFLICT DO NOTHING; END IF; RETURN NULL; END $body$"
    )
    conn.execute(f"DROP TRIGGER IF EXISTS snap_log ON {prefix}{table}")
    conn.execute(
        f"CREATE TRIGGER snap_log AFTER INSERT OR UPDATE OR DELETE ON {prefix}{table} "
        f"FOR EACH ROW EXECUTE FUNCTION {prefix}snap_log_{table}()"
    )
