"""Component extractors: the built-in one on examples and shipped suites, the LLM one on a
local OpenAI-compatible server."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from costeer_lab.errors import EndpointError
from costeer_lab.knowledge import (
    BuiltinComponentExtractor,
    ComponentExtractor,
    LLMComponentExtractor,
)
from costeer_lab.knowledge._components import _TIGHT_CALL, normalize_component
from costeer_lab.records import Task
from costeer_lab.testing import FakeOpenAIServer


def test_normalize_component() -> None:
    assert normalize_component("op", "np.Mean") == "op:mean"
    assert normalize_component("op", "Average") == "op:mean"
    assert normalize_component("field", "$close") == "field:close"


def test_calls_in_a_description_are_those_of_the_plain_pattern() -> None:
    # the run-start pattern finds the names the plain one finds, in texts dense in names,
    # digits, dots, Unicode letters and digits, and parentheses with or without space before
    plain = re.compile(r"([A-Za-z_][\w.]*)\(")
    rng = random.Random(5)
    texts = ["np.mean(x) of 2Mean( é1abc( 1.a( ..( _f(", "Rank(Ts_Mean($close, 5))"] + [
        "".join(rng.choice("aZ_09.(\u00e9\u0663 \t-$") for _ in range(rng.randrange(16)))
        for _ in range(50_000)
    ]
    assert [_TIGHT_CALL.findall(t) for t in texts] == [plain.findall(t) for t in texts]
    assert _TIGHT_CALL.findall(texts[0]) == ["np.mean", "Mean", "abc", "a", "_f"]


def test_builtin_reads_formula_variables_description_and_code() -> None:
    ex = BuiltinComponentExtractor()
    assert isinstance(ex, ComponentExtractor)
    t = Task(
        "a/CORR5", "CORR5", "Correlation of close with log volume; see `Corr`.",
        formulation="Corr($close, Log($volume+1), 5)",
        variables={"$close": "close", "Corr": "correlation", "d": "window"}, category="CORR",
    )  # fmt: skip
    assert ex.extract(t) == [
        "category:corr", "field:close", "field:volume", "op:corr", "op:log"
    ]  # fmt: skip
    code = "import numpy as np\ndef f(df):\n    return df['vwap'].rolling(5).std()\n"
    got = ex.extract(t, code)
    assert {"op:rolling", "op:std", "field:vwap"} <= set(got)
    # unparsable code: calls are still found by tokenization
    assert ex.extract(t, "x = broken(:") == sorted([*ex.extract(t), "op:broken"])


def test_builtin_python_signature_types() -> None:
    sig = "def f(xs: List[int]) -> List[int]:"
    t = Task("h/1", "f", "Return the sorted unique elements.", sig, category="python_function")
    assert BuiltinComponentExtractor().extract(t) == [
        "category:python_function", "op:f", "op:sort", "op:unique", "type:int", "type:list"
    ]  # fmt: skip


@pytest.mark.parametrize("suite", ["alpha158", "humaneval"])
def test_builtin_gives_components_for_every_shipped_task(suite: str) -> None:
    from costeer_lab.suites import load_suite

    ex = BuiltinComponentExtractor()
    tasks = load_suite(suite).tasks
    assert tasks
    empty = [t.id for t in tasks if not ex.extract(t)]
    assert empty == []
    # components are shared: most tasks share at least one non-category component with another
    seen: dict[str, int] = {}
    for t in tasks:
        for c in ex.extract(t):
            if not c.startswith("category:"):
                seen[c] = seen.get(c, 0) + 1
    assert sum(n > 1 for n in seen.values()) >= 3


def _task() -> Task:
    return Task("a/MA5", "MA5", "mean close", formulation="Mean($close, 5)", category="MA")


def test_llm_extractor_parses_reply_and_memoizes() -> None:
    bodies: list[dict[str, Any]] = []

    def handler(body: dict[str, Any]) -> str:
        bodies.append(body)
        return "```json\n" + json.dumps({"operators": ["Mean"], "fields": ["$close"]}) + "\n```"

    with FakeOpenAIServer(chat_handler=handler) as server:
        ex = LLMComponentExtractor("m", api_key=server.api_key, base_url=server.base_url)
        assert isinstance(ex, ComponentExtractor)
        assert ex.extract(_task()) == ["category:ma", "field:close", "op:mean"]
        assert ex.extract(_task()) == ["category:ma", "field:close", "op:mean"]
        assert ex.calls == 1 and len(bodies) == 1
        assert "Mean($close, 5)" in bodies[0]["messages"][0]["content"]
        assert bodies[0]["model"] == "m"


def test_llm_extractor_falls_back_on_unparsable_reply_and_retries() -> None:
    with FakeOpenAIServer(chat_handler=lambda body: "I cannot answer that.") as server:
        ex = LLMComponentExtractor("m", api_key=server.api_key, base_url=server.base_url)
        server.fail_next(1, status=503)
        assert ex.extract(_task()) == BuiltinComponentExtractor().extract(_task())


def test_llm_extractor_auth_error_is_an_endpoint_error() -> None:
    with FakeOpenAIServer() as server:
        ex = LLMComponentExtractor("m", api_key="wrong", base_url=server.base_url, max_retries=0)
        with pytest.raises(EndpointError, match="'m'") as info:
            ex.extract(_task())
    assert info.value.kind == "auth" and info.value.configuration


def test_llm_extractor_replies_are_cached_and_replayed(tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    reply = json.dumps({"operators": ["Std"], "fields": ["$volume"]})
    with FakeOpenAIServer(chat_handler=lambda body: reply) as server:
        first = LLMComponentExtractor(
            "m", api_key=server.api_key, base_url=server.base_url, cache=url
        ).extract(_task())
        base_url = server.base_url
    replay = LLMComponentExtractor(
        "m", api_key="k", base_url=base_url, max_retries=0, cache=url, cache_mode="replay_only"
    )
    assert replay.extract(_task()) == first == ["category:ma", "field:volume", "op:std"]
