"""Durable storage: the source of truth (see :class:`BaseStore`).

How the package is laid out (issue 27, "one relational layer"):

* ``_base.BaseStore``: the contract every backend keeps (the shared ``StoreTestSuite`` in
  ``costeer_lab.testing`` checks it on each).
* ``_relational.RelationalMixin``: every data method whose SQL is the same on both backends but
  for spelling, written once: nodes, edges, records, metadata, the embedding cache writes,
  ``put_vectors``, ``delete_vectors``, collection versions and the plain-SQL snapshot hooks. Each
  backend sets a small dialect: the placeholder (``?`` / ``%s``), the JSON casts, "column is one
  of a list" (``json_each`` / ``= ANY``), ``MAX`` / ``GREATEST``, how to run a statement for
  many rows, the record ``where`` filter, how a vector is bound and what follows a vector
  write. Plain SQL strings for the standard drivers, no SQL toolkit: each backend runs the
  statements it ran before (three SQLite ones now spelled as PostgreSQL's: one ``json_each``
  read of many record keys, ``ON CONFLICT`` for the embedding cache, a qualified column in the
  version bump), with the same results and cost (``docs/benchmarks.md``, "One relational
  layer").
* What truly differs stays in the backends: connection, transactions and write locks
  (``_sqlite_base``, ``_postgres_base``), schema and migrations (``_migrations``,
  ``_postgres_schema``), vector search (``_base``'s exact scan, ``_postgres_search``), reading
  vectors back (``load_vectors``, ``get_cached_embeddings``), deleting edges by key, snapshot
  views and read-only opening (``_sqlite_readonly``).
* ``_interned``: node ids and edge endpoints numbered once in ``ids`` (schema 6); nodes and
  edges are keyed by those integers, so new rows append to their indexes instead of landing on
  random pages of indexes keyed by sha256 text.
* ``_snapshots.SnapshotMixin``: snapshots, diff, rollback, branch on both backends.
* ``_rows`` and ``_codec``: input checks and encodings shared by all; ``CheckedRows``: rows
  checked and encoded ahead of their write.
* ``_batch.BatchWrite``: one bulk-insert transaction as data (``BaseStore.write_batch``), and
  as bytes; ``_writer`` / ``_writer_main``: the SQLite file's writer process, which writes such
  batches while the caller prepares the next (``KnowledgeBaseV2.record_stream``).

Example:
    >>> from costeer_lab.store import get_store
    >>> with get_store(":memory:") as store:
    ...     store.put_record("note", "a", {"text": "hello"})
    ...     store.get_record("note", "a")
    {'text': 'hello'}
"""

from costeer_lab.store._base import BaseStore
from costeer_lab.store._batch import BatchWrite, VectorWrite
from costeer_lab.store._existing import open_existing_store
from costeer_lab.store._factory import get_store, register_store_scheme
from costeer_lab.store._migrations import SCHEMA_VERSION
from costeer_lab.store._postgres import PostgresStore
from costeer_lab.store._rows import CheckedRows
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
    "BatchWrite",
    "CheckedRows",
    "EdgeRecord",
    "JSONValue",
    "NodeRecord",
    "PostgresStore",
    "SQLiteStore",
    "Snapshot",
    "StoreDiff",
    "TableDiff",
    "VectorWrite",
    "check_store_target",
    "get_store",
    "open_existing_store",
    "read_only_uri",
    "register_store_scheme",
]
