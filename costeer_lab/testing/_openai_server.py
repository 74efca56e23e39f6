"""A local fake of the OpenAI HTTP API for tests: real HTTP on 127.0.0.1, scripted failures."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from costeer_lab.embed._hashing import HashingEmbedder
from costeer_lab.embed._openai import KNOWN_DIMS

__all__ = ["DEFAULT_REPLY", "FakeOpenAIServer", "RecordedRequest"]

#: Chat reply of the default ``chat_handler``.
DEFAULT_REPLY = "This is a reply from FakeOpenAIServer."
_DEFAULT_EMBED_DIM = 384


class RecordedRequest(NamedTuple):
    """One request the server received (also unpacks as ``method, path, body``)."""

    method: str
    path: str
    body: Any


def _default_chat(request: dict[str, Any]) -> str:
    return DEFAULT_REPLY


def _default_completion(request: dict[str, Any]) -> str:
    return "    return None\n"


def _cut_at_stop(text: str, stop: Any) -> tuple[str, str]:
    """``text`` up to its first stop sequence (what OpenAI-compatible servers return)."""
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    cuts = [text.find(s) for s in stops if isinstance(s, str) and s and s in text]
    return (text[: min(cuts)], "stop") if cuts else (text, "stop")


def _n_tokens(text: str) -> int:
    return len(text.split())


class FakeOpenAIServer:
    """An OpenAI-compatible server on ``127.0.0.1`` (random port) running in a daemon thread.

    Endpoints: ``POST /v1/embeddings`` (deterministic unit vectors from the hashing embedder,
    honouring ``dimensions`` and ``encoding_format``), ``POST /v1/chat/completions`` (reply text
    from :attr:`chat_handler`), ``POST /v1/completions`` (text from :attr:`completion_handler`,
    cut at the request's ``stop`` sequences), ``GET /v1/models``. Requests with another bearer
    key than :attr:`api_key` get 401. With :attr:`models` set, only those models are listed and
    a request for another gets 404 ``model_not_found``. :attr:`delay_s` makes every answer
    wait (to script time-outs). Every request, failed or not, is appended to :attr:`requests`.

    Example:
        >>> import openai
        >>> with FakeOpenAIServer() as server:
        ...     client = openai.OpenAI(api_key=server.api_key, base_url=server.base_url)
        ...     reply = client.chat.completions.create(
        ...         model="m", messages=[{"role": "user", "content": "hi"}])
        >>> reply.choices[0].message.content == DEFAULT_REPLY
        True
    """

    def __init__(
        self,
        *,
        api_key: str = "test-key",
        chat_handler: Callable[[dict[str, Any]], str] | None = None,
        completion_handler: Callable[[dict[str, Any]], str] | None = None,
        models: list[str] | None = None,
    ) -> None:
        self.api_key = api_key
        #: Returns the assistant reply for a chat request's JSON body.
        self.chat_handler: Callable[[dict[str, Any]], str] = chat_handler or _default_chat
        #: Returns the text of a plain completion request (before the stop sequences cut it).
        self.completion_handler: Callable[[dict[str, Any]], str] = (
            completion_handler or _default_completion
        )
        #: The served models (``None``: any model is accepted and a default list is shown).
        self.models = models
        #: Seconds every request waits before it is answered (a slow server).
        self.delay_s = 0.0
        self.requests: list[RecordedRequest] = []
        self._failures: list[tuple[int, str | None]] = []
        self._lock = threading.Lock()
        self._embedders: dict[int, HashingEmbedder] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (only valid once started)."""
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not started; use `with FakeOpenAIServer()`")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAIServer:
        """Start serving in a daemon thread; returns ``self``."""
        if self._httpd is None:
            self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
            self._httpd.daemon_threads = True
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.02},  # so stop() returns quickly
                name="FakeOpenAIServer",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port. Idempotent."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._httpd = None
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting ----------------------------------------------------------------------------
    def fail_next(self, n: int = 1, status: int = 429, path: str | None = None) -> None:
        """Make the next ``n`` requests (to ``path``, e.g. ``/v1/embeddings``, when given) fail
        with ``status``; a 429 carries ``Retry-After: 0``."""
        with self._lock:
            self._failures.extend([(status, path)] * n)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """Recorded requests to one path, e.g. ``"/v1/embeddings"``."""
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def embedding_for(self, text: str, dim: int = _DEFAULT_EMBED_DIM) -> npt.NDArray[np.float32]:
        """The vector the server returns for ``text`` at dimension ``dim`` (float32)."""
        with self._lock:
            emb = self._embedders.get(dim)
            if emb is None:
                emb = self._embedders[dim] = HashingEmbedder(dim=dim)
        vec: npt.NDArray[np.float32] = emb.embed([text])[0]
        return vec

    def _take_failure(self, path: str) -> int | None:
        with self._lock:
            for i, (status, fpath) in enumerate(self._failures):
                if fpath is None or fpath == path:
                    del self._failures[i]
                    return status
        return None

    # -- endpoints ----------------------------------------------------------------------------
    def _embeddings(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        raw = body.get("input")
        items = [raw] if isinstance(raw, str) else raw
        if not isinstance(items, list) or not items:
            return 400, _error("'input' must be a string or a non-empty list", "invalid_request")
        texts = [i if isinstance(i, str) else json.dumps(i) for i in items]
        if any(t == "" for t in texts):
            return 400, _error("'$.input' is invalid: empty strings are not allowed", "invalid")
        model = str(body.get("model", ""))
        dim = body.get("dimensions") or KNOWN_DIMS.get(model, _DEFAULT_EMBED_DIM)
        if not isinstance(dim, int) or dim < 2:
            return 400, _error(f"invalid 'dimensions': {dim!r}", "invalid_request")
        as_b64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vec = self.embedding_for(text, dim)
            emb: Any = (
                base64.b64encode(vec.astype("<f4").tobytes()).decode("ascii")
                if as_b64
                else [float(x) for x in vec]
            )
            data.append({"object": "embedding", "index": i, "embedding": emb})
        tokens = sum(_n_tokens(t) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return 200, {"object": "list", "data": data, "model": model, "usage": usage}

    def _chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if body.get("stream"):
            return 400, _error("FakeOpenAIServer does not support stream=true", "invalid_request")
        reply = self.chat_handler(body)
        prompt = sum(_n_tokens(str(m.get("content", ""))) for m in body.get("messages", []))
        completion = _n_tokens(reply)
        with self._lock:
            n = len(self.requests)
        return 200, {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _completion(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            return 400, _error("'prompt' must be a string", "invalid_request")
        text, finish = _cut_at_stop(self.completion_handler(body), body.get("stop"))
        with self._lock:
            n = len(self.requests)
        usage = {"prompt_tokens": _n_tokens(prompt), "completion_tokens": _n_tokens(text)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return 200, {
            "id": f"cmpl-fake-{n}",
            "object": "text_completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [{"index": 0, "text": text, "finish_reason": finish, "logprobs": None}],
            "usage": usage,
        }

    def _models(self) -> tuple[int, dict[str, Any]]:
        names = self.models if self.models is not None else [*KNOWN_DIMS, "fake-chat"]
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in names]
        return 200, {"object": "list", "data": data}

    def handle(
        self, method: str, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """Answer one request: ``(status, json body, extra headers)``."""
        path = path.split("?", 1)[0]
        with self._lock:
            self.requests.append(RecordedRequest(method, path, body))
        if headers.get("authorization", "") != f"Bearer {self.api_key}":
            msg = "Incorrect API key provided. You can find your API key in your account."
            return 401, _error(msg, "invalid_api_key"), {}
        if self.delay_s:
            time.sleep(self.delay_s)
        status = self._take_failure(path)
        if status is not None:
            extra = {"Retry-After": "0"} if status == 429 else {}
            return status, _error(f"scripted failure {status}", "scripted"), extra
        routes: dict[tuple[str, str], Callable[[], tuple[int, dict[str, Any]]]] = {
            ("POST", "/v1/embeddings"): lambda: self._embeddings(body),
            ("POST", "/v1/chat/completions"): lambda: self._chat(body),
            ("POST", "/v1/completions"): lambda: self._completion(body),
            ("GET", "/v1/models"): self._models,
        }
        route = routes.get((method, path))
        if route is None:
            return 404, _error(f"no route {method} {path}", "not_found"), {}
        if method == "POST" and not isinstance(body, dict):
            return 400, _error("request body must be a JSON object", "invalid_request"), {}
        if method == "POST" and self.models is not None and body.get("model") not in self.models:
            msg = f"The model {body.get('model')!r} does not exist"
            return 404, _error(msg, "model_not_found"), {}
        code, payload = route()
        return code, payload, {}


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                status, payload, extra = server.handle(method, self.path, headers, body)
            except Exception as exc:  # a failing chat_handler becomes a 500, not a hang
                status, payload, extra = 500, _error(f"fake server error: {exc!r}", "server"), {}
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-request-id", f"req-fake-{len(server.requests)}")
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
