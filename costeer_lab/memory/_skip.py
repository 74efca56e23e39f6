"""Which failures the memory does not store: plain syntax typos and infrastructure errors.

A failure memory is worth its space when a stored failure teaches something the next attempt can
use. Two kinds do not:

* **plain syntax typos** — ``SyntaxError``, ``IndentationError``, ``TabError``: the fix is in the
  code that failed, not in anything a similar task did; they would crowd out real mistakes.
* **infrastructure errors** — the attempt did not fail because of its code: an interrupted run
  (``KeyboardInterrupt``, ``SystemExit``, ``CancelledError``), an API or network time-out or
  outage (``TimeoutError``, ``APITimeoutError``, ``APIConnectionError``, ``RateLimitError``,
  ``ConnectionError`` and its subclasses, ``ReadTimeout``/``ConnectTimeout``…), the sandbox or
  evaluator itself failing (``SandboxError``, ``IsolationError``, ``GroundTruthError``, an
  infrastructure error reported by the evaluator), the process killed by the time limit or out
  of memory (``MemoryError``).

The rule looks at the exception type (the bare class name; a dotted name uses its last part) and,
for messages without a type, at a few fixed phrases (``"timed out"``, ``"interrupted"``,
``"connection refused"``, ``"rate limit"``). Everything else is stored.
"""

from __future__ import annotations

import re

__all__ = ["INFRASTRUCTURE_ERRORS", "SYNTAX_ERRORS", "is_skippable_failure"]

#: Exception names of plain syntax typos.
SYNTAX_ERRORS = frozenset({"SyntaxError", "IndentationError", "TabError"})
#: Exception names of failures that say nothing about the code.
INFRASTRUCTURE_ERRORS = frozenset(
    {
        "KeyboardInterrupt",
        "SystemExit",
        "CancelledError",
        "TimeoutError",
        "TimeoutExpired",
        "APITimeoutError",
        "APIConnectionError",
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "ConnectionError",
        "ConnectionRefusedError",
        "ConnectionResetError",
        "ConnectionAbortedError",
        "BrokenPipeError",
        "ReadTimeout",
        "ConnectTimeout",
        "ReadTimeoutError",
        "RemoteDisconnected",
        "SandboxError",
        "IsolationError",
        "GroundTruthError",
        "MemoryError",
        "BrokenProcessPool",
    }
)
_INFRA_PHRASES = re.compile(
    r"timed? ?out|time-out|interrupted|connection (?:refused|reset|aborted)|rate limit"
    r"|service unavailable|infrastructure error",
    re.IGNORECASE,
)
_TYPE_IN_MESSAGE = re.compile(
    r"^\s*(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Expired|Timeout))\b"
)


def _bare(name: str) -> str:
    return name.strip().rsplit(".", 1)[-1]


def is_skippable_failure(error_type: str, error_message: str = "") -> str | None:
    """Why a failure should not be stored, or ``None`` when it should.

    Args:
        error_type: the exception class name (``"KeyError"``, ``"openai.APITimeoutError"``);
            ``""`` when unknown (the message's leading ``Name:`` is used then).
        error_message: the error text.

    Returns:
        ``"syntax typo (<Type>)"`` or ``"infrastructure error (<Type or phrase>)"``, else ``None``.

    Example:
        >>> is_skippable_failure("IndentationError", "unexpected indent")
        'syntax typo (IndentationError)'
        >>> is_skippable_failure("openai.APITimeoutError", "Request timed out.")
        'infrastructure error (APITimeoutError)'
        >>> is_skippable_failure("KeyError", "'close'") is None
        True
    """
    name = _bare(error_type or "")
    if not name:
        found = _TYPE_IN_MESSAGE.match(error_message or "")
        name = found.group(1) if found else ""
    if name in SYNTAX_ERRORS:
        return f"syntax typo ({name})"
    if name in INFRASTRUCTURE_ERRORS:
        return f"infrastructure error ({name})"
    if not name:
        phrase = _INFRA_PHRASES.search(error_message or "")
        if phrase:
            return f"infrastructure error ({phrase.group(0).lower()})"
    return None
