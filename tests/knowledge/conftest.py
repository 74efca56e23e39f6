"""Fixtures of the knowledge tests: a SQLite store in tmp_path and a V2 KB on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab.knowledge import KnowledgeBaseV2, open_kb
from costeer_lab.store import BaseStore, SQLiteStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[BaseStore]:
    s = SQLiteStore(tmp_path / "kb.db")
    yield s
    s.close()


@pytest.fixture
def kb(store: BaseStore) -> KnowledgeBaseV2:
    out = open_kb(store=store, version="v2", embedder="hashing")
    assert isinstance(out, KnowledgeBaseV2)
    return out


@pytest.fixture(autouse=True)
def _index_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Persisted indexes of PostgreSQL KBs go to the cache directory: a temporary one here
    (also for worker processes, which inherit the environment), never the user's."""
    from costeer_lab.settings import get_settings

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COSTEER_LAB_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
        get_settings.cache_clear()
        yield
    get_settings.cache_clear()
