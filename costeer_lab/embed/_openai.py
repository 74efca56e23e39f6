"""The ``openai:<model>`` embedder: any OpenAI-compatible ``/v1/embeddings`` endpoint."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from costeer_lab._retry import call_with_retries
from costeer_lab.embed._base import BaseEmbedder
from costeer_lab.errors import ConfigurationError, EmbedderError, InvalidInputError
from costeer_lab.settings import OpenAISettings, get_settings

if TYPE_CHECKING:
    import openai

__all__ = ["KNOWN_DIMS", "OpenAIEmbedder"]

#: Native dimensions of well-known OpenAI embedding models.
KNOWN_DIMS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder(BaseEmbedder):
    """Embeddings from an OpenAI-compatible endpoint, batched, with honest retries.

    ``api_key`` / ``base_url`` come from the explicit arguments, else the ``settings`` section
    (default: ``get_settings().openai``, env ``COSTEER_LAB_OPENAI__*``), else the standard
    ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` variables. The client's own retries are disabled;
    this class retries 429, 5xx and connection errors up to ``max_retries`` times with jittered
    exponential backoff (seeded), honouring ``Retry-After`` (up to 60 s). 401/403 raise
    :class:`EmbedderError` at once.

    The dimension is the model's known native size, or ``dim`` (sent as ``dimensions``), or found
    by one probe request at construction. Empty strings, which the API rejects, are sent as a
    single space. Rows are L2-normalized.

    Args:
        model: model name, e.g. ``text-embedding-3-small``.
        dim: requested output dimension (``dimensions`` parameter).
        api_key, base_url, batch_size, max_retries, backoff_initial_s, backoff_max_s, timeout_s:
            override the settings section.
        settings: an :class:`OpenAISettings` section (default: the global settings).
        seed: seed of the backoff jitter.
        sleep: the function used to wait between retries (tests may record the waits).

    Example:
        >>> e = OpenAIEmbedder("text-embedding-3-small", api_key="...")  # doctest: +SKIP
        >>> e.embed(["rolling mean of close"]).shape  # doctest: +SKIP
        (1, 1536)
    """

    version = "1"

    def __init__(
        self,
        model: str,
        *,
        dim: int | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        batch_size: int | None = None,
        max_retries: int | None = None,
        backoff_initial_s: float | None = None,
        backoff_max_s: float | None = None,
        timeout_s: float | None = None,
        settings: OpenAISettings | None = None,
        seed: int = 0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__()
        if not isinstance(model, str) or not model.strip():
            raise InvalidInputError(f"openai embedder needs a model name, got {model!r}")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise InvalidInputError(f"openai embedder dim must be a positive int, got {dim!r}")
        s = settings if settings is not None else get_settings().openai
        self.model = model
        self.name = f"openai:{model}"
        self.api_key = api_key or s.api_key or os.environ.get("OPENAI_API_KEY")
        self.base_url = (
            base_url
            or s.base_url
            or os.environ.get("OPENAI_BASE_URL")
            or "https://api.openai.com/v1"
        )
        self.batch_size = batch_size if batch_size is not None else s.embed_batch_size
        self.max_retries = max_retries if max_retries is not None else s.max_retries
        self.backoff_initial_s = (
            backoff_initial_s if backoff_initial_s is not None else s.backoff_initial_s
        )
        self.backoff_max_s = backoff_max_s if backoff_max_s is not None else s.backoff_max_s
        timeout = timeout_s if timeout_s is not None else s.timeout_s
        if self.batch_size < 1 or self.max_retries < 0:
            raise InvalidInputError(
                f"batch_size must be >= 1 and max_retries >= 0, got {self.batch_size}, "
                f"{self.max_retries}"
            )
        if not self.api_key:
            raise ConfigurationError(
                "no OpenAI API key: pass api_key=, or set COSTEER_LAB_OPENAI__API_KEY or "
                "OPENAI_API_KEY (local servers without auth accept any value)"
            )
        import openai  # imported here: it takes ~0.5 s and only this embedder needs it

        self._client: openai.OpenAI = openai.OpenAI(
            api_key=self.api_key, base_url=self.base_url, max_retries=0, timeout=timeout
        )
        self._rng = random.Random(seed)
        self._sleep = sleep
        #: HTTP requests sent (including retried ones).
        self.requests_sent = 0
        #: Requests that were retried (429, 5xx, connection errors).
        self.retries = 0
        self._send_dimensions = dim is not None
        if dim is not None:
            self.dim = dim
        elif model in KNOWN_DIMS:
            self.dim = KNOWN_DIMS[model]
        else:
            self.dim = int(self._request([" "]).shape[1])

    # -- HTTP ---------------------------------------------------------------------------------
    def _request(self, batch: list[str]) -> npt.NDArray[np.float32]:
        """One embeddings request with retries; rows in input order, not yet normalized."""
        import openai

        dimensions = self.dim if self._send_dimensions else openai.omit
        attempts = 0

        def send() -> Any:
            nonlocal attempts
            attempts += 1
            self.requests_sent += 1
            return self._client.embeddings.create(
                model=self.model, input=batch, dimensions=dimensions
            )

        def count_retry(_: BaseException) -> None:
            self.retries += 1

        try:
            resp = call_with_retries(
                send,
                max_retries=self.max_retries,
                backoff_initial_s=self.backoff_initial_s,
                backoff_max_s=self.backoff_max_s,
                jitter=self._rng.random,
                sleep=self._sleep,
                on_retry=count_retry,
            )
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise EmbedderError(
                f"the endpoint {self.base_url} rejected the API key (HTTP {exc.status_code}) "
                f"for model {self.model!r}; check COSTEER_LAB_OPENAI__API_KEY / OPENAI_API_KEY"
            ) from None
        except openai.APIStatusError as exc:
            raise EmbedderError(
                f"embedding request to {self.base_url} (model {self.model!r}) failed "
                f"with HTTP {exc.status_code} after {attempts} attempt(s): "
                f"{exc.message}"
            ) from exc
        except openai.APIConnectionError as exc:
            raise EmbedderError(
                f"cannot reach {self.base_url} for embeddings after {attempts} attempt(s): {exc}"
            ) from exc
        data = sorted(resp.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise EmbedderError(
                f"{self.base_url} returned {len(data)} embeddings for {len(batch)} inputs"
            )
        out = np.asarray([d.embedding for d in data], dtype=np.float32)
        if out.ndim != 2 or (hasattr(self, "dim") and out.shape[1] != self.dim):
            raise EmbedderError(
                f"{self.base_url} returned vectors of shape {out.shape} for model "
                f"{self.model!r}, expected dimension {getattr(self, 'dim', '?')}"
            )
        return out

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        sent = [t if t.strip() else " " for t in texts]
        parts = [
            self._request(sent[i : i + self.batch_size])
            for i in range(0, len(sent), self.batch_size)
        ]
        out = np.concatenate(parts, axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        if np.any(norms == 0.0):
            bad = int(np.flatnonzero(norms[:, 0] == 0.0)[0])
            raise EmbedderError(
                f"{self.base_url} returned an all-zero vector for text {texts[bad]!r:.60}"
            )
        return np.asarray(out / norms, dtype=np.float32)

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()
