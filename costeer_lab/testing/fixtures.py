"""Pytest fixtures shipped with costeer_lab (load with ``pytest_plugins``).

Example:
    In a ``conftest.py``::

        pytest_plugins = ["costeer_lab.testing.fixtures"]

        def test_chat(fake_openai):
            assert fake_openai.base_url.startswith("http://127.0.0.1:")
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from costeer_lab.testing._openai_server import FakeOpenAIServer
from costeer_lab.testing._postgres import PostgresTestServer, PostgresUnavailable

__all__ = ["fake_openai", "postgres_server", "postgres_url"]


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer` on 127.0.0.1, stopped after the test."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresTestServer]:
    """One real PostgreSQL + pgvector for the whole test session (see ``PostgresTestServer``).

    Tests that use it are skipped, with the reason, only when the server truly cannot start.
    """
    try:
        server = PostgresTestServer()
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL with pgvector cannot start here: {exc}")
    with server:
        yield server


@pytest.fixture
def postgres_url(
    postgres_server: PostgresTestServer, request: pytest.FixtureRequest
) -> Iterator[str]:
    """The URL of a fresh database (pgvector enabled) on the session's PostgreSQL, dropped
    after the test."""
    stem = re.sub(r"\W+", "_", request.node.name)[:24].strip("_")
    url = postgres_server.create_database("t_" + stem)
    yield url
    postgres_server.drop_database(url)
