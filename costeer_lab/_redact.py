"""``redact_url``: the one way a URL with a password is shown in a message, a repr or a log.

Every caller (the store factory, the PostgreSQL store, the LLM response cache) uses it, so a
secret in a store URL reads the same wherever it is reported: the password becomes ``***``, the
user name, host and the rest of the URL stay as they were.

Example:
    >>> redact_url("postgresql://me:s3cret@db:5432/lab?sslmode=require")
    'postgresql://me:***@db:5432/lab?sslmode=require'
    >>> redact_url("sqlite:///runs/lab.db")
    'sqlite:///runs/lab.db'
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["redact_url"]

_USERINFO = re.compile(r"//[^/?#]*@")


def redact_url(url: str) -> str:
    """``url`` with the password of its user information replaced by ``***``.

    Only the authority (``user:password@host``) changes: the same characters in the path or the
    query string are left alone. A URL without a password comes back unchanged; one too malformed
    to parse loses its whole user information, so a secret never leaks through an error message.

    Args:
        url: any URL (or text) to show.

    Returns:
        The URL, safe to print.

    Example:
        >>> redact_url("postgresql://u:pw@h/db?x=:pw@")
        'postgresql://u:***@h/db?x=:pw@'
        >>> redact_url("postgresql://u@h/db")
        'postgresql://u@h/db'
        >>> redact_url("postgresql://u:pw@[::1/db")  # unparsable: the user goes too
        'postgresql://***@[::1/db'
    """
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return _USERINFO.sub("//***@", url, count=1)
    if not password:
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    return url.replace(parts.netloc, f"{user}:***@{host}", 1)
