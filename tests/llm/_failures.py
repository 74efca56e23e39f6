"""The four endpoint failures the tests script against a real local server: a refused key, an
unknown model, a refused connection (a stopped server's port) and a time-out (a slow server)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from costeer_lab.testing import FakeOpenAIServer

#: The failures, named by the ``EndpointError`` kind each must map to.
FAILURES = ("auth", "model_not_found", "unreachable", "timeout")


@dataclass(frozen=True)
class Endpoint:
    """What a client is configured with to meet one failure."""

    base_url: str
    api_key: str
    model: str
    timeout_s: float


@contextmanager
def failing_endpoint(kind: str) -> Iterator[tuple[Endpoint, FakeOpenAIServer]]:
    """A started server (stopped on exit) and the client settings that hit ``kind``."""
    server = FakeOpenAIServer(models=["fake-chat", "text-embedding-3-small"])
    with server:
        ep = Endpoint(server.base_url, server.api_key, "fake-chat", 5.0)
        if kind == "auth":
            ep = Endpoint(ep.base_url, "sk-wrong-key", ep.model, ep.timeout_s)
        elif kind == "model_not_found":
            ep = Endpoint(ep.base_url, ep.api_key, "no-such-model", ep.timeout_s)
        elif kind == "timeout":
            server.delay_s = 1.0
            ep = Endpoint(ep.base_url, ep.api_key, ep.model, 0.2)
        elif kind == "unreachable":
            server.stop()  # its port now refuses connections
        yield ep, server
