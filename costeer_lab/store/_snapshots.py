"""Named snapshots of a store: snapshot, read as of one, diff, roll back, branch.

Design (both backends; the schema is in :mod:`costeer_lab.store._snapshot_schema`): the tables
keep only the current rows, and triggers keep an **undo log** — the pre-image of each row the
first time its key changes after each snapshot. Chosen over the alternatives because it costs
nothing where nothing changes:

* ``snapshot(name)`` inserts one row and bumps a clock: **O(1)**, whatever the store's size (a
  file copy of a 1 GB store is O(size); versioning every row would make every read filter
  versions and every upsert write a new row).
* A write after a snapshot costs one extra row the first time its key changes (later changes of
  the key until the next snapshot cost an index probe); with no snapshot there is no trigger
  at all (the first snapshot installs them, dropping the last removes them, each in the
  transaction of the snapshot row), so a store that never snapshots writes at full speed.
* ``at_snapshot(name)`` opens a second connection whose temporary views, named like the
  tables, show every row as of the snapshot (current rows not touched since, plus pre-images
  of those that were). All the store's read code runs unchanged on it, and it refuses writes.
  Reads cost O(rows + changes since the snapshot); opening costs O(1).
* ``rollback(name)`` restores the pre-images, deletes what was added, drops later snapshots
  and their log, in **one transaction**: O(rows changed since the snapshot). Collection
  versions are bumped, never restored, so an index built after the snapshot is seen as stale.
* ``diff(a, b)`` reads only the keys logged between the two marks: O(changed rows).
* ``branch(snapshot, target)`` seeds a new, independent store (another SQLite file, or another
  PostgreSQL database or ``?schema=``) with the state of the snapshot. It is the one operation
  that copies: O(rows at the snapshot). An O(1) branch would need a copy-on-write overlay on
  every read path (each read a union of a base and a delta, with tombstones), slowing every
  query of every store for a rare operation; a branch is cheap to take relative to the
  experiment that writes on it, and after it the two lines never touch each other's rows.

The embedding cache and ``meta`` are not versioned (content-addressed / store settings). A view
is stable while its snapshot exists; rolling back past it or dropping it changes what it shows.

Example:
    >>> from costeer_lab.store import get_store
    >>> store = get_store(":memory:")
    >>> store.put_record("note", "a", 1)
    >>> _ = store.snapshot("before")
    >>> store.put_record("note", "b", 2)
    >>> store.diff("before").records("note").added
    (('b',),)
    >>> store.rollback("before")
    []
    >>> store.count_records("note")
    1
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from costeer_lab._redact import redact_url
from costeer_lab.errors import InvalidInputError, StoreError, UnknownNameError, did_you_mean
from costeer_lab.store._base import BaseStore
from costeer_lab.store._codec import check_str
from costeer_lab.store._snapshot_schema import (
    INTERNED,
    RESTORED,
    VERSIONED,
    as_of_sql,
    key_match,
)
from costeer_lab.store._types import Snapshot, StoreDiff, TableDiff

__all__ = ["SnapshotMixin"]

#: Columns a diff does not compare (bookkeeping, not content).
#: ``text_sha256`` (vectors) says which text a vector embeds for the embedding cache.
_NOT_COMPARED = frozenset({"seq", "created_at", "updated_at", "text_sha256"})
_COPY_PAGE = 2000
T = TypeVar("T")


class SnapshotMixin(BaseStore):
    """Snapshot methods over backend hooks (``_snap_*``); mixed into both store classes."""

    #: SQL placeholder of the backend (``?`` or ``%s``).
    _snap_p = "?"
    #: What lets an ``INSERT`` give ``seq`` explicitly (PostgreSQL identity columns).
    _snap_overriding = ""
    _snap_cols: dict[str, list[str]] | None = None

    # -- backend hooks -----------------------------------------------------------------------
    def _snap_rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        raise NotImplementedError

    def _snap_write(self) -> AbstractContextManager[Any]:
        """A write scope holding the store's write lock; yields the connection."""
        raise NotImplementedError

    def _snap_columns(self, table: str) -> list[str]:
        raise NotImplementedError

    def _snap_prefix(self) -> str:
        """How the live tables are qualified (so a view can be named like its table)."""
        raise NotImplementedError

    def _snap_text(self, column: str) -> str:
        """An expression of ``column`` that compares and hashes in Python."""
        return column

    def _snap_view(self, name: str, epoch: int) -> BaseStore:
        raise NotImplementedError

    def _snap_arm(self, conn: Any, on: bool) -> None:
        """Install (``on``) or remove the undo-log triggers, inside the write scope ``conn``."""
        raise NotImplementedError

    def _snap_where(self) -> str:
        return repr(redact_url(self.url))

    # -- helpers -----------------------------------------------------------------------------
    def _columns(self, table: str) -> list[str]:
        if self._snap_cols is None:
            self._snap_cols = {}
        if table not in self._snap_cols:
            self._snap_cols[table] = self._snap_columns(table)
        return self._snap_cols[table]

    def _epoch(self, name: str) -> int:
        check_str(name, "snapshot name")
        p = self._snap_p
        rows = self._snap_rows(f"SELECT epoch FROM snapshots WHERE name = {p}", (name,))
        if rows:
            return int(rows[0][0])
        known = [s.name for s in self.snapshots()]
        listed = did_you_mean(name, known) if known else "it has no snapshots"
        raise UnknownNameError(
            f"no snapshot named {name!r} in store {self._snap_where()}; {listed}"
        )

    # -- public API --------------------------------------------------------------------------
    def snapshot(self, name: str) -> Snapshot:
        """Mark the current state under ``name``: one row, O(1) in the store's size.

        Raises:
            InvalidInputError: ``name`` is empty or a snapshot of that name exists.
            StoreError: the store is read-only (a snapshot view among others).
        """
        check_str(name, "snapshot name")
        if not name.strip():
            raise InvalidInputError("a snapshot name must not be empty")
        p = self._snap_p
        now = time.time()
        with self._snap_write() as conn:
            taken = conn.execute(
                f"SELECT epoch, created_at FROM snapshots WHERE name = {p}", (name,)
            ).fetchall()
            if taken:
                raise InvalidInputError(
                    f"snapshot {name!r} already exists in store {self._snap_where()} (epoch "
                    f"{taken[0][0]}); choose another name or drop_snapshot({name!r}) first"
                )
            conn.execute("UPDATE snapshot_clock SET epoch = epoch + 1")
            epoch = int(conn.execute("SELECT epoch FROM snapshot_clock").fetchone()[0])
            last = conn.execute(
                "SELECT name FROM snapshots ORDER BY epoch DESC LIMIT 1"
            ).fetchall()
            parent = str(last[0][0]) if last else None
            if not last:  # the first snapshot: from now on every change is logged
                self._snap_arm(conn, True)
            conn.execute(
                f"INSERT INTO snapshots (epoch, name, parent, created_at) VALUES ({p}, {p}, {p}, "
                f"{p})",
                (epoch, name, parent, now),
            )
        return Snapshot(name, epoch, parent, now)

    def snapshots(self) -> list[Snapshot]:
        """The store's snapshots, oldest first."""
        rows = self._snap_rows("SELECT name, epoch, parent, created_at FROM snapshots ORDER BY 2")
        return [Snapshot(str(r[0]), int(r[1]), r[2], float(r[3])) for r in rows]

    def drop_snapshot(self, name: str) -> None:
        """Forget snapshot ``name``; undo entries no remaining snapshot needs are deleted.

        Raises:
            UnknownNameError: no such snapshot (the message lists the known ones).
        """
        epoch = self._epoch(name)
        p = self._snap_p
        with self._snap_write() as conn:
            conn.execute(f"DELETE FROM snapshots WHERE epoch = {p}", (epoch,))
            first = conn.execute("SELECT MIN(epoch) FROM snapshots").fetchone()[0]
            if first is None:  # the last one: nothing needs a log any more
                self._snap_arm(conn, False)
            for table in VERSIONED:
                if first is None:
                    conn.execute(f"DELETE FROM snap_{table}")
                else:  # an entry older than every snapshot serves none of them
                    conn.execute(f"DELETE FROM snap_{table} WHERE tag < {p}", (int(first),))

    def rollback(self, name: str) -> list[str]:
        """Return the store to snapshot ``name``, in one transaction.

        Rows changed since are restored, rows added are deleted, snapshots taken after it are
        dropped (their names are returned, oldest first), and every collection whose vectors
        changed gets a new, higher version. Snapshot ``name`` stays. Cost: O(rows changed since
        the snapshot). Inside ``store.transaction()`` it joins that transaction.

        Raises:
            UnknownNameError: no such snapshot (the message lists the known ones).
            StoreError: the store is read-only, or a statement failed (nothing was changed).
        """
        epoch = self._epoch(name)
        p = self._snap_p
        with self._snap_write() as conn:
            conn.execute(
                "UPDATE collections SET version = version + 1 WHERE name IN (SELECT collection "
                f"FROM snap_vectors WHERE tag >= {p})",
                (epoch,),
            )
            for table in RESTORED:
                keys = ", ".join(VERSIONED[table])
                cols = ", ".join(self._columns(table))
                conn.execute(
                    f"DELETE FROM {table} WHERE ({keys}) IN "
                    f"(SELECT {keys} FROM snap_{table} WHERE tag >= {p})",
                    (epoch,),
                )
                conn.execute(
                    f"INSERT INTO {table} ({cols}){self._snap_overriding} SELECT {cols} FROM "
                    f"snap_{table} h WHERE h.existed = 1 AND h.tag = (SELECT MIN(h2.tag) FROM "
                    f"snap_{table} h2 WHERE {key_match(VERSIONED[table], 'h2', 'h')} AND "
                    f"h2.tag >= {p})",
                    (epoch,),
                )
            for table in VERSIONED:  # the log of what was undone (and of the undoing itself)
                conn.execute(f"DELETE FROM snap_{table} WHERE tag >= {p}", (epoch,))
            later = conn.execute(
                f"SELECT name FROM snapshots WHERE epoch > {p} ORDER BY epoch", (epoch,)
            ).fetchall()
            conn.execute(f"DELETE FROM snapshots WHERE epoch > {p}", (epoch,))
        return [str(r[0]) for r in later]

    def diff(self, a: str, b: str | None = None) -> StoreDiff:
        """What changed from snapshot ``a`` to snapshot ``b`` (``None``: the store now).

        Reads only the keys logged between the two marks: O(changed rows). ``b`` may be older
        than ``a`` (the diff then runs backwards).

        Raises:
            UnknownNameError: no such snapshot (the message lists the known ones).
        """
        ea = self._epoch(a)
        eb = None if b is None else self._epoch(b)
        lo = ea if eb is None else min(ea, eb)
        hi = None if eb is None else max(ea, eb)
        return StoreDiff(a, b, {t: self._diff_table(t, ea, eb, lo, hi) for t in RESTORED})

    def _diff_table(
        self, table: str, ea: int, eb: int | None, lo: int, hi: int | None
    ) -> TableDiff:
        keys = VERSIONED[table]
        cols = self._columns(table)
        compared = [c for c in cols if c not in keys and c not in _NOT_COMPARED]
        p = self._snap_p
        prefix = self._snap_prefix()
        window = f"tag >= {p}" + ("" if hi is None else f" AND tag < {p}")
        bounds: tuple[int, ...] = (lo,) if hi is None else (lo, hi)
        changed = f"SELECT {', '.join(keys)} FROM {prefix}snap_{table} WHERE {window}"
        texts = [self._snap_text(f"x.{c}") for c in compared]
        named = [  # a key holding an interned id's number is shown as the id
            f"(SELECT i.id FROM {prefix}ids i WHERE i.seq = x.{k})"
            if k in INTERNED.get(table, ())
            else f"x.{k}"
            for k in keys
        ]
        picked = ", ".join([*named, *texts])

        def state(epoch: int | None) -> dict[tuple[str, ...], tuple[Any, ...]]:
            if epoch is None:  # now: the live rows of the changed keys
                source = (
                    f"(SELECT * FROM {prefix}{table} WHERE ({', '.join(keys)}) IN ({changed}))"
                )
                params = bounds
            else:
                source = f"({as_of_sql(table, cols, epoch, prefix, keys_in=changed)})"
                params = bounds + bounds
            rows = self._snap_rows(f"SELECT {picked} FROM {source} x", params)
            n = len(keys)
            return {tuple(str(v) for v in r[:n]): tuple(_plain(v) for v in r[n:]) for r in rows}

        before, after = state(ea), state(eb)
        both = after.keys() & before.keys()
        return TableDiff(
            added=tuple(sorted(after.keys() - before.keys())),
            changed=tuple(sorted(k for k in both if after[k] != before[k])),
            removed=tuple(sorted(before.keys() - after.keys())),
        )

    def at_snapshot(self, name: str) -> BaseStore:
        """A new, read-only store object showing this store as of snapshot ``name``.

        Every read method works on it (searches scan exactly); every write raises
        :class:`StoreError`. Close it when done (it has its own connection).

        Raises:
            UnknownNameError: no such snapshot (the message lists the known ones).
            StoreError: the store is in memory (a second connection cannot see it).
        """
        return self._snap_view(name, self._epoch(name))

    def branch(self, snapshot: str, target: BaseStore) -> BaseStore:
        """Fill the empty store ``target`` with the state of ``snapshot``; returns ``target``.

        ``target`` is a new, independent store (another SQLite file, a PostgreSQL database or
        ``?schema=``; open it with :func:`~costeer_lab.store.get_store`; it stays the
        caller's). It records where it came from in its meta key ``branched_from`` and starts
        with a snapshot of the same name, so ``target.diff(snapshot)`` shows what the branch
        added. Cost: O(rows at the snapshot), one transaction of the target (see the module
        docstring for why a branch copies).

        Raises:
            UnknownNameError: no such snapshot.
            InvalidInputError: ``target`` already holds data.
        """
        view = self.at_snapshot(snapshot)
        try:
            _copy(view, target)
        finally:
            view.close()
        target.set_meta("branched_from", f"{redact_url(self.url)}#{snapshot}")
        target.snapshot(snapshot)
        return target


def _plain(value: Any) -> Any:
    return bytes(value) if isinstance(value, memoryview) else value


def _copy(src: BaseStore, dest: BaseStore) -> None:
    """Copy every node, edge, record and vector collection of ``src`` into an empty ``dest``."""
    filled = dest.count_nodes() + dest.count_edges() + _count_all_records(dest)
    if filled:
        raise InvalidInputError(
            f"cannot branch into {redact_url(getattr(dest, 'url', str(dest)))!r}: it already "
            "holds data; branch into a new file, database or ?schema="
        )
    with dest.transaction():
        for nodes in _chunks(src.iter_nodes()):
            dest.put_nodes(nodes)
        for edges in _chunks(src.iter_edges()):
            dest.put_edges(edges)
        for kind in _record_kinds(src):
            for records in _chunks(src.iter_records(kind)):
                dest.put_records(kind, records)
        for collection in _collections(src):
            for ids, matrix, embedder in src.iter_vectors(collection):  # a page at a time
                dest.put_vectors(collection, embedder, ids, matrix)


def _chunks(items: Iterator[T]) -> Iterator[list[T]]:
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == _COPY_PAGE:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _count_all_records(store: BaseStore) -> int:
    return sum(store.count_records(kind) for kind in _record_kinds(store))


def _record_kinds(store: BaseStore) -> list[str]:
    if not isinstance(store, SnapshotMixin):
        raise StoreError(f"cannot list the record kinds of {type(store).__name__}")
    return [str(r[0]) for r in store._snap_rows("SELECT DISTINCT kind FROM records ORDER BY 1")]


def _collections(store: BaseStore) -> list[str]:
    if not isinstance(store, SnapshotMixin):
        raise StoreError(f"cannot list the collections of {type(store).__name__}")
    return [str(r[0]) for r in store._snap_rows("SELECT name FROM collections ORDER BY 1")]
