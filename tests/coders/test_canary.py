"""Canary tests that can fail: a ground-truth marker must never reach a coder.

The scenario is one evolution of a task by a coder: retrieved knowledge, its own failed
attempts, feedback. ``everything_the_coder_saw`` gathers every text the coder received or sent —
its arguments and its outputs for the ReuseCoder, the HTTP requests for the LLMCoder — and the
canary check scans it. Each check is also run with the canary planted on purpose in the task,
in the knowledge and in the feedback, to prove it would catch such a leak: a check that cannot
fail protects nothing.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal

import pytest

from costeer_lab.coders import LLMCoder, ReuseCoder
from costeer_lab.records import Knowledge, SingleFeedback, Task
from costeer_lab.testing import FakeOpenAIServer

from ._coder_helpers import failed, knowledge, ma_code, ma_task, qk_for

CANARY = "CANARY_c0ffee_GROUND_TRUTH"
Leak = Literal["task", "knowledge", "feedback"]


def _scenario(leak: Leak | None) -> tuple[Task, list[Knowledge], SingleFeedback]:
    """The target task, its retrieved knowledge and its last feedback; ``leak`` names where
    the canary is planted (``None``: nowhere — the honest case)."""
    target = ma_task(10)
    if leak == "task":
        target = dataclasses.replace(target, description=target.description + f" ({CANARY})")
    train = [knowledge(ma_task(w), ma_code(w)) for w in (5, 20, 30)]
    if leak == "knowledge":
        train[0] = knowledge(ma_task(5), ma_code(5) + f"# {CANARY}\n")
    message = "values differ from the reference"
    if leak == "feedback":
        message += f": expected {CANARY}"
    return target, train, failed(message)


def _reuse_texts(leak: Leak | None) -> list[str]:
    target, train, last = _scenario(leak)
    coder = ReuseCoder()
    texts: list[str] = []
    traces: list[Knowledge] = []
    for attempt in range(3):
        qk = qk_for(target, similar=[(k, 1.0 - 0.1 * i) for i, k in enumerate(train)],
                    traces=traces)  # fmt: skip
        texts.append(json.dumps([target.to_dict(), qk.to_dict(), last.to_dict()]))
        res = coder.implement_with_info(target, qk, last)
        texts.append(json.dumps(res.to_dict()))
        traces.append(Knowledge(target, res.workspace, last, f"trace{attempt}"))
    return texts


def _llm_texts(server: FakeOpenAIServer, leak: Leak | None) -> list[str]:
    target, train, last = _scenario(leak)
    server.chat_handler = lambda body: f"```python\n{ma_code(10)}```"
    coder = LLMCoder(api_key=server.api_key, base_url=server.base_url, model="fake-chat")
    start = len(server.requests)
    qk = qk_for(target, similar=[(k, 0.9) for k in train])
    coder.implement(target, qk, last)
    return [json.dumps(r.body) for r in server.requests[start:]]


def assert_no_canary(texts: list[str]) -> None:
    hits = [t for t in texts if CANARY in t]
    assert not hits, f"the ground-truth canary reached the coder: {hits[0][:300]}"


def test_reuse_coder_never_sees_the_canary() -> None:
    assert_no_canary(_reuse_texts(None))


@pytest.mark.parametrize("leak", ["task", "knowledge", "feedback"])
def test_reuse_coder_canary_check_catches_a_leak(leak: Leak) -> None:
    with pytest.raises(AssertionError, match="canary reached the coder"):
        assert_no_canary(_reuse_texts(leak))


def test_llm_coder_never_sends_the_canary(fake_openai: FakeOpenAIServer) -> None:
    texts = _llm_texts(fake_openai, None)
    assert texts  # the coder did ask the model
    assert_no_canary(texts)


@pytest.mark.parametrize("leak", ["task", "knowledge", "feedback"])
def test_llm_coder_canary_check_catches_a_leak(fake_openai: FakeOpenAIServer, leak: Any) -> None:
    with pytest.raises(AssertionError, match="canary reached the coder"):
        assert_no_canary(_llm_texts(fake_openai, leak))
