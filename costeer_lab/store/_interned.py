"""Interned ids (schema version 6 of both backends): the SQL that moves a store to them.

Node ids are 64-character sha256 digests (``kind:<hex>``). Keyed by that text, every new node
and every new edge landed on a random leaf page of each index holding it (``nodes.id``, the
edges' ``(src, dst, kind)`` and ``dst`` indexes): a batch of writes dirtied about as many pages
as it had rows, each written to the WAL at commit and again at the checkpoint, and the cost
grew with the store (``benchmarks/key_layout.py`` measured it). Since version 6:

* ``ids (seq, id)`` holds each node id and edge endpoint once, numbered in the order first
  seen; it is the only index keyed by the text. An entry is never deleted or changed (deleting
  a node leaves its few bytes here), so it needs no snapshot log and a snapshot view reads it
  as it is.
* ``nodes.seq`` is the node's number in ``ids`` (the node row has no text id); ``edges.src`` and
  ``edges.dst`` are the numbers of the endpoints. A new node or edge mostly gets the highest
  numbers so far, so its rows append to their indexes.

The store's methods still take and return text ids; each read looks the numbers up in
``ids`` by its primary key. :func:`interned_ids_sql` rebuilds a version-5 store's ``nodes``,
``edges`` and their snapshot logs (``snap_nodes``, ``snap_edges``) in the new layout, keeping
every row, every edge's ``seq`` and every logged pre-image, in the one transaction of the
migration (a 100k-task SQLite store: 16.6 s, 41 MB of memory; the old tables' pages stay in the
file as free pages that later writes reuse, and ``VACUUM`` gives them back to the disk).

Example:
    >>> import sqlite3
    >>> from costeer_lab.store._migrations import migrate
    >>> conn = sqlite3.connect(":memory:", isolation_level=None)
    >>> _ = migrate(conn, ":memory:")
    >>> [r[1] for r in conn.execute("PRAGMA table_info(edges)")][:3]
    ['seq', 'src', 'dst']
"""

from __future__ import annotations

from typing import Literal

__all__ = ["interned_ids_sql"]

_SQLITE = {
    "ids": "seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE",
    "nodes": (
        "seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, content TEXT NOT NULL, attrs TEXT NOT NULL,"
        " created_at REAL NOT NULL, updated_at REAL NOT NULL"
    ),
    "edges": (
        "seq INTEGER PRIMARY KEY, src INTEGER NOT NULL, dst INTEGER NOT NULL, kind TEXT NOT NULL,"
        " attrs TEXT NOT NULL, created_at REAL NOT NULL, UNIQUE (src, dst, kind)"
    ),
}
_POSTGRES = {
    "ids": "seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id text NOT NULL UNIQUE",
    "nodes": (
        "seq bigint PRIMARY KEY, kind text NOT NULL, content text NOT NULL, attrs text NOT NULL,"
        " created_at double precision NOT NULL, updated_at double precision NOT NULL"
    ),
    "edges": (
        "seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, src bigint NOT NULL,"
        " dst bigint NOT NULL, kind text NOT NULL, attrs text NOT NULL,"
        " created_at double precision NOT NULL, UNIQUE (src, dst, kind)"
    ),
}
_NODE_COLS = "kind, content, attrs, created_at, updated_at"


def interned_ids_sql(
    dialect: Literal["sqlite", "postgres"], *, shadows: bool = False
) -> tuple[str, ...]:
    """The statements of the version-6 step, in order, for ``dialect``.

    Run the first part (``shadows=False``) with the undo-log triggers removed; it interns every
    id (live rows first, in their order, then those only the snapshot logs name), rebuilds
    ``nodes`` and ``edges`` and sets the old logs aside as ``snap_nodes_v5`` / ``snap_edges_v5``.
    Then install the snapshot tables again (they are created in the new layout) and run the
    second part (``shadows=True``), which moves the old log entries over and drops the old logs.

    Example:
        >>> interned_ids_sql("sqlite")[0]
        'CREATE TABLE ids (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE)'
    """
    if shadows:
        return (
            f"INSERT INTO snap_nodes (tag, existed, seq, {_NODE_COLS}) SELECT h.tag, h.existed, "
            f"i.seq, h.kind, h.content, h.attrs, h.created_at, h.updated_at FROM snap_nodes_v5 h "
            "JOIN ids i ON i.id = h.id",
            "INSERT INTO snap_edges (tag, existed, seq, src, dst, kind, attrs, created_at) "
            "SELECT h.tag, h.existed, h.seq, s.seq, d.seq, h.kind, h.attrs, h.created_at "
            "FROM snap_edges_v5 h JOIN ids s ON s.id = h.src JOIN ids d ON d.id = h.dst",
            "DROP TABLE snap_nodes_v5",
            "DROP TABLE snap_edges_v5",
        )
    pg = dialect == "postgres"
    cols = _POSTGRES if pg else _SQLITE

    def intern(select: str) -> str:
        if pg:
            return f"INSERT INTO ids (id) {select} ON CONFLICT (id) DO NOTHING"
        return f"INSERT OR IGNORE INTO ids (id) {select}"

    ends = (
        "SELECT x FROM (SELECT {o} AS r, 0 AS o, src AS x FROM {t} "
        "UNION ALL SELECT {o}, 1, dst FROM {t}) e ORDER BY r, o"
    )
    log_order = "ctid" if pg else "rowid"
    steps = [
        f"CREATE TABLE ids ({cols['ids']})",
        "INSERT INTO ids (id) SELECT id FROM nodes ORDER BY seq",
        intern(ends.format(o="seq", t="edges")),
        intern(f"SELECT id FROM snap_nodes WHERE id IS NOT NULL ORDER BY tag, {log_order}"),
        intern(ends.format(o="tag", t="snap_edges")),
        f"CREATE TABLE nodes_v6 ({cols['nodes']})",
        f"INSERT INTO nodes_v6 (seq, {_NODE_COLS}) SELECT i.seq, n.kind, n.content, n.attrs, "
        "n.created_at, n.updated_at FROM nodes n JOIN ids i ON i.id = n.id",
        "DROP TABLE nodes",
        "ALTER TABLE nodes_v6 RENAME TO nodes",
        "CREATE INDEX nodes_kind ON nodes (kind, seq)",
        f"CREATE TABLE edges_v6 ({cols['edges']})",
        "INSERT INTO edges_v6 (seq, src, dst, kind, attrs, created_at)"
        + (" OVERRIDING SYSTEM VALUE" if pg else "")
        + " SELECT e.seq, s.seq, d.seq, e.kind, e.attrs, e.created_at FROM edges e "
        "JOIN ids s ON s.id = e.src JOIN ids d ON d.id = e.dst",
        "DROP TABLE edges",
        "ALTER TABLE edges_v6 RENAME TO edges",
        "CREATE INDEX edges_dst ON edges (dst)",
        "CREATE INDEX edges_kind ON edges (kind, seq)",
    ]
    if pg:
        steps += [
            "ALTER INDEX nodes_v6_pkey RENAME TO nodes_pkey",
            "ALTER INDEX edges_v6_pkey RENAME TO edges_pkey",
            "ALTER TABLE edges RENAME CONSTRAINT edges_v6_src_dst_kind_key "
            "TO edges_src_dst_kind_key",
            "ALTER SEQUENCE edges_v6_seq_seq RENAME TO edges_seq_seq",
            "SELECT setval(pg_get_serial_sequence('edges', 'seq'), "
            "COALESCE(MAX(seq), 0) + 1, false) FROM edges",
        ]
    for table in ("snap_nodes", "snap_edges"):
        steps += [
            f"DROP INDEX IF EXISTS {table}_key",
            f"DROP INDEX IF EXISTS {table}_tag",
            f"ALTER TABLE {table} RENAME TO {table}_v5",
        ]
    return tuple(steps)
