"""``redact_url``: what it hides, what it keeps, and that every caller shows a URL the same way."""

from __future__ import annotations

import pytest

from costeer_lab._redact import redact_url
from costeer_lab.coders._cache import LLMResponseCache
from costeer_lab.errors import ConfigurationError, ReplayMissError, StoreError
from costeer_lab.store import SQLiteStore, get_store

SECRET_URL = "postgresql://me:s3cret@/lab?host=/nonexistent-costeer-socket-dir&connect_timeout=2"
REDACTED = "postgresql://me:***@/lab?host=/nonexistent-costeer-socket-dir&connect_timeout=2"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://me:s3cret@db:5432/lab", "postgresql://me:***@db:5432/lab"),
        # the same characters after the authority are not the password
        ("postgresql://u:pw@h/db?x=:pw@", "postgresql://u:***@h/db?x=:pw@"),
        ("postgresql://u:pw@h/:pw@/db", "postgresql://u:***@h/:pw@/db"),
        # a password holding '@' or ':' goes whole
        ("postgresql://u:p@ss:w@h/db", "postgresql://u:***@h/db"),
        ("postgresql://u:p%40ss@h/db", "postgresql://u:***@h/db"),
        # nothing to hide
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("postgresql://u:@h/db", "postgresql://u:@h/db"),
        ("sqlite:///runs/lab.db", "sqlite:///runs/lab.db"),
        ("?", "?"),
        # unparsable: the whole user information goes
        ("postgresql://u:pw@[::1/db", "postgresql://***@[::1/db"),
    ],
)
def test_only_the_password_is_replaced(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_the_store_factory_shows_the_redacted_url() -> None:
    url = SECRET_URL.replace("postgresql", "mysql", 1)
    with pytest.raises(ConfigurationError) as info:
        get_store(url)
    assert f"in {redact_url(url)!r};" in str(info.value)
    assert "s3cret" not in str(info.value)


def test_the_postgres_store_shows_the_redacted_url() -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(StoreError) as info:
        get_store(SECRET_URL)
    assert repr(REDACTED) in str(info.value) and "s3cret" not in str(info.value)


def test_the_llm_cache_shows_the_redacted_url() -> None:
    store = SQLiteStore(":memory:")
    store.url = SECRET_URL  # as a PostgreSQL store would report itself
    cache = LLMResponseCache(store, "replay_only")
    with pytest.raises(ReplayMissError) as info:
        cache.get("0" * 64, "m")
    assert f"(store {REDACTED})" in str(info.value) and "s3cret" not in str(info.value)
