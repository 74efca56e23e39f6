"""Which failures a failure memory should not store: syntax typos and infrastructure errors.

A failure memory keeps mistakes worth remembering with their fixes. Two kinds are not:

* **plain syntax typos** (a missing colon, an unclosed bracket, a bad indentation): the
  interpreter already names the line, the fix is local, and storing them floods the memory
  with one signature. Syntax errors about the program's structure (``'return' outside
  function``) are kept.
* **infrastructure errors**: the attempt did not fail because of its code — an API call timed
  out or was refused (``openai.APITimeoutError``, ``httpx.ReadTimeout``, rate limits), the run
  was interrupted (``KeyboardInterrupt``, a cancelled task, a broken worker pool), or the
  evaluation itself failed (the project's ``GroundTruthError``, ``SandboxError``,
  ``IsolationError``, ``LLMError``, ``ReplayMissError``, or feedback that says "Not evaluated"),
  or a service it needs was busy or down: a locked database (``database is locked``,
  ``database table is locked``), a database driver's ``OperationalError`` (``psycopg``,
  ``psycopg2``, ``pymysql``, SQLAlchemy; SQLite's only when the database is locked or cannot
  be opened), a refused, reset or aborted connection (``ConnectionRefusedError``,
  ``ConnectionResetError``, ``ConnectionAbortedError``), a socket time-out (``socket.timeout``).

A candidate's own time limit (``TimeoutError`` from the evaluator: an endless loop) and its
other errors (a bad SQL statement: ``sqlite3.OperationalError: no such table``) are *kept*:
they are mistakes of the code.
"""

from __future__ import annotations

from costeer_lab._fingerprint._scan import error_fingerprint

__all__ = ["is_skippable_failure", "skip_reason"]

_SYNTAX_TYPOS = frozenset(
    {"SyntaxError: invalid syntax", "IndentationError: invalid indentation"}
    | {"TabError: invalid indentation"}
)
_INTERRUPTS = frozenset({"KeyboardInterrupt", "CancelledError", "BrokenProcessPool"})
#: Exception names (last dotted part) raised by API clients when the service did not answer.
_API_ERRORS = frozenset(
    {"APITimeoutError", "APIConnectionError", "RateLimitError", "InternalServerError"}
    | {"ServiceUnavailableError", "ReadTimeout", "ConnectTimeout", "WriteTimeout", "PoolTimeout"}
    | {"ReadTimeoutError", "ConnectTimeoutError", "RemoteProtocolError"}
)
#: Module prefixes of API and HTTP clients: a timeout raised by them is an infrastructure error.
_CLIENT_MODULES = ("openai.", "httpx.", "requests.", "urllib3.", "aiohttp.", "httpcore.")
#: The project's own errors that mean the evaluation (not the code) failed.
_PROJECT_ERRORS = frozenset(
    {"GroundTruthError", "SandboxError", "IsolationError", "LLMError", "ReplayMissError"}
)
_NOT_EVALUATED = "Not evaluated: the evaluation infrastructure failed"
#: Exceptions that say a connection to a service failed, whatever raised them.
_CONNECTION_ERRORS = frozenset(
    {"ConnectionRefusedError", "ConnectionResetError", "ConnectionAbortedError"}
)
#: Database drivers whose ``OperationalError`` means the server (not the query) failed.
_DB_DRIVERS = ("psycopg.", "psycopg2.", "pymysql.", "MySQLdb.", "sqlalchemy.exc.")
#: Messages of a busy or unreachable service, whatever the exception type.
_SERVICE_MESSAGES = (
    "database is locked",
    "database table is locked",
    "unable to open database file",
    "could not connect to server",
    "server closed the connection unexpectedly",
)


def skip_reason(error: str, error_type: str | None = None) -> str | None:
    """Why a failure should not be stored, or ``None`` when it should (module docstring).

    Args:
        error: a traceback, captured stderr, an evaluator message or a fingerprint.
        error_type: the exception type when ``error`` is only its message.

    Example:
        >>> skip_reason("SyntaxError: expected ':'")
        'syntax typo'
        >>> skip_reason("Request timed out.", error_type="openai.APITimeoutError")
        'infrastructure error: openai.APITimeoutError'
        >>> skip_reason("sqlite3.OperationalError: database is locked")
        'infrastructure error: sqlite3.OperationalError: database is locked'
        >>> skip_reason("KeyError: 'close'") is None
        True
    """
    if not isinstance(error, str):
        return None
    if error_type and not error.lstrip().startswith(error_type):
        error = f"{error_type}: {error}"
    if _NOT_EVALUATED in error:
        return "infrastructure error: not evaluated"
    fp = error_fingerprint(error)
    if fp in _SYNTAX_TYPOS:
        return "syntax typo"
    exc_type = fp.split(":", 1)[0]
    base = exc_type.rsplit(".", 1)[-1]
    if base in _INTERRUPTS:
        return f"interrupted run: {exc_type}"
    if base in _API_ERRORS or base in _PROJECT_ERRORS or base in _CONNECTION_ERRORS:
        return f"infrastructure error: {exc_type}"
    message = fp.split(":", 1)[-1].lower()
    busy = next((m for m in _SERVICE_MESSAGES if m in message), None)
    if busy is not None:
        return f"infrastructure error: {exc_type}: {busy}"
    if base == "OperationalError" and exc_type.startswith(_DB_DRIVERS):
        return f"infrastructure error: {exc_type}"
    if exc_type in {"socket.timeout", "timeout"}:
        return f"infrastructure error: {exc_type}"
    if exc_type.startswith(_CLIENT_MODULES) and ("Timeout" in base or "Connect" in base):
        return f"infrastructure error: {exc_type}"
    return None


def is_skippable_failure(error: str, error_type: str | None = None) -> bool:
    """Whether a failure memory should skip this failure (see :func:`skip_reason`).

    Example:
        >>> is_skippable_failure("Traceback (most recent call last):\\nKeyboardInterrupt")
        True
        >>> is_skippable_failure("name 'np' is not defined", error_type="NameError")
        False
    """
    return skip_reason(error, error_type) is not None
