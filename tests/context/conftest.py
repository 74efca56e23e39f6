"""Fixtures of the context tests: a memory manager over a real SQLite file and a settable
clock (the time rule of loop prevention is tested by moving it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.context import RichMemoryManager
from costeer_lab.store import SQLiteStore


class Clock:
    """A clock tests move by hand: ``clock.now += 61``."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "context.db")
    yield s
    s.close()


@pytest.fixture
def mm(store: SQLiteStore, clock: Clock) -> RichMemoryManager:
    return RichMemoryManager(store, clock=clock)
