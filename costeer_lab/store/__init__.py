"""Durable storage: the source of truth (see :class:`BaseStore`).

Example:
    >>> from costeer_lab.store import get_store
    >>> with get_store(":memory:") as store:
    ...     store.put_record("note", "a", {"text": "hello"})
    ...     store.get_record("note", "a")
    {'text': 'hello'}
"""

from costeer_lab.store._base import BaseStore
from costeer_lab.store._existing import open_existing_store
from costeer_lab.store._factory import get_store, register_store_scheme
from costeer_lab.store._migrations import SCHEMA_VERSION
from costeer_lab.store._postgres import PostgresStore
from costeer_lab.store._sqlite import SQLiteStore
from costeer_lab.store._sqlite_readonly import read_only_uri
from costeer_lab.store._target import check_store_target
from costeer_lab.store._types import (
    EdgeRecord,
    JSONValue,
    NodeRecord,
    Snapshot,
    StoreDiff,
    TableDiff,
)

__all__ = [
    "SCHEMA_VERSION",
    "BaseStore",
    "EdgeRecord",
    "JSONValue",
    "NodeRecord",
    "PostgresStore",
    "SQLiteStore",
    "Snapshot",
    "StoreDiff",
    "TableDiff",
    "check_store_target",
    "get_store",
    "open_existing_store",
    "read_only_uri",
    "register_store_scheme",
]
