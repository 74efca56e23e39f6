"""The LLM planner against a local OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.context import (
    LLMPlanner,
    RichMemoryManager,
    TaskAgent,
    TaskContext,
    ToolBox,
    parse_step,
)
from costeer_lab.errors import ConfigurationError, LLMError
from costeer_lab.sandbox import Limits, Sandbox
from costeer_lab.settings import LLMSettings
from costeer_lab.testing import FakeOpenAIServer

from .samples import DOCUMENTED

FAST = LLMSettings(max_retries=1, backoff_initial_s=0.0, backoff_max_s=0.0, timeout_s=10)


def _user(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def scripted_chat(body: dict[str, Any]) -> str:
    """A model that writes gcd.py, runs it, then finishes — reading only its prompt."""
    prompt = _user(body)
    if "- gcd.py (code" not in prompt:
        step = {"tool": "write_file", "inputs": {"path": "gcd.py", "content": DOCUMENTED},
                "reasoning": "write the solution"}  # fmt: skip
    elif "run_python" not in prompt.split("Actions so far")[1]:
        step = {"tool": "run_python", "inputs": {"path": "gcd.py"}, "reasoning": "check it"}
    else:
        step = {"tool": "finish", "reasoning": "done"}
    return "Here is my step:\n```json\n" + json.dumps(step) + "\n```"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(chat_handler=scripted_chat) as s:
        yield s


def _planner(server: FakeOpenAIServer, **kw: Any) -> LLMPlanner:
    return LLMPlanner(base_url=server.base_url, api_key=server.api_key, settings=FAST, **kw)


def test_llm_planned_run_writes_and_completes(
    server: FakeOpenAIServer, mm: RichMemoryManager, tmp_path: Path
) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
    planner = _planner(server, model="planner-model")
    with Sandbox(Limits(wall_time_s=30, cpu_time_s=30, memory_mb=2048)) as sb:
        agent = TaskAgent(mm, planner, ToolBox(tmp_path, sandbox=sb))
        result = agent.run("Implement gcd in Python", task_id="t")
    # the documented file is not complete until it ran: two planning turns
    actions = result.context.actions
    assert result.completed and [a.type for a in actions] == ["write_file", "run_python"]
    assert result.context.actions[0].context.reasoning == "write the solution"
    request, _ = server.requests_to("/v1/chat/completions")
    body = request.body
    assert body["model"] == "planner-model" and body["temperature"] == 0.0 and body["seed"] == 0
    prompt = _user(body)
    assert "Task (coding_task): Implement gcd in Python" in prompt
    assert "- run_python:" in prompt and "Actions so far (0):" in prompt
    assert "still misses: code file, code implementation, documentation, execution" in prompt
    assert len(planner.transcript) == 2


def test_llm_planner_sees_the_history_and_can_finish(
    server: FakeOpenAIServer, mm: RichMemoryManager, tmp_path: Path
) -> None:
    """A general task: the model writes, runs, then says finish — each turn sees the last."""
    planner = _planner(server)
    with Sandbox(Limits(wall_time_s=30, cpu_time_s=30, memory_mb=2048)) as sb:
        agent = TaskAgent(mm, planner, ToolBox(tmp_path, sandbox=sb))
        result = agent.run("Implement gcd", task_type="general_task")
    # a general task completes on its first successful result with evidence
    assert result.completed and result.n_actions == 1
    ctx = mm.create_task("Implement gcd in Python", task_id="g2")
    ctx = mm.add_action("g2", "write_file", {"path": "gcd.py"}, _write_output(), judge=False)
    step = planner.plan(ctx)
    assert step is not None and step.tool == "run_python" and step.inputs == {"path": "gcd.py"}
    prompt = _user(server.requests_to("/v1/chat/completions")[-1].body)
    assert 'act-0001 write_file {"path": "gcd.py"} -> ok' in prompt
    ctx = mm.add_action("g2", "run_python", {"path": "gcd.py"}, _write_output(), judge=False)
    assert planner.plan(ctx) is None  # finish


def _write_output() -> Any:
    from costeer_lab.context import Output

    return Output(True, "wrote gcd.py", files={"gcd.py": DOCUMENTED})


def test_unusable_replies_raise_llm_error(mm: RichMemoryManager) -> None:
    ctx = TaskContext("t", "simple_question", "6 * 7?")
    refusal = FakeOpenAIServer(chat_handler=lambda body: "I would rather not.")
    with refusal, pytest.raises(LLMError, match=r"not a JSON object with a 'tool' name"):
        _planner(refusal).plan(ctx)
    listy = FakeOpenAIServer(chat_handler=lambda body: '{"tool": "answer", "inputs": [1]}')
    with listy, pytest.raises(LLMError, match="'inputs' must be an object"):
        _planner(listy).plan(ctx)
    assert parse_step('{"tool": "finish"}') is None


def test_server_errors_are_retried_then_reported(server: FakeOpenAIServer) -> None:
    ctx = TaskContext("t", "coding_task", "Implement gcd in Python")
    server.fail_next(1, status=500)
    step = _planner(server).plan(ctx)  # one retry allowed
    assert step is not None and step.tool == "write_file"
    assert len(server.requests_to("/v1/chat/completions")) == 2
    server.fail_next(2, status=503)
    with pytest.raises(LLMError, match="failed"):
        _planner(server).plan(ctx)
    server.fail_next(1, status=401)
    with pytest.raises(LLMError, match="401"):
        _planner(server).plan(ctx)


def test_missing_api_key_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, settings_env: Any
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("COSTEER_LAB_OPENAI__API_KEY", raising=False)
    monkeypatch.delenv("COSTEER_LAB_LLM__API_KEY", raising=False)
    settings_env()
    planner = LLMPlanner(base_url="http://127.0.0.1:9/v1", settings=LLMSettings())
    with pytest.raises(ConfigurationError, match="no API key"):
        planner.plan(TaskContext("t", "simple_question", "6 * 7?"))


def test_a_planner_failure_mid_run_keeps_what_was_recorded(
    mm: RichMemoryManager, tmp_path: Path
) -> None:
    replies = iter(
        [
            '{"tool": "write_file", "inputs": {"path": "notes.txt", "content": "draft"}}',
            "sorry, I lost track",
        ]
    )
    with FakeOpenAIServer(chat_handler=lambda body: next(replies)) as server:
        agent = TaskAgent(mm, _planner(server), ToolBox(tmp_path))
        with pytest.raises(LLMError, match="lost track"):
            agent.run("Implement a tidy-up script in Python", task_id="g")
    ctx = mm.get_task("g")
    assert [a.type for a in ctx.actions] == ["write_file"] and ctx.files[0].path == "notes.txt"


def test_replies_are_cached_and_replayed_without_the_server(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    ctx = TaskContext("t", "simple_question", "6 * 7?")
    reply = '{"tool": "answer", "inputs": {"text": "42"}}'
    with FakeOpenAIServer(chat_handler=lambda body: reply) as server:
        first = _planner(server, cache=url).plan(ctx)
        base_url = server.base_url
    replay = LLMPlanner(
        base_url=base_url,  # stopped: only the cache can answer
        api_key="k",
        settings=LLMSettings(max_retries=0, cache_mode="replay_only"),
        cache=url,
    )
    assert replay.plan(ctx) == first and first is not None and first.tool == "answer"
    assert replay.client.cache is not None and replay.client.cache.hits == 1


def _proposals(body: dict[str, Any]) -> str:
    """A model proposing three alternatives (one repeated) whatever the task."""
    assert "Propose up to 3 DIFFERENT tool calls" in str(body["messages"][0]["content"])
    steps = [
        {"tool": "read_file", "inputs": {"path": "gcd.py"}, "reasoning": "look first"},
        {
            "tool": "write_file",
            "inputs": {"path": "gcd.py", "content": DOCUMENTED},
            "reasoning": "write it",
        },
        {"tool": "read_file", "inputs": {"path": "gcd.py"}, "reasoning": "again"},
        {"tool": "finish", "reasoning": "or stop"},
    ]
    return "Options:\n" + json.dumps(steps)


def test_llm_candidates_are_scored_by_what_they_would_close() -> None:
    with FakeOpenAIServer(chat_handler=_proposals) as server:
        planner = _planner(server)
        ctx = TaskContext("t", "coding_task", "Implement gcd in Python")
        ranked = planner.candidate_steps(ctx, n=3)
    # the model listed read_file first; writing the code closes requirements, reading none
    assert [s.tool for s in ranked] == ["write_file", "read_file"]
    write, read = ranked
    assert write.score > read.score == 0.0 and read.closes == ()
    assert "code file" in write.closes and write.expected_evidence
    assert write.reasoning == "write it" and read.reasoning == "look first"  # first proposal kept
    assert len(planner.transcript) == 1


def test_llm_candidates_refuse_a_reply_that_is_not_a_list() -> None:
    with FakeOpenAIServer(chat_handler=lambda body: '{"tool": "answer"}') as server:
        with pytest.raises(LLMError, match="not a JSON list of steps"):
            _planner(server).candidate_steps(TaskContext("t", "simple_question", "?"))
        with pytest.raises(LLMError, match="n >= 1"):
            _planner(server).candidate_steps(TaskContext("t", "simple_question", "?"), n=0)
