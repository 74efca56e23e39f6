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
