"""Exceptions raised by costeer_lab.

Every error the library raises on purpose is a subclass of :class:`CosteerLabError`, so callers can
catch the whole family with one ``except``. Messages name the bad value and what was expected.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "CosteerLabError",
    "EmbedderError",
    "EmbedderMismatchError",
    "InvalidInputError",
    "NotFoundError",
    "SandboxError",
    "SchemaVersionError",
    "StoreError",
    "UnknownNameError",
    "VectorIndexError",
    "did_you_mean",
]
__all__ += ["StoreLockedError"]
__all__ += ["GroundTruthError", "IsolationError", "LLMError", "ReplayMissError"]
__all__ += ["CONFIGURATION_KINDS", "ENDPOINT_ERROR_KINDS", "EndpointError", "MemoryRefusedError"]


class CosteerLabError(Exception):
    """Base class of every error raised by costeer_lab."""


class ConfigurationError(CosteerLabError):
    """A setting, URL or specification is malformed or inconsistent."""


class InvalidInputError(CosteerLabError, ValueError):
    """An argument has the wrong type, shape or value (empty input, non-string text, …)."""


class UnknownNameError(CosteerLabError, KeyError):
    """A registry lookup failed; the message lists the known names and the closest match."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class NotFoundError(CosteerLabError, LookupError):
    """A requested item (node, record, task, …) does not exist."""


class StoreError(CosteerLabError):
    """The store could not complete an operation."""


class SchemaVersionError(StoreError):
    """The store file was written by a schema version this code does not understand."""


class StoreLockedError(StoreError):
    """A read-only open found the store locked by a writer (another process) for too long."""


class EmbedderError(CosteerLabError):
    """An embedder failed (authentication, endpoint, model files, …)."""


class EmbedderMismatchError(CosteerLabError, ValueError):
    """Vectors of one embedder (id or dimension) were mixed with vectors of another."""


class VectorIndexError(CosteerLabError):
    """A vector index is unusable (corrupt file, wrong dimension, …)."""


def did_you_mean(name: str, known: list[str] | tuple[str, ...]) -> str:
    """Return a message fragment listing ``known`` names and the closest match to ``name``.

    Example:
        >>> did_you_mean("hashin", ["hashing", "minilm"])
        "known: 'hashing', 'minilm'; did you mean 'hashing'?"
    """
    import difflib

    listed = ", ".join(repr(k) for k in sorted(known))
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"known: {listed}{hint}"


class LLMError(CosteerLabError):
    """A chat model call failed for good (authentication, retries exhausted, bad endpoint, …)."""


class EndpointError(LLMError):
    """A model endpoint failed in a way that says nothing about the model's answer: an
    infrastructure error. Never an attempt, never knowledge.

    ``kind`` is one of :data:`ENDPOINT_ERROR_KINDS`:

    - ``auth``: the endpoint refused the API key (401/403) — a configuration error;
    - ``model_not_found``: the endpoint does not serve the model (404) — a configuration error;
    - ``bad_request``: the endpoint rejected the request's shape (400/422) — a configuration error;
    - ``unreachable``: connection refused / DNS failure, after the retries;
    - ``timeout``: the request timed out, after the retries;
    - ``server``: 429 or 5xx, after the retries.

    ``configuration`` is true for the first three: retrying later cannot help, so a run stops.
    """

    def __init__(self, message: str, *, kind: str, status: int | None = None) -> None:
        super().__init__(message)
        if kind not in ENDPOINT_ERROR_KINDS:
            raise ValueError(f"unknown endpoint error kind {kind!r}")
        self.kind = kind
        self.status = status

    @property
    def configuration(self) -> bool:
        """Whether the error lies in the configuration (key, model, request)."""
        return self.kind in CONFIGURATION_KINDS


#: The kinds of :class:`EndpointError` that lie in the configuration: retrying cannot help.
CONFIGURATION_KINDS = ("auth", "model_not_found", "bad_request")

#: The kinds of :class:`EndpointError`.
ENDPOINT_ERROR_KINDS = (
    "auth",
    "model_not_found",
    "bad_request",
    "unreachable",
    "timeout",
    "server",
)


class ReplayMissError(LLMError, LookupError):
    """Replay-only mode found no cached response for a request; the message names the model and a
    short digest of the request so the missing call can be traced."""


class SandboxError(CosteerLabError):
    """The sandbox itself cannot run code (its worker fails to start). Failures of the code it
    runs are never raised: they are reported in ``SandboxResult``."""


class IsolationError(SandboxError):
    """The isolation untrusted code needs is not available on this machine; the message names
    the setting that accepts weaker isolation."""


class GroundTruthError(CosteerLabError):
    """A reference implementation failed: an infrastructure error of the experiment, recorded
    and reported, never shown to a coder as feedback.

    ``cause``: the reference's own error line (``KeyError: '$money'``), kept out of the
    message (which goes into attempt records) and shown only where the user reads it (the
    preflight's error).

    Example:
        >>> e = GroundTruthError("the reference implementation failed", cause="KeyError: 'x'")
        >>> str(e), e.cause
        ('the reference implementation failed', "KeyError: 'x'")
    """

    def __init__(self, message: str, *, cause: str = "") -> None:
        super().__init__(message)
        self.cause = cause


class MemoryRefusedError(CosteerLabError, ValueError):
    """The pattern/failure memory refused to store an item; ``reason`` says why.

    ``kind`` names the class of problem (``"credential:<what>"``, ``"failed"``, ``"syntax"``, …);
    a refused credential is named by its kind and line, never echoed.
    """

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.reason = message
