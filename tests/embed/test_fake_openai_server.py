"""FakeOpenAIServer speaks enough of the OpenAI API for the real `openai` client."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest

from costeer_lab.testing import FakeOpenAIServer
from costeer_lab.testing._openai_server import DEFAULT_REPLY


def _client(server: FakeOpenAIServer, key: str | None = None) -> openai.OpenAI:
    return openai.OpenAI(api_key=key or server.api_key, base_url=server.base_url, max_retries=0)


def test_chat_reply_comes_from_the_handler(fake_openai: FakeOpenAIServer) -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: dict[str, Any]) -> str:
        seen.append(request)
        return "def f(x):\n    return x + 1"

    fake_openai.chat_handler = handler
    reply = _client(fake_openai).chat.completions.create(
        model="fake-chat", messages=[{"role": "user", "content": "write f that adds one"}]
    )
    assert reply.choices[0].message.content == "def f(x):\n    return x + 1"
    assert reply.choices[0].finish_reason == "stop" and reply.model == "fake-chat"
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (5, 6)  # words
    assert reply.usage.total_tokens == 11
    assert seen[0]["messages"][0]["content"] == "write f that adds one"
    assert fake_openai.requests[-1][:2] == ("POST", "/v1/chat/completions")


def test_default_reply_and_model_list(fake_openai: FakeOpenAIServer) -> None:
    client = _client(fake_openai)
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert reply.choices[0].message.content == DEFAULT_REPLY
    assert "text-embedding-3-small" in [m.id for m in client.models.list().data]


def test_wrong_key_gets_401_with_an_openai_error_body(fake_openai: FakeOpenAIServer) -> None:
    with pytest.raises(openai.AuthenticationError) as info:
        _client(fake_openai, key="wrong").models.list()
    assert info.value.status_code == 401
    assert "Incorrect API key" in info.value.message
    assert len(fake_openai.requests) == 1  # failed requests are recorded too


def test_fail_next_counts_and_filters_by_path(fake_openai: FakeOpenAIServer) -> None:
    client = _client(fake_openai)
    fake_openai.fail_next(2, status=503, path="/v1/embeddings")
    client.models.list()  # another path: not affected
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            client.embeddings.create(model="text-embedding-3-small", input=["a"])
    assert len(client.embeddings.create(model="text-embedding-3-small", input=["a"]).data) == 1


def test_429_carries_retry_after_zero(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(1, status=429)
    with pytest.raises(openai.RateLimitError) as info:
        _client(fake_openai).models.list()
    assert info.value.response.headers["retry-after"] == "0"


def test_embeddings_honour_dimensions_and_float_format(fake_openai: FakeOpenAIServer) -> None:
    resp = _client(fake_openai).embeddings.create(
        model="any", input="hello", dimensions=16, encoding_format="float"
    )
    assert len(resp.data[0].embedding) == 16
    assert resp.data[0].embedding == pytest.approx(
        fake_openai.embedding_for("hello", 16).tolist(), abs=1e-6
    )


def _raw(server: FakeOpenAIServer, path: str, body: bytes | None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        server.base_url.removesuffix("/v1") + path,
        data=body,
        headers={"Authorization": f"Bearer {server.api_key}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.loads(err.read())


def test_bad_requests_get_clear_errors(fake_openai: FakeOpenAIServer) -> None:
    status, body = _raw(fake_openai, "/v1/nothing", None)
    assert status == 404 and "no route" in body["error"]["message"]
    status, body = _raw(fake_openai, "/v1/embeddings", b'{"model": "m", "input": [""]}')
    assert status == 400 and "empty" in body["error"]["message"]
    status, body = _raw(fake_openai, "/v1/chat/completions", b'{"stream": true, "messages": []}')
    assert status == 400 and "stream" in body["error"]["message"]


def test_handler_exceptions_become_500(fake_openai: FakeOpenAIServer) -> None:
    def broken(request: dict[str, Any]) -> str:
        raise RuntimeError("boom")

    fake_openai.chat_handler = broken
    with pytest.raises(openai.InternalServerError, match="boom"):
        _client(fake_openai).chat.completions.create(model="m", messages=[])


def test_base_url_requires_a_started_server() -> None:
    server = FakeOpenAIServer()
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.base_url
    with server:
        assert server.base_url.startswith("http://127.0.0.1:")
    server.stop()  # idempotent
