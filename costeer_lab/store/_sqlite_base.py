"""Connection plumbing of :class:`~costeer_lab.store.SQLiteStore`: transactions, errors, paging.

Transactions are explicit (the connection is in autocommit mode): a write outside
:meth:`SQLiteBase.transaction` runs in its own ``BEGIN IMMEDIATE … COMMIT``; inside one, each
write is wrapped in a savepoint so that it is atomic on its own, and nested ``transaction()``
blocks are savepoints too (an exception rolls back only the inner block; the outer block commits
or rolls back everything).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from costeer_lab.errors import StoreError
from costeer_lab.store._codec import dumps_json, id_list
from costeer_lab.store._relational import RelationalMixin
from costeer_lab.store._sqlite_readonly import is_locked, locked_error

__all__ = ["SQLiteBase", "id_list"]

#: Page cache of a connection inside :meth:`SQLiteBase.bulk_writes` (KiB; the default is 2 MiB).
BULK_CACHE_KIB = 32_768
#: WAL pages between automatic checkpoints inside it (the default is 1000: 4 MB).
BULK_CHECKPOINT_PAGES = 32_768


class SQLiteBase(RelationalMixin):
    """Connection handling and SQL dialect of the SQLite store modules (not used directly)."""

    path: str
    _conn: sqlite3.Connection | None
    _depth: int
    _shown: str  # the path as given (messages of a read-only store)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"store {self.path!r} is closed")
        return self._conn

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn ``sqlite3`` errors into :class:`StoreError` naming the store."""
        try:
            yield
        except sqlite3.Error as exc:
            if self.read_only and is_locked(exc):
                raise locked_error(self._shown) from None
            raise StoreError(f"store {self.path!r}: {type(exc).__name__}: {exc}") from exc

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        conn = self._connection()
        with self._guard():
            return conn.execute(sql, params).fetchall()

    def _in(self, column: str) -> str:
        return f"{column} IN (SELECT value FROM json_each(?))"

    def _values(self) -> str:
        return "SELECT value FROM json_each(?) WHERE true"  # ``WHERE``: before an ``ON CONFLICT``

    def _array(self, values: list[str]) -> str:
        return dumps_json(values, what="ids")

    def _many(self, conn: sqlite3.Connection, sql: str, rows: list[Any]) -> None:
        conn.executemany(sql, rows)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One atomic write: its own transaction, or a savepoint inside :meth:`transaction`."""
        with self._scope(), self._guard():
            yield self._connection()

    def transaction(self) -> AbstractContextManager[None]:
        """Group writes: commit on success, roll back on error; nested blocks are savepoints.

        Example:
            >>> from costeer_lab.store import SQLiteStore
            >>> store = SQLiteStore()
            >>> with store.transaction():
            ...     store.put_record("run", "r1", {"ok": True})
            ...     store.put_record("run", "r2", {"ok": False})
            >>> store.count_records("run")
            2
        """
        return self._scope()

    @contextmanager
    def bulk_writes(self) -> Iterator[None]:
        """Inside the block: a page cache of :data:`BULK_CACHE_KIB` and an automatic WAL
        checkpoint every :data:`BULK_CHECKPOINT_PAGES` pages; after it, the previous settings
        and a checkpoint that truncates the WAL when no other connection is reading (else the
        next automatic one copies the rest).

        Large transactions over indexes keyed by random ids (node ids are sha256 digests) touch
        pages all over each index: a bigger cache reads fewer of them again, and rarer
        checkpoints copy a page changed by several transactions once. Durability is unchanged:
        each commit still appends to the WAL before it returns (``synchronous`` is not touched).

        Example:
            >>> from costeer_lab.store import SQLiteStore
            >>> store = SQLiteStore()
            >>> with store.bulk_writes():
            ...     store.put_record("run", "r1", {"ok": True})
            >>> store._connection().execute("PRAGMA cache_size").fetchone()[0]
            -2000
        """
        conn = self._connection()
        if self.read_only:
            yield
            return
        with self._guard():
            before = [
                (name, conn.execute(f"PRAGMA {name}").fetchone()[0])
                for name in ("cache_size", "wal_autocheckpoint")
            ]
            conn.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
            conn.execute(f"PRAGMA wal_autocheckpoint = {BULK_CHECKPOINT_PAGES}")
        try:
            yield
        finally:
            if self._conn is conn:  # not closed inside the block
                with self._guard():
                    for name, value in before:
                        conn.execute(f"PRAGMA {name} = {int(value)}")
                    if not conn.in_transaction:
                        self._truncate_wal(conn)

    @staticmethod
    def _truncate_wal(conn: sqlite3.Connection) -> None:
        """Checkpoint and truncate the WAL without waiting for other connections' readers."""
        timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.OperationalError as exc:  # another writer holds the lock: it can wait
            if not is_locked(exc):
                raise
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")

    @contextmanager
    def _scope(self) -> Iterator[None]:
        conn = self._connection()
        if self.read_only:
            raise StoreError(
                self._read_only_reason
                or f"store {self._shown!r} is opened read-only; it cannot be written"
            )
        savepoint = f"sp{self._depth}" if self._depth else None
        with self._guard():
            conn.execute(f"SAVEPOINT {savepoint}" if savepoint else "BEGIN IMMEDIATE")
        self._depth += 1
        try:
            yield
        except BaseException:
            self._depth -= 1
            self._undo(conn, savepoint)
            raise
        self._depth -= 1
        try:
            with self._guard():
                conn.execute(f"RELEASE {savepoint}" if savepoint else "COMMIT")
        except BaseException:
            self._undo(conn, savepoint)
            raise

    def _undo(self, conn: sqlite3.Connection, savepoint: str | None) -> None:
        if self._conn is None:  # closed inside the block: sqlite already rolled back
            return
        try:
            if savepoint:
                conn.execute(f"ROLLBACK TO {savepoint}")
                conn.execute(f"RELEASE {savepoint}")
            elif conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error:  # pragma: no cover - rollback of a dead transaction
            pass
