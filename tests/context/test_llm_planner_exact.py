"""Exact prompts, requests and parsing of the LLM planner against the local OpenAI-compatible
server on 127.0.0.1 (fast: the mutation run of ``context/_llm_planner.py`` runs these per mutant).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.context import (
    Action,
    LLMPlanner,
    Output,
    PlannedStep,
    TaskContext,
    Validator,
    parse_step,
)
from costeer_lab.context._llm_planner import (
    SYSTEM_PROMPT,
    candidates_prompt,
    describe_context,
    parse_steps,
)
from costeer_lab.context._records import FileReference
from costeer_lab.errors import ConfigurationError, LLMError
from costeer_lab.llm import CacheMode
from costeer_lab.settings import LLMSettings
from costeer_lab.store import SQLiteStore
from costeer_lab.testing import FakeOpenAIServer

FAST = LLMSettings(max_retries=0, backoff_initial_s=0.0, backoff_max_s=0.0, timeout_s=10)
_LONG = "abcdefghij" * 20  # 200 characters

_TOOLS_BLOCK = """Tools:
- write_file: path (relative), content (text)
- read_file: path (relative)
- run_python: path (relative .py file run as __main__ in the sandbox)
- evaluate: path (relative test file; its test_* functions are run in the sandbox)
- answer: text (the answer or summary), sources (list of strings, optional)
- validate: (none) — checks the task's completion rule"""


def _action(n: int, tool: str, inputs: dict[str, Any], out: Output) -> Action:
    return Action(f"act-{n:04d}", tool, inputs, out, float(n), out.success)


def _file(path: str, content: str) -> FileReference:
    return FileReference(
        "file-1", path, "documentation", content, len(content), "act-0001", 1.0, 1.0, "sum"
    )


def _history() -> TaskContext:
    return TaskContext(
        "t",
        "research_task",
        "Research how factor returns decay",
        actions=(
            _action(
                1,
                "write_file",
                {"path": "notes.md", "content": _LONG},
                Output(True, "wrote notes.md (200 characters)"),
            ),
            _action(2, "run_python", {"path": Path("x.py"), "n": 3}, Output(False, "E" * 161)),
            _action(3, "read_file", {"path": "a" * 60}, Output(True, "r" * 160)),
        ),
        files=(_file("notes.md", _LONG),),
    )


def test_describe_context_is_exact() -> None:
    text = describe_context(_history())
    expected = "\n".join(
        [
            "Task (research_task): Research how factor returns decay",
            "",
            _TOOLS_BLOCK,
            "",
            "Actions so far (3):",
            # inputs are cut at 60 characters, results at 160 ("..." included)
            '- act-0001 write_file {"path": "notes.md", "content": "' + _LONG[:57]
            + '..."} -> ok: wrote notes.md (200 characters)',
            # a value JSON cannot hold is shown as text; a failed action says FAILED
            '- act-0002 run_python {"path": "\\"x.py\\"", "n": "3"} -> FAILED: '
            + "E" * 157 + "...",
            '- act-0003 read_file {"path": "' + "a" * 60 + '"} -> ok: ' + "r" * 160,
            "",
            "Files:",
            "- notes.md (documentation, 200 bytes)",
            "",
            "Completion rule still misses: nothing",
        ]
    )  # fmt: skip
    assert text == expected


def test_describe_context_of_a_fresh_and_a_complete_task() -> None:
    fresh = TaskContext("q", "simple_question", "6 * 7?")
    assert describe_context(fresh) == "\n".join(
        ["Task (simple_question): 6 * 7?", "", _TOOLS_BLOCK, "", "Actions so far (0):", "",
         "Files:", "", "Completion rule still misses: answer, evidence"]
    )  # fmt: skip
    answered = TaskContext(
        "q", "simple_question", "6 * 7?",
        actions=(_action(1, "answer", {"text": "42"}, Output(True, "42")),),
    )  # fmt: skip
    assert describe_context(answered).endswith(
        '\n- act-0001 answer {"text": "42"} -> ok: 42\n\nFiles:\n\n'
        "Completion rule still misses: evidence"
    )


def test_candidates_prompt_is_exact() -> None:
    assert candidates_prompt(4) == (
        "You are the planner of a coding and research agent. Propose up to 4 DIFFERENT tool "
        "calls that could be the next step, best first. Reply with a single JSON list and "
        'nothing else: [{"tool": "<name>", "inputs": {...}, "reasoning": "<one sentence>"}, '
        "...]. Reply [] when nothing more can be done."
    )


def test_parse_step_keeps_tool_inputs_and_reasoning() -> None:
    assert parse_step('{"tool": "read_file", "inputs": {"path": "a.py"}}') == PlannedStep(
        "read_file", {"path": "a.py"}, ""
    )
    assert parse_step('ok: {"tool": "validate", "reasoning": 7} done') == PlannedStep(
        "validate", {}, "7"
    )
    assert parse_step('{"tool": "finish", "inputs": 3}') is None
    with pytest.raises(LLMError) as err:
        parse_step("{not json} " + "z" * 200)
    assert str(err.value) == (
        "the planner model's reply is not a JSON object with a 'tool' name: "
        + repr("{not json} " + "z" * 146 + "...")
    )
    with pytest.raises(LLMError) as err:
        parse_step('{"tool": 3, "inputs": {}}')
    assert "not a JSON object with a 'tool' name" in str(err.value)
    with pytest.raises(LLMError) as err:
        parse_step('{"tool": "answer", "inputs": ["x"]}')
    assert str(err.value) == "the planner model's 'inputs' must be an object; got '[\"x\"]'"


def test_parse_steps_drops_finish_and_refuses_what_is_not_a_list() -> None:
    steps = parse_steps(
        'Options: [{"tool": "answer", "inputs": {"text": "1"}}, {"tool": "finish"}]'
    )
    assert steps == [PlannedStep("answer", {"text": "1"}, "")]
    assert parse_steps("[]") == []
    for reply in ("no list here", "[1, 2", "{}"):
        with pytest.raises(LLMError) as err:
            parse_steps(reply)
        assert str(err.value) == (
            f"the planner model's reply is not a JSON list of steps: {reply!r}"
        )
    with pytest.raises(LLMError, match="not a JSON object with a 'tool' name"):
        parse_steps('[{"inputs": {}}]')


def _reply(text: str) -> Any:
    return lambda body: text


def test_plan_sends_the_system_prompt_and_the_context() -> None:
    ctx = TaskContext("q", "simple_question", "6 * 7?")
    reply = '{"tool": "answer", "inputs": {"text": "42"}, "reasoning": "known"}'
    settings = FAST.model_copy(update={"temperature": 0.25, "seed": 11, "max_tokens": 333})
    with FakeOpenAIServer(chat_handler=_reply(reply)) as server:
        planner = LLMPlanner(base_url=server.base_url, api_key=server.api_key, settings=settings)
        assert planner.plan(ctx) == PlannedStep("answer", {"text": "42"}, "known")
        [request] = server.requests_to("/v1/chat/completions")
        base_url = server.base_url
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": describe_context(ctx)},
    ]
    assert request.body["messages"] == messages
    assert request.body["temperature"] == 0.25 and request.body["seed"] == 11
    assert request.body[settings.max_tokens_param] == 333
    assert planner.transcript == [(messages, reply)]
    assert planner.client.purpose == "LLMPlanner"
    assert planner.settings.base_url == base_url


def test_a_missing_key_names_the_planner(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "COSTEER_LAB_OPENAI__API_KEY", "COSTEER_LAB_LLM__API_KEY"):
        monkeypatch.delenv(name, raising=False)
    planner = LLMPlanner(
        base_url="http://127.0.0.1:9/v1", model="m1", settings=LLMSettings(api_key=None)
    )
    with pytest.raises(ConfigurationError) as err:
        planner.plan(TaskContext("t", "simple_question", "?"))
    assert str(err.value).startswith("LLMPlanner (model 'm1') has no API key")


def test_candidate_steps_default_to_three_and_drop_repeats_in_any_key_order() -> None:
    proposals = [
        {"tool": "write_file", "inputs": {"path": "a.md", "content": "x"}, "reasoning": "first"},
        {"tool": "write_file", "inputs": {"content": "x", "path": "a.md"}, "reasoning": "again"},
        {"tool": "read_file", "inputs": {"path": "a.md"}},
        {"tool": "read_file", "inputs": {"path": "b.md"}},
        {"tool": "read_file", "inputs": {"path": "c.md"}},
    ]
    with FakeOpenAIServer(chat_handler=_reply(json.dumps(proposals))) as server:
        planner = LLMPlanner(base_url=server.base_url, api_key=server.api_key, settings=FAST)
        ctx = TaskContext("t", "general_task", "Tidy the notes")
        ranked = planner.candidate_steps(ctx)
        [request] = server.requests_to("/v1/chat/completions")
    assert request.body["messages"] == [
        {"role": "system", "content": candidates_prompt(3)},
        {"role": "user", "content": describe_context(ctx)},
    ]
    # the repeat (same inputs, other key order) is dropped; three of the rest are kept
    assert sorted((s.tool, s.inputs["path"], s.reasoning) for s in ranked) == [
        ("read_file", "a.md", ""), ("read_file", "b.md", ""), ("write_file", "a.md", "first"),
    ]  # fmt: skip


def test_validator_and_cache_wiring(tmp_path: Path) -> None:
    """No cache: caching is off whatever the settings say; a store or a store URL replays."""
    validator = Validator()
    replay_only = LLMSettings(cache_mode="replay_only", max_retries=0)
    plain = LLMPlanner(base_url="http://127.0.0.1:9/v1", api_key="k", settings=replay_only,
                       validator=validator)  # fmt: skip
    assert plain.validator is validator and plain.transcript == []
    assert plain.client.cache_mode is CacheMode.OFF and plain.client.cache is None
    ctx = TaskContext("q", "simple_question", "6 * 7?")
    reply = '{"tool": "answer", "inputs": {"text": "42"}}'
    store = SQLiteStore(tmp_path / "store.db")
    try:
        with FakeOpenAIServer(chat_handler=_reply(reply)) as server:
            for cache in (store, f"sqlite:///{tmp_path / 'url.db'}"):
                planner = LLMPlanner(
                    base_url=server.base_url, api_key=server.api_key, settings=FAST, cache=cache
                )
                assert planner.client.cache_mode is CacheMode.READ_WRITE
                assert (
                    planner.plan(ctx)
                    == planner.plan(ctx)
                    == PlannedStep("answer", {"text": "42"}, "")
                )
                assert planner.client.cache is not None and planner.client.cache.hits == 1
            assert len(server.requests_to("/v1/chat/completions")) == 2
    finally:
        store.close()
    assert (tmp_path / "url.db").is_file()


def test_candidate_steps_take_n_from_one_and_refuse_less() -> None:
    proposals = '[{"tool": "read_file", "inputs": {"path": "a.md"}}, {"tool": "validate"}]'
    with FakeOpenAIServer(chat_handler=_reply(proposals)) as server:
        planner = LLMPlanner(base_url=server.base_url, api_key=server.api_key, settings=FAST)
        ctx = TaskContext("t", "general_task", "Tidy the notes")
        [only] = planner.candidate_steps(ctx, n=1)
        assert (only.tool, only.inputs) == ("read_file", {"path": "a.md"})
        with pytest.raises(LLMError) as err:
            planner.candidate_steps(ctx, n=0)
        assert str(err.value) == "candidate_steps needs n >= 1; got 0"
        [request] = server.requests_to("/v1/chat/completions")
    assert request.body["messages"][0]["content"] == candidates_prompt(1)
