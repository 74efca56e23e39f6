"""Fixtures of the memory tests: a store URL per backend (SQLite file; PostgreSQL + pgvector)."""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.errors import ConfigurationError
from costeer_lab.store import get_store


def _postgres_ready(url: str) -> None:
    """Skip, with the reason, when this checkout has no PostgreSQL store backend."""
    try:
        get_store(url).close()
    except ConfigurationError as exc:
        if "not available" in str(exc):
            pytest.skip(f"the PostgreSQL store backend is not in this checkout: {exc}")
        raise


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store URL: a SQLite file, or a fresh PostgreSQL database with pgvector."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'memory.db'}"
    url: str = request.getfixturevalue("postgres_url")
    _postgres_ready(url)
    return url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A fresh SQLite store file's URL."""
    return f"sqlite:///{tmp_path / 'memory.db'}"
