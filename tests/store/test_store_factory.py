"""get_store: URL and path parsing, settings fallback, clear errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from costeer_lab.errors import ConfigurationError, StoreError
from costeer_lab.settings import get_settings
from costeer_lab.store import BaseStore, SQLiteStore, get_store, register_store_scheme
from costeer_lab.store._factory import STORE_OPENERS


@pytest.mark.parametrize("target", [":memory:", "sqlite:///:memory:", " sqlite:///:memory: "])
def test_memory_targets(target: str) -> None:
    with get_store(target) as store:
        assert isinstance(store, SQLiteStore) and store.url == "sqlite:///:memory:"
        store.put_record("rec", "k", 1)
        with get_store(target) as other:  # every in-memory store is its own database
            assert other.get_record("rec", "k") is None


def test_relative_url_is_relative_to_cwd_and_creates_parents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with get_store("sqlite:///runs/deep/lab.db") as store:
        store.put_record("rec", "k", 1)
        assert store.url == f"sqlite:///{tmp_path / 'runs/deep/lab.db'}"
    assert (tmp_path / "runs" / "deep" / "lab.db").is_file()


def test_absolute_url(tmp_path: Path) -> None:
    path = tmp_path / "new" / "abs.db"
    url = f"sqlite:///{path}"
    assert url.startswith("sqlite:////")
    with get_store(url) as store:
        store.put_record("rec", "k", 2)
    with SQLiteStore(path) as store:
        assert store.get_record("rec", "k") == 2


@pytest.mark.parametrize("name", ["lab.db", "lab.sqlite", "lab.SQLITE3"])
def test_plain_paths(tmp_path: Path, name: str) -> None:
    with get_store(str(tmp_path / "p" / name)) as store:
        assert isinstance(store, SQLiteStore)
    with get_store(tmp_path / "q" / name) as store:  # a Path object
        assert store.url.endswith(name)
    assert (tmp_path / "p" / name).is_file() and (tmp_path / "q" / name).is_file()


def test_store_instance_is_returned_as_is() -> None:
    with SQLiteStore() as store:
        assert get_store(store) is store


def test_none_uses_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTEER_LAB_STORE_URL", f"sqlite:///{tmp_path / 'from_env.db'}")
    get_settings.cache_clear()
    try:
        with get_store() as store:
            assert store.url == f"sqlite:///{tmp_path / 'from_env.db'}"
    finally:
        monkeypatch.delenv("COSTEER_LAB_STORE_URL")
        get_settings.cache_clear()
    assert "COSTEER_LAB_STORE_URL" not in os.environ
    with get_store(None) as store:  # the default is an in-memory store
        assert store.url == get_settings().store_url == "sqlite:///:memory:"


@pytest.mark.parametrize("scheme", ["postgresql", "postgresql+psycopg", "postgres"])
def test_postgres_urls_open_a_postgres_store(scheme: str) -> None:
    """Every spelling reaches PostgresStore; a server that is not there is a clear StoreError."""
    url = f"{scheme}://user:secret@/lab?host=/nonexistent-costeer-socket-dir&connect_timeout=2"
    with pytest.raises(StoreError, match="cannot open store") as info:
        get_store(url)
    assert "secret" not in str(info.value)  # passwords are not echoed
    assert "user:***@" in str(info.value)


def test_an_unsupported_scheme_is_reported_with_the_password_redacted() -> None:
    with pytest.raises(ConfigurationError) as info:
        get_store("mysql+driver://u:pw@h/db")
    assert "'mysql+driver://u:***@h/db'" in str(info.value) and ":pw@" not in str(info.value)


def test_empty_sqlite_path_and_blank_options() -> None:
    with get_store("sqlite:///") as store:
        assert store.url == "sqlite:///:memory:"
    with pytest.raises(ConfigurationError, match="busy_timeout_s must be a number"):
        get_store("sqlite:///:memory:?busy_timeout_s=")


def test_unknown_scheme_lists_supported_ones() -> None:
    with pytest.raises(ConfigurationError) as info:
        get_store("sqlit:///lab.db")
    assert str(info.value) == (
        "unsupported store URL scheme 'sqlit' in 'sqlit:///lab.db'; "
        "known: 'postgres', 'postgresql', 'sqlite'; did you mean 'sqlite'?"
    )


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        ("sqlite://lab.db", "malformed SQLite URL"),
        ("lab.txt", "cannot interpret store target 'lab.txt'"),
        ("", "cannot interpret"),
    ],
)
def test_malformed_targets(target: str, fragment: str) -> None:
    with pytest.raises(ConfigurationError, match=fragment):
        get_store(target)


def test_wrong_type_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="int"):
        get_store(42)  # type: ignore[arg-type]


def test_registered_scheme_plugs_in(tmp_path: Path) -> None:
    opened: list[str] = []

    def opener(url: str) -> BaseStore:
        opened.append(url)
        return SQLiteStore(tmp_path / "plug.db")

    register_store_scheme("Custom", opener)
    try:
        with get_store("custom://anything") as store:
            assert store.url.endswith("plug.db")
        assert opened == ["custom://anything"]
    finally:
        del STORE_OPENERS["custom"]


def _pragmas(store: object) -> tuple[int, int]:
    """``(busy_timeout ms, synchronous level)`` of a SQLite store's connection."""
    conn = store._conn  # type: ignore[attr-defined]
    return (
        conn.execute("PRAGMA busy_timeout").fetchone()[0],
        conn.execute("PRAGMA synchronous").fetchone()[0],
    )


def test_sqlite_url_options(tmp_path: Path) -> None:
    """The options reach the connection (a test that fails when they are dropped)."""
    url = f"sqlite:///{tmp_path / 'opt.db'}?busy_timeout_s=0.5&synchronous=full"
    with get_store(url) as store:
        assert store.url == f"sqlite:///{tmp_path / 'opt.db'}"
        assert _pragmas(store) == (500, 2)  # synchronous FULL = 2
        store.put_record("rec", "k", 1)
    with get_store(f"sqlite:///{tmp_path / 'opt.db'}") as store:
        assert _pragmas(store) == (30_000, 1)  # the defaults: 30 s, NORMAL = 1
    with get_store("sqlite:///:memory:?busy_timeout_s=1&synchronous=NORMAL") as store:
        assert _pragmas(store) == (1000, 1)
        assert store.get_record("rec", "k") is None


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("busy_timeout=5", "did you mean 'busy_timeout_s'"),
        ("busy_timeout_s=soon", "must be a number"),
        ("synchronous=OFF", "NORMAL or FULL"),
        ("x", "malformed query"),
    ],
)
def test_bad_sqlite_url_options(tmp_path: Path, query: str, fragment: str) -> None:
    with pytest.raises(ConfigurationError, match=fragment):
        get_store(f"sqlite:///{tmp_path / 'opt.db'}?{query}")
    assert not (tmp_path / "opt.db").exists()
