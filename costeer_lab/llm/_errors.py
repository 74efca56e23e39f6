"""One error mapping for every model call: an ``openai`` client error becomes an
:class:`~costeer_lab.errors.EndpointError` naming the endpoint, the model and the status.

Example:
    >>> import httpx, openai
    >>> request = httpx.Request("POST", "http://127.0.0.1:8000/v1/chat/completions")
    >>> exc = openai.APITimeoutError(request)
    >>> err = endpoint_error(exc, what="chat", endpoint="http://127.0.0.1:8000/v1", model="m",
    ...                      attempts=3, timeout_s=5.0)
    >>> err.kind, err.configuration
    ('timeout', False)
    >>> str(err)
    "chat request to http://127.0.0.1:8000/v1 for model 'm' timed out after 5.0 s (3 attempts)"
"""

from __future__ import annotations

from costeer_lab.errors import EndpointError

__all__ = ["endpoint_error", "status_kind"]


def status_kind(status: int) -> str:
    """The :class:`EndpointError` kind of an HTTP error status.

    Example:
        >>> [status_kind(s) for s in (401, 403, 404, 400, 422, 429, 503)]
        ['auth', 'auth', 'model_not_found', 'bad_request', 'bad_request', 'server', 'server']
    """
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "model_not_found"
    if status == 429 or status >= 500:
        return "server"
    return "bad_request"


def _scrub(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def endpoint_error(
    exc: BaseException,
    *,
    what: str,
    endpoint: str,
    model: str,
    attempts: int,
    timeout_s: float,
    api_key: str | None = None,
) -> EndpointError:
    """The :class:`EndpointError` for ``exc``, raised by a ``what`` request (``chat``,
    ``completion``, ``embedding``, ``models``) after ``attempts`` tries.

    ``endpoint`` must already be redacted; ``api_key`` is scrubbed from the server's message.
    """
    import openai

    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    where = f"{what} request to {endpoint} for model {model!r}"
    if isinstance(exc, openai.APITimeoutError):  # a subclass of APIConnectionError: first
        return EndpointError(
            f"{where} timed out after {timeout_s} s ({tries})", kind="timeout", status=None
        )
    if isinstance(exc, openai.APIConnectionError):
        return EndpointError(
            f"cannot reach {endpoint} for model {model!r} ({what} request, {tries}): "
            f"{_scrub(str(exc), api_key)}",
            kind="unreachable",
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        kind = status_kind(status)
        body = exc.body
        said = body.get("message") if isinstance(body, dict) else None
        detail = _scrub(said if isinstance(said, str) else str(exc.message), api_key)
        if kind == "auth":
            text = (
                f"{endpoint} refused the API key for model {model!r} (HTTP {status}): {detail}; "
                "check api_key, COSTEER_LAB_OPENAI__API_KEY or OPENAI_API_KEY"
            )
        elif kind == "model_not_found":
            text = (
                f"{endpoint} does not serve model {model!r} ({what} request, HTTP 404): {detail}; "
                "check the model name and the base URL"
            )
        elif kind == "bad_request":
            text = f"{endpoint} rejected the {what} request for model {model!r} (HTTP {status}): "
            text += detail
        else:
            text = f"{where} still failed with HTTP {status} after {tries}: {detail}"
        return EndpointError(text, kind=kind, status=status)
    return EndpointError(
        f"{where} failed ({tries}): {type(exc).__name__}: {_scrub(str(exc), api_key)}",
        kind="server",
    )
