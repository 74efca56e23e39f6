"""The openai:<model> embedder against a real local HTTP server (FakeOpenAIServer)."""

from __future__ import annotations

import socket
import time
from email.utils import formatdate

import numpy as np
import pytest

from costeer_lab._retry import retry_after_s as _retry_after_s
from costeer_lab.embed import OpenAIEmbedder
from costeer_lab.errors import ConfigurationError, EndpointError
from costeer_lab.settings import OpenAISettings
from costeer_lab.testing import FakeOpenAIServer

EMB = "/v1/embeddings"


def make(server: FakeOpenAIServer, model: str = "text-embedding-3-small", **kw: object):  # type: ignore[no-untyped-def]
    sleeps: list[float] = []
    opts: dict[str, object] = {
        "api_key": server.api_key,
        "base_url": server.base_url,
        "settings": OpenAISettings(backoff_initial_s=0.01, backoff_max_s=0.05),
        "sleep": sleeps.append,
        **kw,
    }
    return OpenAIEmbedder(model, **opts), sleeps  # type: ignore[arg-type]


def test_vectors_come_from_the_endpoint(fake_openai: FakeOpenAIServer) -> None:
    emb, _ = make(fake_openai)
    v = emb.embed(["rolling mean of close", "volume ratio"])
    assert emb.id == "openai:text-embedding-3-small@1:1536"
    assert v.shape == (2, 1536) and v.dtype == np.float32
    np.testing.assert_allclose(v[1], fake_openai.embedding_for("volume ratio", 1536), atol=1e-6)
    (request,) = fake_openai.requests_to(EMB)
    assert request.method == "POST" and request.body["model"] == "text-embedding-3-small"
    assert request.body["input"] == ["rolling mean of close", "volume ratio"]
    assert "dimensions" not in request.body


def test_explicit_dim_is_sent_as_dimensions(fake_openai: FakeOpenAIServer) -> None:
    emb, _ = make(fake_openai, dim=64)
    assert emb.embed(["x"]).shape == (1, 64) and emb.id.endswith(":64")
    assert fake_openai.requests_to(EMB)[0].body["dimensions"] == 64


def test_unknown_model_dimension_is_probed_once(fake_openai: FakeOpenAIServer) -> None:
    emb, _ = make(fake_openai, model="local-embedder")
    assert emb.dim == 384 and len(fake_openai.requests_to(EMB)) == 1
    emb.embed(["a"])
    assert len(fake_openai.requests_to(EMB)) == 2


def test_requests_are_split_into_batches_in_order(fake_openai: FakeOpenAIServer) -> None:
    emb, _ = make(fake_openai, batch_size=3)
    texts = [f"text {i}" for i in range(7)]
    v = emb.embed(texts)
    assert [r.body["input"] for r in fake_openai.requests_to(EMB)] == [
        texts[0:3],
        texts[3:6],
        texts[6:7],
    ]
    expected = np.vstack([fake_openai.embedding_for(t, 1536) for t in texts])
    np.testing.assert_allclose(v, expected, atol=1e-6)


def test_empty_strings_are_sent_as_a_space(fake_openai: FakeOpenAIServer) -> None:
    emb, _ = make(fake_openai)
    v = emb.embed(["", "a"])
    assert fake_openai.requests_to(EMB)[0].body["input"] == [" ", "a"]
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)


def test_429_is_retried_after_retry_after(fake_openai: FakeOpenAIServer) -> None:
    emb, sleeps = make(fake_openai)
    fake_openai.fail_next(1, status=429)
    v = emb.embed(["a"])
    assert len(fake_openai.requests_to(EMB)) == 2 and emb.retries == 1
    assert sleeps == [0.0]  # the server's Retry-After: 0
    np.testing.assert_allclose(v[0], fake_openai.embedding_for("a", 1536), atol=1e-6)


def test_500_is_retried_with_jittered_backoff(fake_openai: FakeOpenAIServer) -> None:
    emb, sleeps = make(fake_openai)
    fake_openai.fail_next(2, status=500)
    emb.embed(["a"])
    assert len(fake_openai.requests_to(EMB)) == 3
    assert len(sleeps) == 2
    assert 0.005 <= sleeps[0] <= 0.01 and 0.01 <= sleeps[1] <= 0.02  # initial * 2**k * [.5, 1]


def test_backoff_jitter_is_seeded(fake_openai: FakeOpenAIServer) -> None:
    runs = []
    for _ in range(2):
        emb, sleeps = make(fake_openai, seed=7)
        fake_openai.fail_next(3, status=503)
        emb.embed(["a"])
        runs.append(sleeps)
    assert runs[0] == runs[1] and len(runs[0]) == 3


def test_gives_up_after_max_retries(fake_openai: FakeOpenAIServer) -> None:
    emb, sleeps = make(fake_openai, max_retries=2)
    fake_openai.fail_next(5, status=503)
    with pytest.raises(EndpointError, match=r"HTTP 503 after 3 attempts"):
        emb.embed(["a"])
    assert len(fake_openai.requests_to(EMB)) == 3 and len(sleeps) == 2


@pytest.mark.parametrize("status", [401, 403])
def test_rejected_key_fails_at_once_without_leaking_it(
    fake_openai: FakeOpenAIServer, status: int
) -> None:
    secret = "sk-this-is-secret"
    if status == 401:
        emb, sleeps = make(fake_openai, api_key=secret)
    else:
        emb, sleeps = make(fake_openai)
        fake_openai.fail_next(1, status=403)
    with pytest.raises(EndpointError, match="refused the API key") as info:
        emb.embed(["a"])
    assert info.value.kind == "auth" and info.value.status == status
    message = str(info.value)
    assert fake_openai.base_url in message and f"HTTP {status}" in message
    assert secret not in message and fake_openai.api_key not in message
    assert len(fake_openai.requests_to(EMB)) == 1 and sleeps == []


def test_other_client_errors_are_not_retried(fake_openai: FakeOpenAIServer) -> None:
    emb, sleeps = make(fake_openai)
    fake_openai.fail_next(1, status=400)
    with pytest.raises(EndpointError, match="HTTP 400") as info:
        emb.embed(["a"])
    assert info.value.kind == "bad_request" and info.value.configuration
    assert len(fake_openai.requests_to(EMB)) == 1 and sleeps == []


def test_unreachable_endpoint_is_retried_then_reported() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps: list[float] = []
    emb = OpenAIEmbedder(
        "text-embedding-3-small",
        api_key="k",
        base_url=f"http://127.0.0.1:{port}/v1",
        max_retries=1,
        backoff_initial_s=0.001,
        sleep=sleeps.append,
    )
    with pytest.raises(EndpointError, match="cannot reach") as info:
        emb.embed(["a"])
    assert info.value.kind == "unreachable" and not info.value.configuration
    assert len(sleeps) == 1 and emb.requests_sent == 2


def test_key_and_url_precedence(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", fake_openai.api_key)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    from_env = OpenAIEmbedder("text-embedding-3-small", settings=OpenAISettings())
    assert from_env.embed(["a"]).shape == (1, 1536)
    from_settings = OpenAIEmbedder(
        "m", dim=8, settings=OpenAISettings(api_key="settings-key", base_url="http://s/v1")
    )
    assert (from_settings.api_key, from_settings.base_url) == ("settings-key", "http://s/v1")
    explicit = OpenAIEmbedder(
        "m",
        dim=8,
        api_key="arg-key",
        base_url="http://a/v1",
        settings=OpenAISettings(api_key="settings-key", base_url="http://s/v1"),
    )
    assert (explicit.api_key, explicit.base_url) == ("arg-key", "http://a/v1")


def test_missing_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIEmbedder("text-embedding-3-small", settings=OpenAISettings())


def test_retry_after_header_forms() -> None:
    assert _retry_after_s({"retry-after": "2"}) == 2.0
    assert _retry_after_s({"retry-after-ms": "250"}) == 0.25
    assert _retry_after_s({}) is None
    assert _retry_after_s({"retry-after": "soon"}) is None
    in_30s = _retry_after_s({"retry-after": formatdate(time.time() + 30, usegmt=True)})
    assert in_30s is not None and 25.0 < in_30s <= 30.0


def test_responses_are_cached_and_replayed_without_the_server(tmp_path: object) -> None:
    from pathlib import Path

    from costeer_lab.store import get_store

    store = get_store(f"sqlite:///{Path(str(tmp_path)) / 'cache.db'}")
    with FakeOpenAIServer() as server:
        emb, _ = make(server, model="my-embedder", cache=store)  # dimension probed once
        first = emb.embed(["rolling mean", "volume"])
        base_url = server.base_url
        assert len(server.requests_to(EMB)) == 2
    replay = OpenAIEmbedder(
        "my-embedder", api_key="k", base_url=base_url, cache=store, cache_mode="replay_only"
    )
    assert replay.dim == emb.dim == 384
    np.testing.assert_array_equal(replay.embed(["rolling mean", "volume"]), first)
    assert replay.requests_sent == 0
    store.close()
