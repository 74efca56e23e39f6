"""Agent integration: retrieve_knowledge leaves its input unchanged; the prompt block."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from costeer_lab.docs import format_knowledge_context, last_user_message, retrieve_knowledge
from costeer_lab.errors import InvalidInputError

from ._docs_helpers import open_kb, write_corpus


def test_retrieve_knowledge_returns_a_new_state_and_leaves_the_input_unchanged(
    tmp_path: Path,
) -> None:
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(write_corpus(tmp_path / "docs"))
    state: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": "tell me about bread"},
            {"role": "assistant", "content": "sure"},
            {"role": "user", "content": "how do I paginate list pages?"},
        ],
        "context": {"task": "t1", "documents": ["stale"], "nested": {"keep": [1, 2]}},
        "step": 3,
    }
    frozen = copy.deepcopy(state)
    new = retrieve_knowledge(state, kb=kb, n_results=2)
    assert state == frozen  # deep comparison: nothing inside the input changed
    assert new is not state and new["context"] is not state["context"]
    assert new["context"]["documents_query"] == "how do I paginate list pages?"
    docs = new["context"]["documents"]
    assert len(docs) == 2 and docs[0]["metadata"]["section_title"] == "Pagination"
    assert new["context"]["task"] == "t1" and new["step"] == 3
    new["context"]["nested"]["keep"].append(3)  # the copy is deep
    assert state["context"]["nested"]["keep"] == [1, 2]
    # explicit query and filters win over the messages
    bread = retrieve_knowledge(
        state, "kneading dough", kb=kb, n_results=1, where={"author": "ana"}
    )
    assert bread["context"]["documents"][0]["metadata"]["section_title"] == "Bread"
    assert state == frozen
    kb.close()


def test_state_without_context_gets_one(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    kb.add_text("# Soup\nSimmer slowly.", path="s.md")
    state = {"messages": [("human", [{"type": "text", "text": "simmer"}])]}
    new = retrieve_knowledge(state, kb=kb)
    assert "context" not in state and len(new["context"]["documents"]) == 1
    kb.close()


def test_last_user_message_forms() -> None:
    msg = SimpleNamespace(type="human", content="from an object")
    assert last_user_message({"messages": [msg, SimpleNamespace(type="ai", content="x")]}) == (
        "from an object"
    )
    assert last_user_message({"messages": [("user", "a"), ("assistant", "b")]}) == "a"
    assert last_user_message({"messages": [{"role": "user", "content": "  "}]}) is None
    assert last_user_message({}) is None


def test_retrieve_knowledge_needs_a_query(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    with pytest.raises(InvalidInputError, match="needs a query"):
        retrieve_knowledge({"messages": [{"role": "assistant", "content": "hi"}]}, kb=kb)
    with pytest.raises(InvalidInputError, match="state must be a mapping, got list"):
        retrieve_knowledge([], kb=kb)  # type: ignore[arg-type]
    kb.close()


def test_format_knowledge_context_attributes_sources() -> None:
    docs: list[dict[str, Any]] = [
        {
            "content": "Set max_retries.",
            "relevance_score": 0.87654,
            "metadata": {"file_name": "api.md", "section_title": "Retries", "version": "2"},
        },
        {"content": "x" * 50, "metadata": {"path": "/a/notes.txt"}},
        {"content": "third", "metadata": {"source": "s"}},
    ]
    text = format_knowledge_context(docs, max_docs=2, max_chars=20)
    assert text == (
        "## Relevant documentation\n"
        "[1] api.md — Retries (version 2) (relevance 0.88)\n"
        "Set max_retries.\n\n"
        "[2] /a/notes.txt\n" + "x" * 19 + "…"
    )
    assert format_knowledge_context([]) == "" and format_knowledge_context(docs, 0) == ""
    assert format_knowledge_context([*docs, *docs]).count("\n[") == 3  # default max_docs=3
    with pytest.raises(InvalidInputError, match="max_docs must be an int >= 0, got -1"):
        format_knowledge_context(docs, -1)
