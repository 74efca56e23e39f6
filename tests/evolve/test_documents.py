"""Document retrieval in the coder context: EvolvingStrategy(documents=DocumentContext(kb))
puts the retrieved documentation into the prompt the LLM coder sends (real local server)."""

from __future__ import annotations

from pathlib import Path

from costeer_lab.docs import DocumentKB
from costeer_lab.evolve import DocumentContext, EvolvingStrategy
from costeer_lab.records import QueriedKnowledge, Task
from costeer_lab.testing import FakeOpenAIServer

CHAT = "/v1/chat/completions"


def api_docs(tmp_path: Path) -> DocumentKB:
    kb = DocumentKB("api", tmp_path / "docs.db")
    kb.add_text(
        "# rolling\nUse series.rolling(window).mean() for a moving average.\n\n"
        "# shift\nUse series.shift(n) to lag values by n rows.",
        path="pandas_api.md",
        source="pandas",
    )
    return kb


def test_documents_reach_the_coder_prompt(tmp_path: Path) -> None:
    kb = api_docs(tmp_path)
    task = Task("demo/ma", "MA5", "moving average of the close over a rolling window")
    with FakeOpenAIServer() as server:
        server.chat_handler = lambda body: "```python\ndef f(x):\n    return x\n```"
        coder = {
            "name": "llm",
            "model": "fake-chat",
            "base_url": server.base_url,
            "api_key": server.api_key,
        }
        with_docs = EvolvingStrategy(coder, documents=DocumentContext(kb, n_results=1))
        without = EvolvingStrategy(coder)
        with_docs.implement([task], QueriedKnowledge(), {})
        without.implement([task], QueriedKnowledge(), {})
        (first, second) = server.requests_to(CHAT)
    prompt = first.body["messages"][-1]["content"]
    assert "Relevant documentation" in prompt and "[1] pandas_api.md" in prompt
    assert "series.rolling(window).mean()" in prompt and "lag values" not in prompt
    assert "Relevant documentation" not in second.body["messages"][-1]["content"]
    assert task.extra == {}  # the task given to the strategy is not changed
    kb.close()


def test_an_empty_knowledge_base_adds_nothing(tmp_path: Path) -> None:
    kb = DocumentKB("empty", tmp_path / "docs.db")
    task = Task("demo/x", "X", "anything")
    assert DocumentContext(kb).attach(task) is task
    context = DocumentContext(kb, where={"source": "nowhere"})
    kb.add_text("# A\nalpha", path="a.md")
    assert context.attach(task) is task  # nothing matches the filter
    assert context.query_of(Task("i", "MA5", "mean", "Mean($close, 5)")) == (
        "MA5 mean Mean($close, 5)"
    )
    kb.close()
