"""LLMCodeCritic against the local fake OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from costeer_lab.evaluate import Evaluator, LLMCodeCritic, MultiEvaluator, PythonFunctionEvaluator
from costeer_lab.records import Task, Workspace
from costeer_lab.testing import FakeOpenAIServer
from costeer_lab.testing.fixtures import fake_openai  # noqa: F401  (fixture)

TASK = Task(
    "d/inc",
    "inc",
    "Add one.",
    formulation="def inc(x)",
    extra={"entry_point": "inc", "contract": "Write main.py defining inc."},
)
GT = Workspace(
    {"main.py": "SECRET_REFERENCE = 1\n", "tests.py": "def check(c):\n    assert c(1) == 2\n"}
)
CODE = Workspace({"main.py": "def inc(x):\n    return x + 2\n"})


def critic(server: FakeOpenAIServer, **kw: Any) -> LLMCodeCritic:
    return LLMCodeCritic(api_key=server.api_key, base_url=server.base_url, max_retries=0, **kw)


def test_review_fills_the_code_section(fake_openai: FakeOpenAIServer) -> None:  # noqa: F811
    fake_openai.chat_handler = lambda body: "1. returns x + 2, expected x + 1\nVERDICT: PROBLEM"
    fb = critic(fake_openai, model="review-model").evaluate(TASK, CODE, GT)
    assert fb.code is not None and fb.code.startswith("1. returns x + 2")
    assert fb.final_decision is True  # no veto by default
    assert fb.details["critic_verdict"] == "PROBLEM"
    (request,) = fake_openai.requests_to("/v1/chat/completions")
    body = request.body
    assert body["model"] == "review-model"
    sent = "\n".join(m["content"] for m in body["messages"])
    assert "return x + 2" in sent and "Write main.py defining inc." in sent
    assert "SECRET_REFERENCE" not in sent and "def check" not in sent  # ground truth stays hidden


def test_veto_fails_on_problem_only(fake_openai: FakeOpenAIServer) -> None:  # noqa: F811
    fake_openai.chat_handler = lambda body: "looks wrong\nVERDICT: PROBLEM"
    assert critic(fake_openai, veto=True).evaluate(TASK, CODE).final_decision is False
    fake_openai.chat_handler = lambda body: "fine\nVERDICT: OK"
    assert critic(fake_openai, veto=True).evaluate(TASK, CODE).final_decision is True


def test_endpoint_errors_do_not_fail_the_task(fake_openai: FakeOpenAIServer) -> None:  # noqa: F811
    fake_openai.fail_next(1, status=500)
    fb = critic(fake_openai).evaluate(TASK, CODE)
    assert fb.final_decision is True
    assert fb.code is not None and fb.code.startswith("code review unavailable")
    bad_key = LLMCodeCritic(api_key="wrong", base_url=fake_openai.base_url, max_retries=0)
    assert "unavailable" in (bad_key.evaluate(TASK, CODE).code or "")


def test_merged_with_a_checking_evaluator(fake_openai: FakeOpenAIServer) -> None:  # noqa: F811
    fake_openai.chat_handler = lambda body: "off by one\nVERDICT: PROBLEM"
    evaluators: list[Evaluator] = [
        PythonFunctionEvaluator(runner="inprocess"),
        critic(fake_openai),
    ]
    with MultiEvaluator(evaluators, kind="thread") as multi:
        (fb,) = multi.evaluate([TASK], [CODE], [GT])
    assert fb is not None and fb.final_decision is False  # the tests fail; AND of decisions
    assert "assertion failed" in (fb.return_checking or "")
    assert fb.code == "off by one\nVERDICT: PROBLEM"


def test_spec_round_trip(fake_openai: FakeOpenAIServer) -> None:  # noqa: F811
    c = critic(fake_openai, veto=True)
    again = LLMCodeCritic.from_spec(c.to_spec())
    assert again.to_spec() == c.to_spec()


def test_reviews_are_cached_and_replayed_without_the_server(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    with FakeOpenAIServer(chat_handler=lambda body: "fine\nVERDICT: OK") as server:
        first = critic(server, cache=url).evaluate(TASK, CODE)
        spec = critic(server, cache=url, cache_mode="replay_only").to_spec()
    again = LLMCodeCritic.from_spec(spec).evaluate(TASK, CODE)  # the server is gone
    assert again == first and first.details["critic_verdict"] == "OK"


def test_a_refused_key_is_noted_with_its_kind(fake_openai: FakeOpenAIServer) -> None:  # noqa: F811
    fb = LLMCodeCritic(api_key="wrong", base_url=fake_openai.base_url).evaluate(TASK, CODE)
    assert fb.final_decision is True and fb.details["critic_error"] == "auth"
    assert "refused the API key" in (fb.code or "")
