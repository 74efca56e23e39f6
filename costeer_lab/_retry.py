"""Retries of OpenAI-compatible requests (embeddings, chat), with tenacity.

One policy for every caller: a 429, a 5xx or a connection error is retried up to
``max_retries`` times; the wait is the server's ``Retry-After`` when it gives a usable one, else
``min(backoff_max_s, backoff_initial_s * 2**n)`` times a seeded jitter in ``[0.5, 1)``. Any
other error (401, 400, …) is raised at once. After the last retry the last error is raised, so
callers turn it into their own message. The OpenAI client's own retries must be off
(``max_retries=0``), or the two would multiply.

Example:
    >>> import random
    >>> calls = []
    >>> def flaky() -> str:
    ...     calls.append(1)
    ...     if len(calls) < 3:
    ...         raise ConnectionError("down")
    ...     return "ok"
    >>> call_with_retries(flaky, max_retries=5, backoff_initial_s=0.0, backoff_max_s=0.0,
    ...                   jitter=random.Random(0).random, retryable=lambda e: True)
    'ok'
    >>> len(calls)
    3
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from typing import TypeVar

import tenacity

__all__ = ["RETRY_AFTER_MAX_S", "call_with_retries", "openai_retryable", "retry_after_s"]

T = TypeVar("T")

#: A longer ``Retry-After`` is treated as absent (exponential backoff is used instead).
RETRY_AFTER_MAX_S = 60.0


def retry_after_s(headers: object) -> float | None:
    """Seconds from ``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date), if usable.

    Example:
        >>> retry_after_s({"retry-after": "2"}), retry_after_s({"retry-after-ms": "1500"})
        (2.0, 1.5)
    """
    get = getattr(headers, "get", None)
    if get is None:
        return None
    raw_ms = get("retry-after-ms")
    try:
        if raw_ms is not None:
            return float(raw_ms) / 1000.0
    except (TypeError, ValueError):
        pass
    raw = get("retry-after")
    if raw is None:
        return None
    try:
        return float(raw)
    except (TypeError, ValueError):
        pass
    try:
        return email.utils.parsedate_to_datetime(raw).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


def openai_retryable(exc: BaseException) -> bool:
    """Whether an ``openai`` client error is worth retrying (429, 5xx, connection errors)."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError)


def _server_delay(exc: BaseException | None) -> float | None:
    response = getattr(exc, "response", None)
    delay = retry_after_s(getattr(response, "headers", None))
    return delay if delay is not None and 0.0 <= delay <= RETRY_AFTER_MAX_S else None


def call_with_retries(
    call: Callable[[], T],
    *,
    max_retries: int,
    backoff_initial_s: float,
    backoff_max_s: float,
    jitter: Callable[[], float],
    sleep: Callable[[float], None] = time.sleep,
    retryable: Callable[[BaseException], bool] = openai_retryable,
    on_retry: Callable[[BaseException], None] | None = None,
) -> T:
    """``call()``, retried as the module docstring says.

    Args:
        jitter: returns a float in ``[0, 1)`` (a seeded ``random.Random().random``, locked by
            the caller when shared between threads).
        sleep: how to wait (tests pass a recorder).
        retryable: which errors are retried (default: :func:`openai_retryable`).
        on_retry: called with the error before each wait.
    """

    def wait(state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        server = _server_delay(exc)
        if server is not None:
            return server
        base = min(backoff_max_s, backoff_initial_s * 2.0 ** (state.attempt_number - 1))
        return base * (0.5 + 0.5 * jitter())

    def before_sleep(state: tenacity.RetryCallState) -> None:
        if on_retry is not None and state.outcome is not None:
            exc = state.outcome.exception()
            if exc is not None:
                on_retry(exc)

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(max_retries + 1),
        wait=wait,
        retry=tenacity.retry_if_exception(retryable),
        sleep=sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    return retrying(call)
