"""Open a store that must already exist (read-only commands: ``kb stats``, ``kb query``).

:func:`get_store` creates a missing SQLite file, which is right for a run and wrong for a command
that only reads: a mistyped path would leave an empty database behind and report zeros. A SQLite
file is checked and then opened read-only (``SQLiteStore(..., read_only=True)``): nothing is
written into it nor created beside it, and a writer holding it locked ends in
:class:`~costeer_lab.errors.StoreLockedError` after ``busy_timeout_s`` (default 2 s).

Example:
    >>> import tempfile, pathlib
    >>> missing = pathlib.Path(tempfile.mkdtemp()) / "nope.db"
    >>> open_existing_store(missing)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    costeer_lab.errors.NotFoundError: store file '...nope.db' does not exist; ...
    >>> missing.exists()
    False
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from costeer_lab.errors import NotFoundError, StoreError
from costeer_lab.store._base import BaseStore
from costeer_lab.store._factory import _sqlite_options, get_store
from costeer_lab.store._migrations import SCHEMA_VERSION
from costeer_lab.store._sqlite import SQLiteStore
from costeer_lab.store._sqlite_readonly import connect_read_only, is_locked, locked_error

__all__ = ["open_existing_store"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def _sqlite_file(target: str) -> Path | None:
    """The file a SQLite target names, or ``None`` for other backends and ``:memory:``."""
    if target.startswith("sqlite://"):
        rest = target[len("sqlite://") :].partition("?")[0]
        if not rest.startswith("/"):
            return None  # malformed: get_store says what a SQLite URL looks like
        return None if rest[1:] in ("", ":memory:") else Path(rest[1:])
    if "://" in target or target == ":memory:":
        return None
    return Path(target)


def _missing_hint(file: Path) -> str:
    """What lies near a missing store file: ``.db`` files beside it, or stage folders."""
    parent = file.parent if str(file.parent) else Path(".")
    if not parent.is_dir():
        return ""
    near = sorted(p.name for p in parent.glob("*.db"))[:8]
    if near:
        return f" (.db files in {str(parent)!r}: {', '.join(near)})"
    staged = sorted(p for p in parent.iterdir() if p.is_dir() and (p / file.name).is_file())
    if staged:  # a staged run: OUT/kb/<stage>/<arm>-seed<s>.db
        shown = ", ".join(repr(str(p / file.name)) for p in staged[:4])
        return f" (the run has stages; try {shown})"
    return ""


def _check_file(file: Path, timeout_s: float) -> None:
    shown = str(file)
    if not file.exists():
        hint = _missing_hint(file)
        raise NotFoundError(
            f"store file {shown!r} does not exist; expected a knowledge base written by "
            f"`costeer-lab run` (OUT/kb/<arm>-seed<s>.db, or OUT/kb/<stage>/<arm>-seed<s>.db "
            f"for a spec with stages){hint}"
        )
    if file.is_dir():
        dbs = sorted(p.name for p in file.glob("*.db"))[:8]
        hint = f"; it holds {', '.join(dbs)}" if dbs else ""
        if not dbs and (file / "kb").is_dir():
            kbs = sorted({str(p.relative_to(file)) for p in (file / "kb").glob("**/*.db")})
            example = f" (e.g. {str(file / kbs[0])!r})" if kbs else ""
            hint = (
                f"; it is a run folder; its knowledge bases are in {str(file / 'kb')!r}{example}"
            )
        raise StoreError(f"store {shown!r} is a directory, expected a SQLite .db file{hint}")
    try:
        with file.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise StoreError(f"cannot read store file {shown!r}: {exc.strerror}") from None
    if head != _SQLITE_MAGIC:
        what = "an empty file" if not head else "not a SQLite database"
        raise StoreError(f"store file {shown!r} is {what}; expected a costeer_lab knowledge base")
    conn = connect_read_only(file, timeout_s=timeout_s, shown=shown)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" not in tables:
            raise StoreError(
                f"store file {shown!r} is a SQLite database but not a costeer_lab store "
                f"(tables: {', '.join(sorted(tables)) or 'none'})"
            )
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        if is_locked(exc):
            raise locked_error(shown) from None
        raise StoreError(f"store file {shown!r} is damaged: {exc}") from None
    finally:
        conn.close()
    version = int(row[0]) if row and str(row[0]).isdigit() else None
    if version is None or version > SCHEMA_VERSION:
        raise StoreError(
            f"store file {shown!r} has schema version {row[0] if row else 'none'!s}; this "
            f"costeer_lab reads versions up to {SCHEMA_VERSION}"
        )


def open_existing_store(target: str | Path, *, busy_timeout_s: float = 2.0) -> BaseStore:
    """Open a store that must exist and be a costeer_lab store; never creates a file.

    A SQLite file is opened read-only (nothing written into it or beside it); other backends
    are opened as usual.

    Args:
        target: a SQLite path or ``sqlite:///`` URL (its ``busy_timeout_s`` option wins), or
            another backend's URL.
        busy_timeout_s: how long to wait for a writer's lock on a SQLite file.

    Raises:
        NotFoundError: the file does not exist (the message lists ``.db`` files next to it, or
            the same name in stage folders).
        StoreLockedError: a writer holds the SQLite file locked for ``busy_timeout_s``.
        StoreError: a directory, an empty or non-SQLite file, a foreign or damaged database, an
            older or newer schema.
    """
    text = str(target)
    file = _sqlite_file(text)
    if file is not None:
        if text.startswith("sqlite://"):
            options = _sqlite_options(text, text.partition("?")[2])
            busy_timeout_s = float(options.get("busy_timeout_s", busy_timeout_s))
        file = file.expanduser()
        _check_file(file, busy_timeout_s)
        shown = text if not text.startswith("sqlite://") else str(file)
        return SQLiteStore(shown, busy_timeout_s=busy_timeout_s, read_only=True)
    if text in (":memory:", "sqlite:///:memory:", "sqlite://"):
        raise StoreError(f"store {text!r} is a new, empty in-memory database; give a .db file")
    return get_store(text)
