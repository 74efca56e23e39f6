"""A real PostgreSQL server with pgvector for the tests, started on this machine.

The server comes from the ``pgserver`` package (in the ``postgres`` extra), a PyPI wheel that
bundles PostgreSQL and pgvector, so a fresh machine needs no system install. It listens on a
Unix socket in a private temporary directory (no TCP port, nothing shared with other runs).

Set ``COSTEER_LAB_TEST_POSTGRES_URL`` to test against a server of your own instead (it must have
the ``vector`` extension available); each test gets a fresh database on it either way.

Example:
    >>> with PostgresTestServer() as server:  # doctest: +SKIP
    ...     url = server.create_database("demo")
    ...     url.startswith("postgresql://")
    True
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = ["PostgresTestServer", "PostgresUnavailable"]

URL_ENV = "COSTEER_LAB_TEST_POSTGRES_URL"


class PostgresUnavailable(RuntimeError):
    """PostgreSQL with pgvector cannot be started here; the message says why."""


class PostgresTestServer:
    """A started PostgreSQL (bundled by ``pgserver``, or the one named by ``URL_ENV``).

    ``create_database(name)`` returns the URL of a new, empty database with the ``vector``
    extension created. ``stop()`` (or leaving the ``with`` block) stops a server this object
    started and removes its data directory.
    """

    def __init__(self) -> None:
        self._counter = itertools.count()
        self._server: Any = None
        self._tmp: str | None = None
        external = os.environ.get(URL_ENV, "").strip()
        if external:
            self.admin_url = external
        else:
            self.admin_url = self._start_bundled()

    def _start_bundled(self) -> str:
        try:
            with warnings.catch_warnings():
                # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, containers): harmless here.
                warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
                import pgserver
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise PostgresUnavailable(
                f"the 'pgserver' package is not installed ({exc}); install the 'postgres' extra "
                f"or set {URL_ENV}"
            ) from exc
        # A short path: a Unix socket path must stay under ~107 bytes.
        self._tmp = tempfile.mkdtemp(prefix="cl-pg-")
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
                get_server = pgserver.get_server  # type: ignore[attr-defined]
                self._server = get_server(Path(self._tmp) / "data", cleanup_mode="stop")
            url: str = self._server.get_uri()
        except Exception as exc:
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise PostgresUnavailable(f"the bundled PostgreSQL did not start: {exc}") from exc
        return url

    def create_database(self, name: str) -> str:
        """Create a fresh database ``<name>_<n>`` with pgvector and return its URL."""
        import psycopg

        db = f"{name}_{os.getpid()}_{next(self._counter)}".lower()
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{db}"')
        url = _with_database(self.admin_url, db)
        with psycopg.connect(url, autocommit=True) as conn:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as exc:
                raise PostgresUnavailable(
                    f"pgvector is not available on the server: {exc}"
                ) from exc
        return url

    def stop(self) -> None:
        """Stop the server this object started and delete its files (no-op for an external one)."""
        if self._server is not None:
            self._server.cleanup()
            self._server = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> PostgresTestServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _with_database(url: str, database: str) -> str:
    """``url`` with its path (the database name) replaced by ``database``."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))
