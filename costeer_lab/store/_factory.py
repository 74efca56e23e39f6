"""``get_store``: open a store from a URL, a path, settings, or pass one through.

URL schemes map to opener functions in :data:`STORE_OPENERS`, so a backend plugs in by adding an
entry (``postgresql``/``postgres`` open a :class:`~costeer_lab.store.PostgresStore`).

Example:
    >>> from costeer_lab.store import get_store
    >>> store = get_store("sqlite:///:memory:")
    >>> store.url
    'sqlite:///:memory:'
    >>> store.close()
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from costeer_lab._redact import redact_url
from costeer_lab.errors import ConfigurationError, did_you_mean
from costeer_lab.store._base import BaseStore
from costeer_lab.store._sqlite import SQLiteStore

__all__ = ["STORE_OPENERS", "get_store", "register_store_scheme"]

#: Extensions that make a bare filesystem path a SQLite store.
SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")

StoreOpener = Callable[[str], BaseStore]


def _open_sqlite(url: str) -> BaseStore:
    rest, _, query = url[len("sqlite://") :].partition("?")
    if not rest.startswith("/"):
        raise ConfigurationError(
            f"malformed SQLite URL {url!r}: expected 'sqlite:///relative/path.db', "
            "'sqlite:////absolute/path.db' or 'sqlite:///:memory:'"
        )
    options = _sqlite_options(url, query)
    path = rest[1:]
    if path in ("", ":memory:"):
        return SQLiteStore(":memory:", **options)
    return _open_sqlite_path(path, **options)


def _sqlite_options(url: str, query: str) -> dict[str, Any]:
    """``?busy_timeout_s=5&synchronous=FULL`` -> keyword arguments of :class:`SQLiteStore`."""
    options: dict[str, Any] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as exc:
        raise ConfigurationError(f"malformed query string in {url!r}: {exc}") from None
    for key, value in pairs:
        if key == "busy_timeout_s":
            try:
                options[key] = float(value)
            except ValueError:
                raise ConfigurationError(
                    f"{url!r}: busy_timeout_s must be a number of seconds, got {value!r}"
                ) from None
        elif key == "synchronous":
            if value.upper() not in ("NORMAL", "FULL"):
                raise ConfigurationError(
                    f"{url!r}: synchronous must be NORMAL or FULL, got {value!r}"
                )
            options[key] = value.upper()
        else:
            raise ConfigurationError(
                f"unknown SQLite URL option {key!r} in {url!r}; "
                f"{did_you_mean(key, ['busy_timeout_s', 'synchronous'])}"
            )
    return options


def _open_sqlite_path(path: str | Path, **options: Any) -> BaseStore:
    file = Path(path).expanduser()
    file.parent.mkdir(parents=True, exist_ok=True)
    return SQLiteStore(file, **options)


def _open_postgres(url: str) -> BaseStore:
    """A :class:`PostgresStore` (psycopg is imported only now: the ``postgres`` extra)."""
    from costeer_lab.store._postgres import PostgresStore

    return PostgresStore(url)


#: URL scheme -> function opening a store from the full URL.
STORE_OPENERS: dict[str, StoreOpener] = {
    "sqlite": _open_sqlite,
    "postgresql": _open_postgres,
    "postgres": _open_postgres,
}


def register_store_scheme(scheme: str, opener: StoreOpener) -> None:
    """Make ``get_store("<scheme>://…")`` call ``opener(url)`` (replaces an existing entry).

    Example:
        >>> register_store_scheme("memsqlite", lambda url: SQLiteStore(":memory:"))
        >>> get_store("memsqlite://x").close()
        >>> del STORE_OPENERS["memsqlite"]
    """
    STORE_OPENERS[scheme.lower()] = opener


def get_store(target: str | Path | BaseStore | None = None) -> BaseStore:
    """Open the store named by ``target``.

    Args:
        target: ``None`` (use ``get_settings().store_url``); a :class:`BaseStore` (returned as
            is); ``":memory:"``; a URL ``sqlite:///:memory:``, ``sqlite:///relative/path.db``,
            ``sqlite:////absolute/path.db`` (options: ``?busy_timeout_s=5&synchronous=FULL``);
            ``postgresql://user:pass@host/db`` or ``postgres://…`` (a :class:`PostgresStore`,
            needs the ``postgres`` extra; options such as ``?schema=lab`` in its docstring);
            or a filesystem path ending in ``.db``, ``.sqlite`` or ``.sqlite3``. Parent
            directories of a store file are created. Each in-memory target is a new, empty
            database.

    Raises:
        ConfigurationError: unknown scheme, malformed URL, or a backend that is not available.

    Example:
        >>> store = get_store(":memory:")
        >>> get_store(store) is store
        True
        >>> store.close()
    """
    if isinstance(target, BaseStore):
        return target
    if target is None:
        from costeer_lab.settings import get_settings

        target = get_settings().store_url
    if isinstance(target, Path):
        return _open_sqlite_path(target)
    if not isinstance(target, str):
        raise ConfigurationError(
            f"get_store expects None, a URL string, a path or a BaseStore; "
            f"got {type(target).__name__} {target!r}"
        )
    text = target.strip()
    if text == ":memory:":
        return SQLiteStore(":memory:")
    if "://" in text:
        scheme = urlsplit(text).scheme.lower()
        base = scheme.split("+", 1)[0]  # postgresql+psycopg://
        opener = STORE_OPENERS.get(scheme) or STORE_OPENERS.get(base)
        if opener is None:
            raise ConfigurationError(
                f"unsupported store URL scheme {scheme!r} in {redact_url(text)!r}; "
                f"{did_you_mean(scheme, list(STORE_OPENERS))}"
            )
        return opener(text)
    if text.lower().endswith(SQLITE_SUFFIXES):
        return _open_sqlite_path(text)
    raise ConfigurationError(
        f"cannot interpret store target {text!r}: expected a URL such as 'sqlite:///lab.db' "
        f"or 'sqlite:///:memory:', ':memory:', or a file path ending in "
        f"{', '.join(SQLITE_SUFFIXES)}; supported schemes: {', '.join(sorted(STORE_OPENERS))}"
    )
