"""The default backend: one SQLite file (stdlib ``sqlite3``, WAL journal).

Durability choice: ``journal_mode=WAL`` with ``synchronous=NORMAL`` (the default here). A commit
appends to the WAL with ``write()`` before returning, so a returned write survives a crash or
SIGKILL of the writing *process*; only an operating-system crash or power loss can lose the last
few commits (never corrupt the file). Pass ``synchronous="FULL"`` to fsync on every commit and
survive OS crashes too, at a large cost per small transaction.

Concurrency: several processes may write one file; write transactions start with
``BEGIN IMMEDIATE`` (no read-to-write lock upgrades, hence no deadlock errors) and wait up to
``busy_timeout_s`` for the lock. One ``SQLiteStore`` object belongs to one thread (the
``sqlite3`` default ``check_same_thread=True`` enforces it); open one per thread or process.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from costeer_lab.errors import InvalidInputError, SchemaVersionError, StoreError
from costeer_lab.store._migrations import SCHEMA_VERSION, migrate, read_schema_version
from costeer_lab.store._relational import number_of
from costeer_lab.store._snapshot_schema import VERSIONED, arm_sqlite_triggers, as_of_sql
from costeer_lab.store._snapshots import SnapshotMixin
from costeer_lab.store._sqlite_data import SQLiteDataMixin
from costeer_lab.store._sqlite_readonly import connect_read_only, is_locked, locked_error
from costeer_lab.store._writer import WriterProcess

__all__ = ["SQLiteStore"]

_log = logging.getLogger(__name__)


class SQLiteStore(SQLiteDataMixin, SnapshotMixin):
    """A :class:`~costeer_lab.store.BaseStore` in one SQLite file (or in memory).

    Args:
        path: database file (created if missing; its directory must exist) or ``":memory:"``.
        busy_timeout_s: how long a writer waits for another process's write lock.
        synchronous: ``"NORMAL"`` (durable across process crashes) or ``"FULL"`` (also across
            OS crashes; slower).
        read_only: read an existing file without ever writing into it or creating a file beside
            it (see :mod:`costeer_lab.store._sqlite_readonly`): no migration, every write raises
            :class:`StoreError`, and a writer holding the file locked for ``busy_timeout_s``
            raises :class:`~costeer_lab.errors.StoreLockedError`.

    Raises:
        StoreError: ``path`` is not a SQLite database (or not a costeer_lab store); with
            ``read_only``, a file of an older schema (it needs a read-write open to migrate).
        SchemaVersionError: the file was written by a newer costeer_lab.

    Example:
        >>> from costeer_lab.store import NodeRecord, SQLiteStore
        >>> with SQLiteStore(":memory:") as store:
        ...     store.put_nodes([NodeRecord("n1", "component", "rolling mean")])
        ...     store.get_node("n1").content
        'rolling mean'
    """

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        busy_timeout_s: float = 30.0,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        read_only: bool = False,
    ) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise InvalidInputError(f"synchronous must be 'NORMAL' or 'FULL', got {synchronous!r}")
        if busy_timeout_s < 0:
            raise InvalidInputError(f"busy_timeout_s must be >= 0, got {busy_timeout_s!r}")
        in_memory = str(path) == ":memory:"
        target = ":memory:" if in_memory else str(Path(path).expanduser().absolute())
        self.path = target
        self.url = f"sqlite:///{target}"
        self._depth = 0
        self._shown = str(path)
        self._synchronous = synchronous
        self._busy_timeout_s = busy_timeout_s
        if not in_memory and Path(target).is_dir():
            raise StoreError(f"cannot open store {target!r}: it is a directory")
        if read_only:
            self._open_read_only(target, busy_timeout_s)
            return
        try:
            conn = sqlite3.connect(target, timeout=busy_timeout_s, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {target!r}: {exc}") from exc
        try:
            self._schema_version = _retry_busy(
                lambda: self._setup(conn, target, busy_timeout_s, synchronous), busy_timeout_s
            )
        except sqlite3.DatabaseError as exc:
            conn.close()
            hint = " (is it a SQLite database?)" if "not a database" in str(exc) else ""
            raise StoreError(f"cannot open store {target!r}: {exc}{hint}") from exc
        except BaseException:
            conn.close()
            raise
        self._conn: sqlite3.Connection | None = conn

    def _open_read_only(self, target: str, timeout_s: float) -> None:
        if target == ":memory:" or not Path(target).is_file():
            raise StoreError(f"cannot open store {self._shown!r} read-only: no such file")
        conn = connect_read_only(Path(target), timeout_s=timeout_s, shown=self._shown)
        try:
            version = read_schema_version(conn, target)
        except sqlite3.Error as exc:
            conn.close()
            if is_locked(exc):
                raise locked_error(self._shown) from None
            raise StoreError(f"cannot read store {self._shown!r}: {exc}") from None
        except BaseException:
            conn.close()
            raise
        if version != SCHEMA_VERSION:
            conn.close()
            if version > SCHEMA_VERSION:
                raise SchemaVersionError(
                    f"store {self._shown!r} has schema version {version}; this costeer_lab "
                    f"reads versions up to {SCHEMA_VERSION}"
                )
            raise StoreError(
                f"store {self._shown!r} has schema version {version}, older than "
                f"{SCHEMA_VERSION}; open it read-write once (e.g. get_store(path)) to migrate it"
            )
        self.read_only = True
        self._schema_version = version
        self._conn = conn

    @staticmethod
    def _setup(conn: sqlite3.Connection, path: str, timeout_s: float, sync: str) -> int:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if path != ":memory:" and str(mode).lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {sync}")
        return migrate(conn, path)

    def __repr__(self) -> str:
        state = "closed" if self._conn is None else f"schema v{self._schema_version}"
        return f"SQLiteStore({self.path!r}, {state})"

    def writer_process(self) -> WriterProcess | None:
        """A :class:`~costeer_lab.store._writer.WriterProcess` on this file, with this store's
        durability and lock timeout (``None`` in memory or read-only: no other process can
        write there; ``None`` too, with a warning, when no process can be started)."""
        if self.path == ":memory:" or self.read_only:
            return None
        self._connection()  # raises once closed
        try:
            return WriterProcess(
                self.path, synchronous=self._synchronous, busy_timeout_s=self._busy_timeout_s
            )
        except OSError as exc:  # no interpreter to start (an embedded Python), no processes
            _log.warning("no writer process for store %r (%s): writing here", self._shown, exc)
            return None

    def _delete_edge_keys(self, conn: sqlite3.Connection, keys: list[tuple[str, ...]]) -> int:
        cur = conn.executemany(
            f"DELETE FROM edges WHERE src = {number_of('?')} AND dst = {number_of('?')} "
            "AND kind = ?",
            keys,
        )
        return int(cur.rowcount)

    # -- snapshot hooks (``_snapshots.py``) ------------------------------------------------------
    def _snap_columns(self, table: str) -> list[str]:
        return [str(r[1]) for r in self._rows(f"PRAGMA main.table_info({table})")]

    def _snap_arm(self, conn: Any, on: bool) -> None:
        arm_sqlite_triggers(conn, on)

    def _snap_prefix(self) -> str:
        return "main."

    def _snap_where(self) -> str:
        return repr(self._shown)

    def _snap_view(self, name: str, epoch: int) -> SQLiteStore:
        if self.path == ":memory:":
            raise StoreError(
                f"snapshot {name!r} of an in-memory store cannot be opened as a view (a second "
                "connection cannot see the database); use a store file"
            )
        # a read-only store's view is read-only too: it never writes into (nor beside) the file
        view = SQLiteStore(self.path, read_only=self.read_only)
        try:
            conn = view._connection()
            with view._guard():
                for table in VERSIONED:
                    sql = as_of_sql(table, view._snap_columns(table), epoch, "main.")
                    conn.execute(f"CREATE TEMP VIEW {table} AS {sql}")
        except BaseException:
            view.close()
            raise
        view.read_only = True
        view._read_only_reason = (
            f"snapshot view {name!r} of store {self._shown!r} is read-only; write to the store "
            "itself, or branch(...) it into a new store"
        )
        return view


def _retry_busy(setup: Callable[[], int], timeout_s: float) -> int:
    """Run ``setup``, retrying while another process holds a lock SQLite does not wait for.

    Switching a fresh file to WAL (and reading it while another process does so) can report
    "database is locked" at once, without the busy handler; several processes opening a new
    store together hit this. Retrying with a short back-off until ``timeout_s`` fixes it.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        try:
            return setup()
        except sqlite3.OperationalError as exc:
            message = str(exc).lower()
            if ("locked" not in message and "busy" not in message) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)
