"""LLMCoder with ``api="completions"`` (base models): a code prompt continued until a stop
sequence, against the real local server; and the request seed of common random numbers."""

from __future__ import annotations

from typing import Any

from costeer_lab.coders import LLMCoder, LLMSettings
from costeer_lab.coders._prompts import COMPLETION_STOP, build_completion_prompt
from costeer_lab.evaluate import PythonFunctionEvaluator
from costeer_lab.evolve import EvolvingStrategy, crn_stream
from costeer_lab.records import Knowledge, QueriedKnowledge, Task, Workspace
from costeer_lab.suites import load_suite
from costeer_lab.testing import FakeOpenAIServer

from ._coder_helpers import failed, knowledge, ma_task, qk_for

DONE = "/v1/completions"
STUB = 'def inc(x: int) -> int:\n    """Return x plus one."""\n'
TASK = Task("he/inc", "inc", "Return x plus one.", extra={"prompt": STUB, "entry_point": "inc"})
SOLVED = Task("he/dec", "dec", "Return x minus one.", extra={"prompt": "def dec(x):\n"})
SOLVED_CODE = 'def dec(x):\n    """Return x minus one."""\n    return x - 1\n'


def make(server: FakeOpenAIServer, **kw: Any) -> LLMCoder:
    return LLMCoder(
        api_key=server.api_key,
        base_url=server.base_url,
        model="fake-chat",
        api="completions",
        max_retries=0,
        **kw,
    )


def test_prompt_is_examples_then_failed_attempt_then_stub() -> None:
    trace = Knowledge(TASK, Workspace({"main.py": STUB + "    return x\n"}), failed("E1"), "tr")
    qk = qk_for(TASK, [(knowledge(SOLVED, SOLVED_CODE, kid="sim"), 0.9)], [trace])
    last = failed("AssertionError: inc(1) returned 1, expected 2")
    text, stop, used = build_completion_prompt(TASK, qk, last, LLMSettings(api="completions"))
    assert stop == COMPLETION_STOP and used == ("sim", "tr")
    example, comment, target = text.split("\n\n\n")
    assert example == SOLVED_CODE.rstrip("\n")
    assert all(line.startswith("#") for line in comment.splitlines())
    assert "#     return x" in comment and "inc(1) returned 1, expected 2" in comment
    assert target == STUB


def test_completion_coder_writes_stub_plus_completion_and_it_passes(
    fake_openai: FakeOpenAIServer,
) -> None:
    # the model goes on past the function: the stop sequences cut it
    fake_openai.completion_handler = lambda body: "    return x + 1\n\n\nprint(inc(2))\n"
    res = make(fake_openai).implement_with_info(TASK, QueriedKnowledge(), None, stream=77)
    (req,) = fake_openai.requests_to(DONE)
    assert req.body["prompt"].endswith(STUB) and req.body["stop"] == list(COMPLETION_STOP)
    assert req.body["seed"] == 77 and "messages" not in req.body
    assert res.workspace.code == STUB + "    return x + 1"
    assert res.extra["extraction"] == "completion" and res.llm_calls == 1
    tests = Workspace({"main.py": "", "tests.py": "def check(f):\n    assert f(1) == 2\n"})
    fb = PythonFunctionEvaluator(runner="inprocess").evaluate(TASK, res.workspace, tests)
    assert fb.final_decision is True, fb.execution


def test_humaneval_task_prompt_ends_in_its_stub(fake_openai: FakeOpenAIServer) -> None:
    suite = load_suite("humaneval", limit=2)
    task = suite.task("humaneval/1")
    make(fake_openai, stop=["\n\n\n"]).implement(task, QueriedKnowledge(), None)
    body = fake_openai.requests_to(DONE)[0].body
    assert body["prompt"] == task.extra["prompt"].rstrip("\n") + "\n"
    assert body["stop"] == ["\n\n\n"]


def test_factor_task_falls_back_to_text_ending_in_a_fence(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.completion_handler = lambda body: "x = 1\n```\nmore prose"
    ws = make(fake_openai).implement(ma_task(5), QueriedKnowledge(), None)
    body = fake_openai.requests_to(DONE)[0].body
    assert body["prompt"].endswith("### Assistant\n```python\n") and "Name: MA5" in body["prompt"]
    assert body["stop"] == ["\n```"]
    assert ws.code == "x = 1\n"


def test_request_seed_is_the_stream_the_same_in_every_arm(fake_openai: FakeOpenAIServer) -> None:
    """Common random numbers: two arms (different knowledge) implementing the same task at the
    same attempt with the same run seed send the same request seed; another attempt another."""
    coder = {**make(fake_openai).to_config(include_secrets=True), "api": "chat"}
    strategy = EvolvingStrategy(coder)
    task = ma_task(5)
    with_knowledge = qk_for(task, [(knowledge(ma_task(10), "x = 1\n", kid="k"), 0.5)])
    for qk in (QueriedKnowledge(), with_knowledge):  # arm A, arm B
        strategy.implement([task], qk, {}, seed=3, attempts={task.id: 1})
    strategy.implement([task], QueriedKnowledge(), {}, seed=3, attempts={task.id: 2})
    bodies = [r.body for r in fake_openai.requests_to("/v1/chat/completions")]
    assert bodies[0]["messages"] != bodies[1]["messages"]
    assert [b["seed"] for b in bodies] == [
        crn_stream(3, task.id, 1),
        crn_stream(3, task.id, 1),
        crn_stream(3, task.id, 2),
    ]
    assert len({b["seed"] for b in bodies}) == 2
