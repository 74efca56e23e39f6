"""``check_store_target``: would ``get_store`` accept this URL or path? Checked without opening
anything (opening a SQLite URL creates its file and folders).

Besides what ``get_store`` refuses, a URL missing its ``//`` (``sqlite:/x.db``) is refused:
``get_store`` would take it for a file path and create a folder named ``sqlite:``.

Example:
    >>> check_store_target("sqlite:///runs/lab.db")
    >>> check_store_target("mysql://x")
    Traceback (most recent call last):
    ...
    costeer_lab.errors.ConfigurationError: unsupported store URL scheme 'mysql' in 'mysql://x'; known: 'postgres', 'postgresql', 'sqlite'
"""  # noqa: E501

from __future__ import annotations

import difflib
import re
from urllib.parse import urlsplit

from costeer_lab._redact import redact_url
from costeer_lab.errors import ConfigurationError, did_you_mean
from costeer_lab.store._factory import SQLITE_SUFFIXES, STORE_OPENERS, _sqlite_options

__all__ = ["check_store_target"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def check_store_target(target: str) -> None:
    """Raise what ``get_store(target)`` would raise for a malformed target, without opening it.

    Raises:
        ConfigurationError: unknown scheme, malformed SQLite URL or options, a URL missing its
            ``//``, or a text that is neither a URL nor a store file path.
    """
    text = target.strip()
    if text == ":memory:":
        return
    if "://" in text:
        scheme = urlsplit(text).scheme.lower()
        if not (STORE_OPENERS.get(scheme) or STORE_OPENERS.get(scheme.split("+", 1)[0])):
            raise ConfigurationError(
                f"unsupported store URL scheme {scheme!r} in {redact_url(text)!r}; "
                f"{did_you_mean(scheme, list(STORE_OPENERS))}"
            )
        if scheme == "sqlite":
            rest, _, query = text[len("sqlite://") :].partition("?")
            if not rest.startswith("/"):
                raise ConfigurationError(
                    f"malformed SQLite URL {text!r}: expected 'sqlite:///relative/path.db', "
                    "'sqlite:////absolute/path.db' or 'sqlite:///:memory:'"
                )
            _sqlite_options(text, query)
        return
    found = _SCHEME.match(text)
    if found is not None:
        scheme = found.group(1).lower()
        if scheme in STORE_OPENERS or difflib.get_close_matches(scheme, list(STORE_OPENERS)):
            raise ConfigurationError(
                f"malformed store URL {redact_url(text)!r}: a URL needs '://' after its scheme, "
                f"such as 'sqlite:///lab.db' (as a file path it would create a folder "
                f"{found.group(0)!r})"
            )
    if text.lower().endswith(SQLITE_SUFFIXES):
        return
    raise ConfigurationError(
        f"cannot interpret store target {text!r}: expected a URL such as 'sqlite:///lab.db' "
        f"or 'sqlite:///:memory:', ':memory:', or a file path ending in "
        f"{', '.join(SQLITE_SUFFIXES)}; supported schemes: {', '.join(sorted(STORE_OPENERS))}"
    )
