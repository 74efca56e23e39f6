"""The ``openai:<model>`` embedder: any OpenAI-compatible ``/v1/embeddings`` endpoint."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from costeer_lab.embed._base import BaseEmbedder
from costeer_lab.errors import EmbedderError, InvalidInputError
from costeer_lab.llm import CacheMode, LLMResponseCache, ModelClient
from costeer_lab.settings import OpenAISettings, get_settings

if TYPE_CHECKING:
    from costeer_lab.store._base import BaseStore

__all__ = ["KNOWN_DIMS", "OpenAIEmbedder"]

#: Native dimensions of well-known OpenAI embedding models.
KNOWN_DIMS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder(BaseEmbedder):
    """Embeddings from an OpenAI-compatible endpoint, batched, through the one model client.

    ``api_key`` / ``base_url`` come from the explicit arguments, else the ``settings`` section
    (default: ``get_settings().openai``, env ``COSTEER_LAB_OPENAI__*``), else the standard
    ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` variables. Requests go through a
    :class:`~costeer_lab.llm.ModelClient`: 429, 5xx, connection errors and time-outs are retried
    up to ``max_retries`` times with seeded jittered backoff, honouring ``Retry-After`` (up to
    60 s); every endpoint failure is an :class:`~costeer_lab.errors.EndpointError` (401/403 at
    once, kind ``auth``). With ``cache`` (a store, a function opening one, or a
    :class:`~costeer_lab.llm.LLMResponseCache`) the raw responses are recorded and replayed
    like every model call (``cache_mode``).

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
        cache / cache_mode: the response cache (see :class:`~costeer_lab.llm.ModelClient`).

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
        cache: LLMResponseCache | BaseStore | Callable[[], BaseStore] | None = None,
        cache_mode: CacheMode | str = CacheMode.READ_WRITE,
    ) -> None:
        super().__init__()
        if not isinstance(model, str) or not model.strip():
            raise InvalidInputError(f"openai embedder needs a model name, got {model!r}")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise InvalidInputError(f"openai embedder dim must be a positive int, got {dim!r}")
        s = settings if settings is not None else get_settings().openai
        self.model = model
        self.name = f"openai:{model}"
        self.batch_size = batch_size if batch_size is not None else s.embed_batch_size
        if self.batch_size < 1 or (max_retries is not None and max_retries < 0):
            raise InvalidInputError(
                f"batch_size must be >= 1 and max_retries >= 0, got {self.batch_size}, "
                f"{max_retries}"
            )
        self.client = ModelClient(
            model,
            base_url=base_url,
            api_key=api_key,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_initial_s=backoff_initial_s,
            backoff_max_s=backoff_max_s,
            settings=s,
            cache=cache,
            cache_mode=cache_mode,
            seed=seed,
            purpose=f"embedder {self.name!r}",
            sleep=sleep,
        )
        self.api_key = self.client.api_key
        self.base_url = self.client.base_url or "https://api.openai.com/v1"
        self.max_retries = self.client.max_retries
        if self.client.cache_mode is not CacheMode.REPLAY_ONLY:
            self.client.require_key()
        self._send_dimensions = dim is not None
        if dim is not None:
            self.dim = dim
        elif model in KNOWN_DIMS:
            self.dim = KNOWN_DIMS[model]
        else:
            self.dim = int(self._request([" "]).shape[1])

    @property
    def requests_sent(self) -> int:
        """HTTP requests sent (including retried ones)."""
        return self.client.requests_sent

    @property
    def retries(self) -> int:
        """Requests that were retried (429, 5xx, connection errors)."""
        return self.client.retries

    # -- HTTP ---------------------------------------------------------------------------------
    def _request(self, batch: list[str]) -> npt.NDArray[np.float32]:
        """One embeddings request; rows in input order, not yet normalized."""
        reply = self.client.embed(batch, dimensions=self.dim if self._send_dimensions else None)
        where = self.client.endpoint
        if len(reply.embeddings) != len(batch):
            raise EmbedderError(
                f"{where} returned {len(reply.embeddings)} embeddings for {len(batch)} inputs"
            )
        out = np.asarray(reply.embeddings, dtype=np.float32)
        if out.ndim != 2 or (hasattr(self, "dim") and out.shape[1] != self.dim):
            raise EmbedderError(
                f"{where} returned vectors of shape {out.shape} for model "
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
        self.client.close()
