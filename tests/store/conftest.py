"""Fixtures of the store tests: ``opener``, one store of each backend, opened as often as a
test needs (each open its own connection), closed at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.store import BaseStore, get_store

from ._openers import Opener


@pytest.fixture(params=["sqlite", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens (again and again) one store of the backend under test."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'kb.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    opened: list[BaseStore] = []

    def open_store() -> BaseStore:
        opened.append(get_store(url))
        return opened[-1]

    yield open_store
    for store in opened:
        store.close()
