"""The agent integration pinned exactly: every message form ``last_user_message`` reads, every
retrieval argument ``retrieve_knowledge`` passes through (and the knowledge base it opens is
closed again), and the prompt block's attribution and truncation."""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from costeer_lab.docs import (
    DocumentKB,
    format_knowledge_context,
    last_user_message,
    retrieve_knowledge,
)
from costeer_lab.errors import InvalidInputError

from ._docs_helpers import open_kb, write_corpus


def _state(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


@pytest.fixture
def kb(tmp_path: Path) -> Any:
    base = open_kb(tmp_path / "kb.db")  # min_score 0: every chunk can come back
    base.ingest(write_corpus(tmp_path / "docs"))
    yield base
    base.close()


# -- the last user message ------------------------------------------------------------------


def test_a_user_message_is_found_in_every_form() -> None:
    forms: list[Any] = [
        {"role": "user", "content": "a dict with a role"},
        {"type": "human", "content": "a dict with a type (LangChain's dict form)"},
        ("human", "a pair"),
        ["user", "a list pair"],
        SimpleNamespace(role="user", content="an object with a role"),
        SimpleNamespace(type="human", content="an object with a type"),
    ]
    for message in forms:
        assert last_user_message({"messages": [message]}) == _text(message)


def _text(message: Any) -> str:
    if isinstance(message, dict):
        return str(message["content"])
    if isinstance(message, tuple | list):
        return str(message[1])
    return str(message.content)


def test_messages_without_user_text_are_skipped() -> None:
    messages: list[Any] = [
        ("user", "the question"),
        {"role": "user", "content": None},
        SimpleNamespace(role="user"),  # no content at all
        "a stray string",
        SimpleNamespace(name="neither a role nor a type"),
        {"role": "assistant", "content": "an answer"},
        SimpleNamespace(type="ai", content="another answer"),
    ]
    assert last_user_message({"messages": messages}) == "the question"
    assert last_user_message({"messages": messages[1:]}) is None


def test_multi_part_content_joins_its_text_parts() -> None:
    parts: list[Any] = [
        {"type": "text", "text": "part one"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "text", "text": ""},
        "part two",
    ]
    assert last_user_message({"messages": [("user", parts)]}) == "part one part two"
    assert last_user_message({"messages": [("user", [{"type": "image_url"}])]}) is None


def test_content_that_is_neither_text_nor_parts_is_its_str() -> None:
    assert last_user_message({"messages": [("user", 42)]}) == "42"


# -- retrieve_knowledge ---------------------------------------------------------------------


def test_five_documents_by_default(kb: DocumentKB) -> None:
    new = retrieve_knowledge(_state("how are failed requests retried?"), kb=kb)
    assert len(new["context"]["documents"]) == 5
    assert new["context"]["documents"] == kb.retrieve("how are failed requests retried?")


@pytest.mark.parametrize(
    "kw",
    [
        {"where": {"author": "ana"}},
        {"version_filter": "1"},
        {"mode": "keyword"},
        {"min_score": 0.4},
    ],
    ids=lambda kw: next(iter(kw)),
)
def test_each_retrieval_argument_reaches_the_knowledge_base(
    kb: DocumentKB, kw: dict[str, Any]
) -> None:
    query = "how do requests time out?"
    docs = retrieve_knowledge({}, query, kb=kb, n_results=8, **kw)["context"]["documents"]
    assert docs == kb.retrieve(query, n_results=8, **kw)
    assert docs != kb.retrieve(query, n_results=8)  # the argument changes the answer


def test_the_arguments_do_what_they_say(kb: DocumentKB) -> None:
    query = "how do requests time out?"
    ana = retrieve_knowledge({}, query, kb=kb, where={"author": "ana"})["context"]["documents"]
    assert sorted(d["metadata"]["section_title"] for d in ana) == ["Bread", "Soup"]
    v1 = retrieve_knowledge({}, query, kb=kb, version_filter="1")["context"]["documents"]
    assert len(v1) == 3 and {d["metadata"]["version"] for d in v1} == {"1"}
    best = retrieve_knowledge({}, query, kb=kb, min_score=0.4)["context"]["documents"]
    assert best and all(d["relevance_score"] >= 0.4 for d in best)


def test_a_knowledge_base_opened_by_name_is_closed_again(
    tmp_path: Path, settings_env: Any
) -> None:
    settings_env(DOCS__EMBEDDER="hashing", DOCS__MIN_SCORE="0")
    db = tmp_path / "named.db"
    with DocumentKB("agent", db) as made:
        made.add_text("# Retries\nThe client retries twice.", path="guide.md")
    new = retrieve_knowledge(_state("how often are retries made?"), collection_name="agent",
                             db_path=db)  # fmt: skip
    assert [d["metadata"]["section_title"] for d in new["context"]["documents"]] == ["Retries"]
    assert _open_files_under(tmp_path) == []


def _open_files_under(root: Path) -> list[str]:
    """Files under ``root`` this process holds open (Linux: ``/proc/self/fd``)."""
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc/self/fd to list the open files")
    found = []
    for fd in os.listdir(fds):
        try:
            target = os.readlink(fds / fd)
        except OSError:  # the fd of the listing itself is gone by now
            continue
        if target.startswith(str(root)):
            found.append(target)
    return found


def test_the_errors_say_what_to_pass(kb: DocumentKB, tmp_path: Path) -> None:
    both = (
        "retrieve_knowledge: pass either kb= or collection_name=/db_path= (to open one), not both"
    )
    for extra in ({"collection_name": "x"}, {"db_path": tmp_path / "x.db"}):
        with pytest.raises(InvalidInputError, match=f"^{re.escape(both)}$"):
            retrieve_knowledge(_state("q"), kb=kb, **extra)
    no_query = (
        "retrieve_knowledge needs a query: pass query=... or put a user message in "
        "state['messages']"
    )
    for state, query in (({}, None), (_state("q"), "  \n")):
        with pytest.raises(InvalidInputError, match=f"^{re.escape(no_query)}$"):
            retrieve_knowledge(state, query, kb=kb)


# -- the prompt block -----------------------------------------------------------------------


def test_the_source_falls_back_to_the_source_then_a_question_mark() -> None:
    docs: list[dict[str, Any]] = [
        {"content": "From a URL.", "metadata": {"source": "https://docs.example/x"}},
        {"metadata": {}},  # no content, no source
        {"content": "  padded  ", "metadata": None, "relevance_score": 1},
    ]
    assert format_knowledge_context(docs) == (
        "## Relevant documentation\n"
        "[1] https://docs.example/x\nFrom a URL.\n\n"
        "[2] ?\n\n\n"
        "[3] ? (relevance 1.00)\npadded"
    )


def test_content_is_cut_at_2000_characters_by_default() -> None:
    whole = format_knowledge_context([{"content": "y" * 2000, "metadata": {"path": "p"}}])
    assert whole == "## Relevant documentation\n[1] p\n" + "y" * 2000
    cut = format_knowledge_context([{"content": "y" * 2001, "metadata": {"path": "p"}}])
    assert cut == "## Relevant documentation\n[1] p\n" + "y" * 1999 + "…"


def test_a_cut_drops_the_trailing_spaces_before_the_ellipsis() -> None:
    doc = {"content": "  abcd      efghij", "metadata": {"path": "p"}}
    assert format_knowledge_context([doc], max_chars=10).endswith("\nabcd…")
    assert format_knowledge_context([doc], max_chars=16).endswith("\nabcd      efghij")


@pytest.mark.parametrize("bad", [True, "3", 2.5, None])
def test_max_docs_must_be_an_int(bad: Any) -> None:
    with pytest.raises(InvalidInputError, match=rf"^max_docs must be an int >= 0, got {bad!r}$"):
        format_knowledge_context([{"content": "x"}], bad)
