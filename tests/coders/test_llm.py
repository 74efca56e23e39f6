"""LLMCoder against a real local OpenAI-compatible HTTP server (FakeOpenAIServer)."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.coders import (
    BaseCoder,
    LLMCoder,
    LLMSettings,
    ReplayMissError,
    coder_from_config,
)
from costeer_lab.errors import ConfigurationError, EndpointError, LLMError
from costeer_lab.records import ErrorFix, Knowledge, QueriedKnowledge, Task, Workspace
from costeer_lab.settings import get_settings
from costeer_lab.store import get_store
from costeer_lab.testing import FakeOpenAIServer

from ._coder_helpers import failed, knowledge, ma_code, ma_task, qk_for

CHAT = "/v1/chat/completions"


def reply_with_code(body: dict[str, Any]) -> str:
    """Answer with an MA factor whose window is the number in the task name."""
    user = body["messages"][-1]["content"]
    name = user.split("Name: ", 1)[1].split("\n", 1)[0]
    window = int("".join(c for c in name if c.isdigit()) or 5)
    return f"Sure.\n```python\n{ma_code(window)}```\nThis computes {name}."


def make(server: FakeOpenAIServer, **kw: Any) -> LLMCoder:
    kw.setdefault("backoff_initial_s", 0.01)
    kw.setdefault("backoff_max_s", 0.05)
    return LLMCoder(api_key=server.api_key, base_url=server.base_url, model="fake-chat", **kw)


def test_is_a_base_coder(fake_openai: FakeOpenAIServer) -> None:
    assert isinstance(make(fake_openai), BaseCoder)


def test_prompt_holds_task_contract_and_all_knowledge(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.chat_handler = reply_with_code
    target = ma_task(10)
    similar = knowledge(ma_task(5), ma_code(5) + "# SIMILAR_MARK\n", kid="sim")
    comp = knowledge(ma_task(60), ma_code(60) + "# COMPONENT_MARK\n", kid="comp")
    trace = Knowledge(
        target,
        Workspace({"main.py": "# FORMER_MARK\n"}),
        failed("NameError: x FEEDBACK_MARK"),
        "tr",
    )
    fix = ErrorFix(
        "NameError: <name>",
        "NameError: name 'FIX_ERROR_MARK' is not defined",
        knowledge(ma_task(20), "# FAILING_MARK\n", failed("NameError"), kid="fx-bad"),
        knowledge(ma_task(20), "# FIXED_MARK\n", kid="fx-good"),
    )
    qk = qk_for(target, [(similar, 0.9)], [trace], [fix], [(comp, 0.5)])
    last = failed("NameError: LAST_FEEDBACK_MARK", "NameError: <name>")
    res = make(fake_openai).implement_with_info(target, qk, last)
    (request,) = fake_openai.requests_to(CHAT)
    system, user = (m["content"] for m in request.body["messages"])
    assert "result.parquet" in system and "daily_pv.parquet" in system
    for mark in (
        "Name: MA10",
        "Mean($close, 10)/$close",
        "SIMILAR_MARK",
        "COMPONENT_MARK",
        "FORMER_MARK",
        "FEEDBACK_MARK",
        "FIX_ERROR_MARK",
        "FAILING_MARK",
        "FIXED_MARK",
        "LAST_FEEDBACK_MARK",
    ):
        assert mark in user, mark
    assert res.used_knowledge_ids == ("sim", "comp", "tr", "fx-bad", "fx-good")
    assert res.workspace.code == ma_code(10)
    assert res.strategy == "llm" and res.llm_calls == 1 and res.cache_hits == 0


def test_prompt_sections_are_capped(fake_openai: FakeOpenAIServer) -> None:
    target = ma_task(10)
    many = [
        (knowledge(ma_task(w), ma_code(w) + f"# M{w}\n", kid=f"k{w}"), 1.0) for w in range(2, 9)
    ]
    res = make(fake_openai, max_similar=2).implement_with_info(target, qk_for(target, many), None)
    user = fake_openai.requests_to(CHAT)[0].body["messages"][1]["content"]
    assert "# M2" in user and "# M3" in user and "# M4" not in user
    assert res.used_knowledge_ids == ("k2", "k3")


def test_function_task_shows_its_prompt_and_function_contract(
    fake_openai: FakeOpenAIServer,
) -> None:
    prompt = 'def add(a, b):\n    """Return a + b."""\n'
    task = Task("he/0", "add", "add numbers", extra={"prompt": prompt, "entry_point": "add"})
    fake_openai.chat_handler = lambda body: "```python\ndef add(a, b):\n    return a + b\n```"
    ws = make(fake_openai).implement(task, QueriedKnowledge(), None)
    system, user = (m["content"] for m in fake_openai.requests_to(CHAT)[0].body["messages"])
    assert prompt.rstrip() in user
    assert "signature" in system and "parquet" not in system
    assert ws.code == "def add(a, b):\n    return a + b\n"


def test_suite_contract_in_task_extra_wins(fake_openai: FakeOpenAIServer) -> None:
    task = Task("x/1", "X", "d", extra={"contract": "WRITE_OUTPUT_TO_SPECIAL_FILE"})
    make(fake_openai).implement(task, QueriedKnowledge(), None)
    system, user = (m["content"] for m in fake_openai.requests_to(CHAT)[0].body["messages"])
    assert "WRITE_OUTPUT_TO_SPECIAL_FILE" in system
    assert "WRITE_OUTPUT_TO_SPECIAL_FILE" not in user


def test_reply_without_code_becomes_a_failing_workspace(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.chat_handler = lambda body: "I am not able to write this factor, sorry."
    res = make(fake_openai).implement_with_info(ma_task(5), QueriedKnowledge(), None)
    assert res.notes.startswith("no code extracted")
    assert res.extra["extraction"] == "none"
    assert "no code could be extracted" in res.workspace.code
    res.workspace.write_to(tmp_path)
    proc = subprocess.run(
        [sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode != 0
    assert "contained no code" in proc.stderr


def test_retries_429_and_5xx_then_succeeds(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.chat_handler = reply_with_code
    fake_openai.fail_next(2, status=429, path=CHAT)
    fake_openai.fail_next(1, status=503, path=CHAT)
    res = make(fake_openai, max_retries=5).implement_with_info(
        ma_task(5), QueriedKnowledge(), None
    )
    assert res.workspace.code == ma_code(5)
    assert len(fake_openai.requests_to(CHAT)) == 4
    assert res.llm_calls == 1


def test_gives_up_after_max_retries(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(5, status=500, path=CHAT)
    with pytest.raises(EndpointError, match="HTTP 500 after 3 attempts") as info:
        make(fake_openai, max_retries=2).implement(ma_task(5), QueriedKnowledge(), None)
    assert info.value.kind == "server" and info.value.status == 500
    assert not info.value.configuration
    assert len(fake_openai.requests_to(CHAT)) == 3


def test_bad_key_fails_at_once_without_retries(fake_openai: FakeOpenAIServer) -> None:
    coder = LLMCoder(api_key="wrong", base_url=fake_openai.base_url, model="fake-chat")
    with pytest.raises(EndpointError, match="refused the API key") as info:
        coder.implement(ma_task(5), QueriedKnowledge(), None)
    assert info.value.kind == "auth" and info.value.configuration
    assert isinstance(info.value, LLMError)
    assert len(fake_openai.requests_to(CHAT)) == 1


def test_tokens_and_cost_are_recorded(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.chat_handler = reply_with_code
    prices = {"fake-chat": (1.0, 2.0)}
    res = make(fake_openai, prices=prices).implement_with_info(
        ma_task(5), QueriedKnowledge(), None
    )
    body = fake_openai.requests_to(CHAT)[0].body
    want_prompt = sum(len(m["content"].split()) for m in body["messages"])
    want_completion = len(reply_with_code(body).split())
    assert (res.prompt_tokens, res.completion_tokens) == (want_prompt, want_completion)
    assert res.cost_usd == pytest.approx((want_prompt * 1.0 + want_completion * 2.0) / 1e6)
    assert LLMSettings(model="unknown-model").cost_usd(1000, 1000) == 0.0


def test_read_write_cache_records_then_hits(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.chat_handler = reply_with_code
    store = get_store(f"sqlite:///{tmp_path / 'lab.db'}")
    coder = make(fake_openai, cache_mode="read_write", store=store)
    first = coder.implement_with_info(ma_task(5), QueriedKnowledge(), None)
    second = coder.implement_with_info(ma_task(5), QueriedKnowledge(), None)
    assert len(fake_openai.requests_to(CHAT)) == 1
    assert (first.llm_calls, first.cache_hits, second.llm_calls, second.cache_hits) == (1, 0, 0, 1)
    assert second.workspace == first.workspace
    assert second.prompt_tokens == first.prompt_tokens > 0
    assert store.count_records("llm_cache") == 1
    make(fake_openai, cache_mode="read_write", store=store).implement(
        ma_task(10), QueriedKnowledge(), None
    )
    assert store.count_records("llm_cache") == 2
    store.close()


def test_cache_off_always_calls(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    store = get_store(f"sqlite:///{tmp_path / 'lab.db'}")
    coder = make(fake_openai, cache_mode="off", store=store)
    for _ in range(2):
        coder.implement(ma_task(5), QueriedKnowledge(), None)
    assert len(fake_openai.requests_to(CHAT)) == 2
    assert store.count_records("llm_cache") == 0
    store.close()


def _run(coder: LLMCoder, tasks: list[Task]) -> list[Workspace]:
    out = []
    for t in tasks:
        qk = qk_for(t, similar=[(knowledge(ma_task(3), ma_code(3)), 0.5)])
        out.append(coder.implement(t, qk, failed("boom", "fp")))
    return out


def test_replay_only_reproduces_a_recorded_run_without_network(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lab.db'}"
    tasks = [ma_task(w) for w in (5, 10, 20)]
    with FakeOpenAIServer(chat_handler=reply_with_code) as server:
        with make(server, store=url, cache_mode="read_write", temperature=0.7) as recorder:
            recorded = _run(recorder, tasks)
        dead_url = server.base_url
    # The server is gone: any network call would fail; replay needs no key either.
    with LLMCoder(
        base_url=dead_url, model="fake-chat", store=url, cache_mode="replay_only", temperature=0.7
    ) as replayer:
        assert _run(replayer, tasks) == recorded
        assert replayer.cache is not None and replayer.cache.hits == 3
        replayer.close()  # closing is idempotent and the coder reopens on use
        assert _run(replayer, tasks[:1]) == recorded[:1]


def test_replay_only_miss_raises_naming_model_and_digest(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lab.db'}"
    coder = LLMCoder(model="fake-chat", store=url, cache_mode="replay_only")
    with pytest.raises(ReplayMissError, match=r"model 'fake-chat', request [0-9a-f]{12}"):
        coder.implement(ma_task(5), QueriedKnowledge(), None)


def test_replay_only_needs_a_store() -> None:
    with pytest.raises(ConfigurationError, match="replay_only"):
        LLMCoder(cache_mode="replay_only")


def test_missing_api_key_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAIServer
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("COSTEER_LAB_OPENAI__API_KEY", raising=False)
    get_settings.cache_clear()
    try:
        coder = LLMCoder(base_url=fake_openai.base_url, model="fake-chat")
        with pytest.raises(ConfigurationError, match="no API key"):
            coder.implement(ma_task(5), QueriedKnowledge(), None)
    finally:
        get_settings.cache_clear()


def test_key_and_url_fall_back_to_the_environment(
    monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.chat_handler = reply_with_code
    monkeypatch.setenv("OPENAI_API_KEY", fake_openai.api_key)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.delenv("COSTEER_LAB_OPENAI__API_KEY", raising=False)
    monkeypatch.delenv("COSTEER_LAB_OPENAI__BASE_URL", raising=False)
    get_settings.cache_clear()
    try:
        ws = LLMCoder(model="fake-chat").implement(ma_task(5), QueriedKnowledge(), None)
    finally:
        get_settings.cache_clear()
    assert ws.code == ma_code(5)


def test_config_round_trip_without_secrets(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lab.db'}"
    coder = LLMCoder(api_key="sk-secret", model="m1", temperature=0.3, store=url, seed=7)
    cfg = coder.to_config()
    assert "api_key" not in cfg and "sk-secret" not in str(cfg)
    assert cfg["store"] == url and cfg["name"] == "llm"
    again = coder_from_config(cfg)
    assert isinstance(again, LLMCoder)
    assert again.settings.model_dump(exclude={"api_key"}) == coder.settings.model_dump(
        exclude={"api_key"}
    )
    with_key = coder_from_config(coder.to_config(include_secrets=True))
    assert isinstance(with_key, LLMCoder) and with_key.settings.api_key == "sk-secret"


def test_unknown_setting_is_refused_with_a_hint() -> None:
    with pytest.raises(ConfigurationError, match="did you mean 'temperature'"):
        LLMCoder(temprature=0.5)
    with pytest.raises(ConfigurationError, match="cache_mode"):
        LLMCoder(cache_mode="sometimes")


def test_threads_share_a_store_url(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.chat_handler = reply_with_code
    coder = make(fake_openai, store=f"sqlite:///{tmp_path / 'lab.db'}")
    tasks = [ma_task(w) for w in (5, 10, 15, 20)] * 2
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda t: coder.implement(t, QueriedKnowledge(), None), tasks))
    assert [r.code for r in results] == [ma_code(w) for w in (5, 10, 15, 20)] * 2
    assert 4 <= len(fake_openai.requests_to(CHAT)) <= 8


def test_request_parameters_follow_the_settings(fake_openai: FakeOpenAIServer) -> None:
    make(fake_openai, temperature=0.2, max_tokens=99, seed=5).implement(
        ma_task(5), QueriedKnowledge(), None
    )
    make(fake_openai, max_tokens_param="max_completion_tokens", send_seed=False).implement(
        ma_task(5), QueriedKnowledge(), None
    )
    first, second = (r.body for r in fake_openai.requests_to(CHAT))
    assert (first["model"], first["temperature"], first["max_tokens"], first["seed"]) == (
        "fake-chat",
        0.2,
        99,
        5,
    )
    assert "max_tokens" not in second and second["max_completion_tokens"] == 2048
    assert "seed" not in second


def test_llm_coder_runs_through_the_evolution_job(fake_openai: FakeOpenAIServer) -> None:
    from costeer_lab.evolve._strategy import implement_job

    fake_openai.chat_handler = reply_with_code
    config = make(fake_openai).to_config(include_secrets=True)
    payload = {
        "coder": {**config, "seed": 11},
        "task": ma_task(20).to_dict(),
        "knowledge": QueriedKnowledge().to_dict(),
        "last_feedback": None,
    }
    out = implement_job(payload)
    assert out["error"] is None, out["error"]
    assert out["workspace"]["files"]["main.py"] == ma_code(20)
    assert out["prompt_tokens"] > 0 and out["completion_tokens"] > 0
    assert fake_openai.requests_to(CHAT)[0].body["seed"] == 11
