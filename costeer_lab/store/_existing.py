"""Open a store that must already exist (read-only commands: ``kb stats``, ``kb query``).

:func:`get_store` creates a missing SQLite file, which is right for a run and wrong for a command
that only reads: a mistyped path would leave an empty database behind and report zeros. The
checks here look at the file read-only (``mode=ro``) before anything opens it for writing.

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
from costeer_lab.store._factory import get_store
from costeer_lab.store._migrations import SCHEMA_VERSION

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


def _check_file(file: Path) -> None:
    shown = str(file)
    if not file.exists():
        parent = file.parent if str(file.parent) else Path(".")
        near = sorted(p.name for p in parent.glob("*.db"))[:8] if parent.is_dir() else []
        hint = f" (.db files in {str(parent)!r}: {', '.join(near)})" if near else ""
        raise NotFoundError(
            f"store file {shown!r} does not exist; expected a knowledge base written by "
            f"`costeer-lab run` (OUT/kb/<arm>-seed<s>.db){hint}"
        )
    if file.is_dir():
        dbs = sorted(p.name for p in file.glob("*.db"))[:8]
        hint = f"; it holds {', '.join(dbs)}" if dbs else ""
        raise StoreError(f"store {shown!r} is a directory, expected a SQLite .db file{hint}")
    try:
        with file.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise StoreError(f"cannot read store file {shown!r}: {exc.strerror}") from None
    if head != _SQLITE_MAGIC:
        what = "an empty file" if not head else "not a SQLite database"
        raise StoreError(f"store file {shown!r} is {what}; expected a costeer_lab knowledge base")
    try:
        conn = sqlite3.connect(f"{file.absolute().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open store file {shown!r} read-only: {exc}") from None
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" not in tables:
            raise StoreError(
                f"store file {shown!r} is a SQLite database but not a costeer_lab store "
                f"(tables: {', '.join(sorted(tables)) or 'none'})"
            )
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"store file {shown!r} is damaged: {exc}") from None
    finally:
        conn.close()
    version = int(row[0]) if row and str(row[0]).isdigit() else None
    if version is None or version > SCHEMA_VERSION:
        raise StoreError(
            f"store file {shown!r} has schema version {row[0] if row else 'none'!s}; this "
            f"costeer_lab reads versions up to {SCHEMA_VERSION}"
        )


def open_existing_store(target: str | Path) -> BaseStore:
    """Open a store that must exist and be a costeer_lab store; never creates a file.

    Args:
        target: a SQLite path or ``sqlite:///`` URL, or another backend's URL (opened as usual).

    Raises:
        NotFoundError: the file does not exist (the message lists ``.db`` files next to it).
        StoreError: a directory, an empty or non-SQLite file, a foreign or damaged database, or
            a newer schema.
    """
    text = str(target)
    file = _sqlite_file(text)
    if file is not None:
        _check_file(file.expanduser())
    elif text in (":memory:", "sqlite:///:memory:", "sqlite://"):
        raise StoreError(f"store {text!r} is a new, empty in-memory database; give a .db file")
    return get_store(text)
