"""The real llama.cpp server with the real Gemma 3 270M model (the `llm` extra).

Skipped, with the reason, when ``llama_cpp`` (``make setup-llm``) or the model package is not
installed. Every server binds 127.0.0.1 and is stopped by the test that starts it.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from costeer_lab.errors import ConfigurationError, EndpointError
from costeer_lab.llm import LocalModelServer, require_local_llm, serve_for_coder

try:
    require_local_llm("gemma3-270m")
except ConfigurationError as exc:
    pytest.skip(f"the local model server is not installed: {exc}", allow_module_level=True)

#: A prompt the base model continues with code.
PROMPT = "def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n"


def _models(base_url: str, key: str | None) -> tuple[int, list[str]]:
    """Status of ``GET /v1/models`` and the model ids it lists."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    request = urllib.request.Request(f"{base_url}/models", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, [m["id"] for m in json.loads(reply.read())["data"]]
    except urllib.error.HTTPError as exc:
        return exc.code, []


def _refuses(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.connect(("127.0.0.1", port))
        except ConnectionRefusedError:
            return True
    return False


def _gone(pid: int) -> bool:
    """The process no longer exists (not even as a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


_CLIENTS: list[openai.OpenAI] = []


def _track(client: openai.OpenAI) -> openai.OpenAI:
    """Keep ``client`` to be closed after the test (an unclosed connection warns, and warnings
    are errors, in whichever later test the garbage collector happens to run)."""
    _CLIENTS.append(client)
    return client


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def _client(server: LocalModelServer, timeout: float | None = None) -> openai.OpenAI:
    client = openai.OpenAI(
        base_url=server.base_url, api_key=server.api_key, max_retries=0, timeout=timeout
    )
    return _track(client)


@pytest.fixture(scope="module")
def server() -> Iterator[LocalModelServer]:
    with LocalModelServer("gemma3-270m", n_ctx=1024) as s:
        yield s


def test_the_server_serves_the_alias_and_completes(server: LocalModelServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
    status, ids = _models(server.base_url, server.api_key)
    assert status == 200
    assert ids == ["gemma3-270m"]
    reply = _client(server).completions.create(
        model=server.model, prompt=PROMPT, max_tokens=16, temperature=0, seed=0
    )
    assert reply.choices[0].text.strip()
    assert reply.usage is not None and reply.usage.completion_tokens > 0
    assert reply.model == "gemma3-270m"


def test_a_model_name_that_is_not_served_gets_the_served_model(server: LocalModelServer) -> None:
    """llama_cpp.server 0.3 answers any model name with its one model (no 404) and echoes the
    requested name: a mistyped model name is not caught by the endpoint."""
    client = _client(server)
    ours = client.completions.create(
        model=server.model, prompt=PROMPT, max_tokens=8, temperature=0, seed=0
    )
    other = client.completions.create(
        model="gpt-4o", prompt=PROMPT, max_tokens=8, temperature=0, seed=0
    )
    assert other.model == "gpt-4o"
    assert other.choices[0].text == ours.choices[0].text


def test_stop_frees_the_port_and_reaps_the_process() -> None:
    server = LocalModelServer("gemma3-270m", n_ctx=512).start()
    port, pid, log = server.port, server.pid, server.log_path
    assert port is not None and pid is not None and log is not None
    assert not _refuses(port)
    server.stop()
    assert _refuses(port)
    assert _gone(pid)
    assert not log.exists()  # a clean stop removes the temporary log
    server.stop()  # a second stop is a no-op


def test_a_wrong_api_key_is_refused_with_401() -> None:
    with LocalModelServer("gemma3-270m", n_ctx=512, api_key="right-key") as server:
        assert server.api_key == "right-key"
        assert _models(server.base_url, "wrong-key")[0] == 401
        assert _models(server.base_url, None)[0] == 401
        with pytest.raises(openai.AuthenticationError) as err:
            _track(
                openai.OpenAI(base_url=server.base_url, api_key="wrong-key", max_retries=0)
            ).completions.create(model=server.model, prompt=PROMPT, max_tokens=4)
        assert err.value.status_code == 401
        ok = _client(server).completions.create(model=server.model, prompt=PROMPT, max_tokens=4)
        assert ok.choices[0].text is not None


def test_an_unreachable_port_refuses_the_connection() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused
        client = _track(
            openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="local", max_retries=0)
        )
        with pytest.raises(openai.APIConnectionError):
            client.completions.create(model="gemma3-270m", prompt=PROMPT, max_tokens=4)


def test_a_client_timeout_on_a_long_generation() -> None:
    # The server keeps generating for the abandoned request; stop() then kills it.
    with LocalModelServer("gemma3-270m", n_ctx=1024, stop_timeout_s=2) as server:
        client = _client(server, timeout=0.01)
        with pytest.raises(openai.APITimeoutError):
            client.completions.create(
                model=server.model,
                prompt=PROMPT * 20,
                max_tokens=512,
                logit_bias={"1": -100},  # no end-of-text: generate all 512 tokens
            )
        pid = server.pid
    assert pid is not None and _gone(pid)


def test_a_server_that_dies_at_start_up_shows_its_log(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 64)
    server = LocalModelServer(f"local:{broken}", log_path=tmp_path / "server.log")
    with pytest.raises(EndpointError) as err:
        server.start()
    msg = str(err.value)
    assert "exited with code" in msg and "during start-up" in msg
    assert "last lines of its log" in msg and str(tmp_path / "server.log") in msg
    assert "Failed to load model" in msg  # the server's own words, from its log
    assert err.value.kind == "unreachable"
    assert server.pid is None


def test_a_start_up_timeout_stops_the_server(tmp_path: Path) -> None:
    server = LocalModelServer("gemma3-270m", startup_timeout_s=0, log_path=tmp_path / "s.log")
    with pytest.raises(EndpointError, match=r"did not serve it within 0 s"):
        server.start()
    assert server.pid is None


def test_the_environment_cannot_move_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """llama_cpp.server reads HOST, PORT, API_KEY, MODEL, … from the environment; none of them
    reaches the server, which listens where its arguments say."""
    monkeypatch.setenv("HOST", "0.0.0.0")
    monkeypatch.setenv("PORT", "1")
    monkeypatch.setenv("api_key", "from-the-environment")
    monkeypatch.setenv("MODEL_ALIAS", "something-else")
    with LocalModelServer("gemma3-270m", n_ctx=512) as server:
        status, ids = _models(server.base_url, "local")
        assert status == 200
        assert ids == ["gemma3-270m"]
        assert server.port is not None
        with open(f"/proc/{server.pid}/net/tcp") as fh:
            listening = [ln.split()[1] for ln in fh.readlines()[1:] if ln.split()[3] == "0A"]
        assert f"0100007F:{server.port:04X}" in listening
        assert f"00000000:{server.port:04X}" not in listening


def test_the_scrubbed_environment_names_every_server_setting() -> None:
    from llama_cpp.server.settings import Settings

    from costeer_lab.llm._local import _SERVER_ENV_NAMES

    assert set(Settings.model_fields) | {"config_file"} == _SERVER_ENV_NAMES


def test_serve_for_coder_serves_a_local_model_for_the_block() -> None:
    config = {"name": "llm", "model": "local:gemma3-270m", "cache_mode": "read_write"}
    with serve_for_coder(config, n_ctx=512) as served:
        assert served["model"] == "gemma3-270m" and served["api_key"] == "local"
        base_url = served["base_url"]
        client = _track(openai.OpenAI(base_url=base_url, api_key=served["api_key"], max_retries=0))
        reply = client.completions.create(
            model=served["model"], prompt=PROMPT, max_tokens=4, temperature=0
        )
        assert reply.choices[0].text is not None
    port = int(base_url.rsplit(":", 1)[1].split("/")[0])
    assert _refuses(port)


def test_an_experiment_with_a_local_coder_model(tmp_path: Path) -> None:
    """run_experiment serves `local:gemma3-270m` for the run and stops it; spec.json keeps the
    `local:` name, the coder talks to the served alias."""
    from costeer_lab.experiment import load_results, run_experiment

    spec = {
        "name": "local-model",
        "suite": "alpha158",
        "suite_options": {"n_instruments": 4, "n_days": 60, "cache_dir": str(tmp_path / "c")},
        "tasks": {"ids": ["alpha158/MA10"]},
        "arms": [{"name": "no_knowledge"}],
        "coder": {"name": "llm", "model": "local:gemma3-270m", "max_tokens": 32},
        "max_loop": 1,
        "parallelism": {"executor": "serial"},
    }
    before = set(_my_servers())  # the module's shared server may be running
    run_experiment(spec, tmp_path / "out", progress=False)
    saved = json.loads((tmp_path / "out" / "spec.json").read_text())
    assert saved["coder"]["model"] == "local:gemma3-270m"
    results = load_results(tmp_path / "out")
    assert len(results) == 1
    assert results["infra_error"].iloc[0] == ""  # the model answered (its code may be wrong)
    assert results["completion_tokens"].iloc[0] > 0
    assert set(_my_servers()) == before


def _my_servers() -> list[int]:
    """Processes of this test process running llama_cpp.server (zombies included)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            stat = (proc / "stat").read_text()
            cmd = (proc / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and (b"llama_cpp.server" in cmd or " Z " in stat):
            found.append(int(proc.name))
    return found
