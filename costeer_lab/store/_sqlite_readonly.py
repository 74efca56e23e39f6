"""Read-only SQLite connections: never write into, nor create a file beside, the store they read.

A plain ``mode=ro`` connection to a WAL database still creates the ``-wal`` and ``-shm`` files
next to it (and, being read-only, cannot remove them). So:

* a WAL database with no ``-wal`` file (no connection has it open: every writer closed) is read
  with ``immutable=1``, which takes no locks and touches no other file;
* any other database (a rollback-journal file, or a WAL file that a writer has open) is read with
  ``mode=ro``, which shares the writers' locks: it sees only committed data, and a writer holding
  the database locked (a rollback-journal write, a WAL writer in exclusive locking mode) makes it
  wait ``timeout_s``, then fail with :class:`~costeer_lab.errors.StoreLockedError`.

Example:
    >>> import sqlite3, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "kb.db"
    >>> conn = sqlite3.connect(path, isolation_level=None)
    >>> _ = conn.execute("PRAGMA journal_mode = WAL")
    >>> _ = conn.execute("CREATE TABLE t(x)"); conn.close()
    >>> ro = connect_read_only(path, timeout_s=1.0)
    >>> ro.execute("SELECT count(*) FROM t").fetchone()[0]
    0
    >>> ro.close(); sorted(p.name for p in path.parent.iterdir())
    ['kb.db']
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from costeer_lab.errors import StoreError, StoreLockedError

__all__ = ["connect_read_only", "is_locked", "locked_error", "read_only_uri"]

_WAL_VERSION = 2  # bytes 18 and 19 of the header: 1 = rollback journal, 2 = WAL


def _is_wal_file(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(20)
    except OSError:
        return False
    return len(head) == 20 and head[18] == head[19] == _WAL_VERSION


def read_only_uri(path: Path) -> str:
    """The ``file:`` URI that reads ``path`` without writing or creating any file.

    Example:
        >>> read_only_uri(Path("/no/such/kb.db"))
        'file:///no/such/kb.db?mode=ro'
    """
    absolute = path.expanduser().absolute()
    wal = absolute.with_name(absolute.name + "-wal")
    option = "immutable=1" if _is_wal_file(absolute) and not wal.exists() else "mode=ro"
    return f"{absolute.as_uri()}?{option}"


def is_locked(exc: BaseException) -> bool:
    """Whether a ``sqlite3`` error means another connection holds the database locked."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc).lower()


def locked_error(shown: str) -> StoreLockedError:
    """The one-line error of a read-only command whose store a writer holds locked.

    Example:
        >>> str(locked_error("runs/demo/kb/learn/rag_v2-seed0.db"))  # doctest: +ELLIPSIS
        'runs/demo/kb/learn/rag_v2-seed0.db is locked by another process (a run still ...'
    """
    return StoreLockedError(
        f"{shown} is locked by another process (a run still writing?); try again when it ends"
    )


def connect_read_only(
    path: Path, *, timeout_s: float, shown: str | None = None
) -> sqlite3.Connection:
    """Open ``path`` read-only (see the module docstring) and check that it can be read.

    Args:
        path: an existing SQLite file.
        timeout_s: how long to wait for a writer's lock before giving up.
        shown: the path as the user wrote it (for messages; default ``str(path)``).

    Raises:
        StoreLockedError: a writer holds the database locked for longer than ``timeout_s``.
        StoreError: the file cannot be opened or read as a SQLite database.
    """
    shown = str(path) if shown is None else shown
    try:
        conn = sqlite3.connect(
            read_only_uri(path), uri=True, timeout=timeout_s, isolation_level=None
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open store file {shown!r} read-only: {exc}") from None
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        conn.close()
        if is_locked(exc):
            raise locked_error(shown) from None
        raise StoreError(f"store file {shown!r} is damaged: {exc}") from None
    return conn
