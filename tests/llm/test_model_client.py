"""ModelClient against a real local OpenAI-compatible HTTP server (FakeOpenAIServer)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.errors import ConfigurationError, EndpointError, LLMError, ReplayMissError
from costeer_lab.llm import CacheMode, LLMResponseCache, ModelClient, request_key
from costeer_lab.store import get_store
from costeer_lab.testing import FakeOpenAIServer

from ._failures import FAILURES, Endpoint, failing_endpoint

CHAT = "/v1/chat/completions"
MSG = [{"role": "user", "content": "hello"}]


def client(ep: Endpoint | FakeOpenAIServer, **kw: Any) -> ModelClient:
    if isinstance(ep, FakeOpenAIServer):
        ep = Endpoint(ep.base_url, ep.api_key, "fake-chat", 5.0)
    kw.setdefault("model", ep.model)
    kw.setdefault("max_retries", 1)
    kw.setdefault("backoff_initial_s", 0.0)
    kw.setdefault("backoff_max_s", 0.0)
    return ModelClient(
        base_url=ep.base_url, api_key=ep.api_key, timeout_s=ep.timeout_s, purpose="test", **kw
    )


@pytest.mark.parametrize("kind", FAILURES)
@pytest.mark.parametrize("call", ["chat", "completion", "embedding", "check"])
def test_each_failure_is_an_endpoint_error_of_its_kind(kind: str, call: str) -> None:
    with failing_endpoint(kind) as (ep, server):
        c = client(ep)
        run: Callable[[], object] = {
            "chat": lambda: c.chat(MSG),
            "completion": lambda: c.complete("def f():", stop=["\ndef "]),
            "embedding": lambda: c.embed(["a"]),
            "check": lambda: c.check(),
        }[call]
        with pytest.raises(EndpointError) as info:
            run()
        c.close()
    err = info.value
    assert err.kind == kind and isinstance(err, LLMError)
    assert err.configuration is (kind in ("auth", "model_not_found"))
    message = str(err)
    assert ep.base_url in message and repr(ep.model) in message
    assert ep.api_key not in message
    if kind in ("auth", "model_not_found"):
        assert err.status == {"auth": 401, "model_not_found": 404}[kind]
        if call != "check":  # check finds an unknown model in the list, not by an HTTP error
            assert f"HTTP {err.status}" in message
        # a configuration error is not retried: one request (the model list for check)
        assert len(server.requests) == 1
    else:
        assert err.status is None and "2 attempts" in message  # retried once


def test_server_errors_are_retried_then_succeed(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(2, status=503, path=CHAT)
    c = client(fake_openai, max_retries=2)
    assert c.chat(MSG).content == "This is a reply from FakeOpenAIServer."
    assert (c.requests_sent, c.retries) == (3, 2)


def test_server_errors_past_the_retries_are_kind_server(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(3, status=500, path=CHAT)
    with pytest.raises(EndpointError, match="HTTP 500 after 2 attempts") as info:
        client(fake_openai).chat(MSG)
    assert (info.value.kind, info.value.status, info.value.configuration) == ("server", 500, False)


def test_bad_request_is_a_configuration_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(1, status=400, path=CHAT)
    with pytest.raises(EndpointError, match="HTTP 400") as info:
        client(fake_openai).chat(MSG)
    assert info.value.kind == "bad_request" and info.value.configuration


def test_endpoint_password_is_redacted() -> None:
    with failing_endpoint("unreachable") as (ep, _):
        url = ep.base_url.replace("http://", "http://user:pw-secret@")
        c = client(Endpoint(url, "k", "m", 1.0), max_retries=0)
        with pytest.raises(EndpointError) as info:
            c.chat(MSG)
    assert "pw-secret" not in str(info.value) and "user:***@" in str(info.value)


def test_completion_sends_prompt_and_stop(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.completion_handler = lambda body: "    return 1\n\ndef other():\n    pass\n"
    reply = client(fake_openai).complete("def f():\n", stop=["\ndef "], max_tokens=5, seed=3)
    assert reply.content == "    return 1\n"
    (req,) = fake_openai.requests_to("/v1/completions")
    body = req.body
    assert (body["prompt"], body["stop"], body["seed"]) == ("def f():\n", ["\ndef "], 3)
    assert reply.prompt_tokens == 2 and reply.completion_tokens == 2


def test_embeddings_come_back_in_order(fake_openai: FakeOpenAIServer) -> None:
    reply = client(fake_openai, model="text-embedding-3-small").embed(["a", "b"], dimensions=8)
    assert len(reply.embeddings) == 2 and len(reply.embeddings[0]) == 8
    assert list(reply.embeddings[1]) == pytest.approx(fake_openai.embedding_for("b", 8).tolist())


def test_check_passes_a_listed_model_and_probes_an_unlisted_server(
    fake_openai: FakeOpenAIServer,
) -> None:
    client(fake_openai).check()
    assert [r.path for r in fake_openai.requests] == ["/v1/models"]
    fake_openai.models = []  # lists nothing: one 1-token request decides
    with pytest.raises(EndpointError) as info:
        client(fake_openai).check()
    assert info.value.kind == "model_not_found"
    assert fake_openai.requests[-1].path == CHAT
    assert fake_openai.requests[-1].body["max_tokens"] == 1


def test_missing_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from costeer_lab.settings import OpenAISettings

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    c = ModelClient("m", base_url="http://127.0.0.1:9/v1", settings=OpenAISettings())
    with pytest.raises(ConfigurationError, match="no API key"):
        c.check()


@pytest.mark.parametrize("kind", ["chat", "completion", "embedding"])
def test_every_kind_is_cached_and_replayed_without_the_server(kind: str, tmp_path: Path) -> None:
    store = get_store(f"sqlite:///{tmp_path / 'cache.db'}")
    model = "text-embedding-3-small" if kind == "embedding" else "fake-chat"

    def call(c: ModelClient) -> Any:
        if kind == "chat":
            return c.chat(MSG, temperature=0)
        if kind == "completion":
            return c.complete("def f():\n", stop=["\ndef "])
        return c.embed(["a", "b"], dimensions=4)

    with FakeOpenAIServer() as server:
        ep = Endpoint(server.base_url, server.api_key, model, 5.0)
        first = call(client(ep, cache=store))
        again = call(client(ep, cache=store))
        assert len(server.requests) == 1
    assert (first.from_cache, again.from_cache) == (False, True) and first == again
    replay = client(ep, cache=store, cache_mode="replay_only")
    assert call(replay) == first  # the server is gone
    with pytest.raises(ReplayMissError, match=r"model '[\w-]+', request [0-9a-f]{12}"):
        replay.chat([{"role": "user", "content": "never asked"}])
    assert store.count_records("llm_cache") == 1
    store.close()


def test_cache_keys_differ_by_kind_and_keep_the_chat_key() -> None:
    chat = request_key("m", MSG, {})
    assert chat == request_key("m", MSG, {}, kind="chat")
    assert chat != request_key("m", ["hello"], {}, kind="embedding")


def test_replay_only_needs_a_cache() -> None:
    with pytest.raises(ConfigurationError, match="replay_only"):
        ModelClient("m", cache_mode="replay_only")
    with pytest.raises(ConfigurationError, match="unknown cache mode"):
        ModelClient("m", cache_mode="sometimes")


def test_threads_each_open_their_store(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    c = client(fake_openai, cache=lambda: get_store(url))
    prompts = [[{"role": "user", "content": f"q{i % 4}"}] for i in range(8)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        replies = list(pool.map(lambda m: c.chat(m).content, prompts))
    assert len(set(replies)) == 1 and 4 <= len(fake_openai.requests_to(CHAT)) <= 8
    cache = c.cache
    assert isinstance(cache, LLMResponseCache) and cache.mode is CacheMode.READ_WRITE
    assert len(cache) == 4
    c.close()
