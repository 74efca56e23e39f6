"""Connection plumbing of :class:`~costeer_lab.store.PostgresStore`: transactions, locks, errors.

Transactions are explicit (the psycopg connection is in autocommit mode): a write outside
:meth:`PostgresBase.transaction` runs in its own ``BEGIN … COMMIT``, so a write that returned is
committed (``synchronous_commit = on``: on the server's disk). Inside one, each write is a
savepoint (atomic on its own) and nested ``transaction()`` blocks are savepoints too.

Concurrency: every transaction that writes takes one transaction-level advisory lock per store
(``pg_advisory_xact_lock``) before its first write, or earlier when the transaction asks for it
with ``lock_for_update()`` (its reader is about to write against what it reads next, such as a
collection version). Writers of one store therefore commit one at a time, on one machine or
many, like SQLite's ``BEGIN IMMEDIATE``:

* no deadlock between writers (each holds the store lock before any row lock), so a write
  never fails because another process wrote at the same time — it waits;
* ``seq`` (insertion order) follows commit order, so a reader paging by ``seq`` misses nothing;
* a collection version read after ``lock_for_update()`` cannot change before commit, so
  "version before, write, version after" tells an index whether it missed another writer's
  change, and every change gets its own, strictly larger version.

Reads never wait: they see the last committed state (MVCC). Write transactions are short (one
call or one ``with store.transaction()`` block), so the lock is held for milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from costeer_lab.errors import InvalidInputError, StoreError
from costeer_lab.store._relational import RelationalMixin

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresBase"]


class PostgresBase(RelationalMixin):
    """Connection handling and SQL dialect of the PostgreSQL store modules (not used directly)."""

    _p = "%s"
    _json_cast = "::json"
    _text_cast = "::text"
    _greatest = "GREATEST"

    _conn: psycopg.Connection[tuple[Any, ...]] | None
    _depth: int
    _lock_depth: int | None
    _write_key: int
    _where: str

    def _connection(self) -> psycopg.Connection[tuple[Any, ...]]:
        if self._conn is None:
            raise StoreError(f"store {self._where} is closed")
        return self._conn

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn psycopg errors into costeer_lab errors naming the store."""
        import psycopg

        try:
            yield
        except psycopg.DataError as exc:  # e.g. a NUL character, which text cannot hold
            raise InvalidInputError(
                f"store {self._where} refused a value: {type(exc).__name__}: {exc}"
            ) from exc
        except psycopg.Error as exc:
            raise StoreError(f"store {self._where}: {type(exc).__name__}: {exc}") from exc

    def _rows(self, sql: Any, params: Sequence[Any] = (), *, binary: bool = False) -> list[Any]:
        conn = self._connection()
        with self._guard():
            return conn.execute(sql, params, binary=binary).fetchall()

    def _exec(self, sql: Any, params: Sequence[Any] = ()) -> int:
        """Run a statement that returns no rows; returns its row count."""
        conn = self._connection()
        with self._guard():
            return int(conn.execute(sql, params).rowcount)

    def _in(self, column: str) -> str:
        return f"{column} = ANY(%s)"

    def _values(self) -> str:
        return "SELECT unnest(%s::text[])"

    def _array(self, values: list[str]) -> list[str]:
        return values

    def _many(self, conn: psycopg.Connection[tuple[Any, ...]], sql: str, rows: list[Any]) -> None:
        with conn.cursor() as cur:
            cur.executemany(sql, rows)

    def lock_for_update(self) -> None:
        """Inside a transaction, take the store's advisory write lock now (see the module)."""
        if self._depth:
            self._lock_writes()

    def _lock_writes(self) -> None:
        """Hold the store's write lock until the current transaction ends (re-entrant)."""
        if self._lock_depth is not None:
            return
        conn = self._connection()
        with self._guard():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._write_key,))
        self._lock_depth = self._depth

    @contextmanager
    def _write(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """One atomic write holding the store lock: its own transaction, or a savepoint."""
        with self._scope(lock=True):
            self._lock_writes()  # no-op when the scope just took it with BEGIN
            with self._guard():
                yield self._connection()

    def transaction(self) -> AbstractContextManager[None]:
        """Group writes: commit on success, roll back on error; nested blocks are savepoints.

        Example:
            >>> from costeer_lab.store import get_store
            >>> store = get_store(url)  # doctest: +SKIP
            >>> with store.transaction():  # doctest: +SKIP
            ...     store.put_record("run", "r1", {"ok": True})
            ...     store.put_record("run", "r2", {"ok": False})
        """
        return self._scope()

    @contextmanager
    def _scope(self, *, lock: bool = False) -> Iterator[None]:
        conn = self._connection()
        if self.read_only:
            raise StoreError(self._read_only_reason or f"store {self._where} is read-only")
        savepoint = f"sp{self._depth}" if self._depth else None
        try:
            with self._guard():
                if savepoint:
                    conn.execute(f"SAVEPOINT {savepoint}")
                elif lock:  # one round trip: BEGIN and the write lock together
                    conn.execute(f"BEGIN; SELECT pg_advisory_xact_lock({int(self._write_key)})")
                else:
                    conn.execute("BEGIN")
        except BaseException:
            if savepoint is None and not conn.closed:  # BEGIN ran but the lock did not
                self._undo(conn, None)
            raise
        self._depth += 1
        if lock and not savepoint:
            self._lock_depth = self._depth
        try:
            yield
        except BaseException:
            self._depth -= 1
            self._undo(conn, savepoint)
            raise
        self._depth -= 1
        try:
            with self._guard():
                conn.execute(f"RELEASE SAVEPOINT {savepoint}" if savepoint else "COMMIT")
        except BaseException:
            self._undo(conn, savepoint)
            raise
        if savepoint is None:
            self._lock_depth = None  # COMMIT released the advisory lock

    def _undo(self, conn: psycopg.Connection[tuple[Any, ...]], savepoint: str | None) -> None:
        import psycopg

        if self._lock_depth is not None and self._lock_depth > self._depth:
            self._lock_depth = None  # taken inside what is rolled back: take it again if needed
        self._forget_created()
        if self._conn is None or conn.closed:  # closed inside the block: the server rolled back
            return
        try:
            if savepoint:
                conn.execute(f"ROLLBACK TO SAVEPOINT {savepoint}")
                conn.execute(f"RELEASE SAVEPOINT {savepoint}")
            else:
                conn.execute("ROLLBACK")
        except psycopg.Error:  # pragma: no cover - the connection is gone
            pass

    def _forget_created(self) -> None:
        """Hook: a rollback may have undone DDL this object remembers having run."""
