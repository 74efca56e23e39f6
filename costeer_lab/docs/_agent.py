"""Agent integration: document retrieval for LangGraph-style state dicts and the prompt block.

Example:
    >>> kb = DocumentKB("agent", db_path=":memory:")
    >>> _ = kb.add_text("# Retries\\nThe client retries twice.", path="guide.md")
    >>> state = {"messages": [{"role": "user", "content": "how often does the client retry?"}]}
    >>> new = retrieve_knowledge(state, kb=kb, n_results=1, min_score=0)
    >>> new["context"]["documents"][0]["metadata"]["section_title"], "context" in state
    ('Retries', False)
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from costeer_lab.docs._kb import DocumentKB
from costeer_lab.errors import InvalidInputError

__all__ = ["format_knowledge_context", "last_user_message", "retrieve_knowledge"]

_USER_ROLES = ("user", "human")


def _message_parts(message: Any) -> tuple[str | None, Any]:
    """``(role, content)`` of a message given as a dict, a ``(role, content)`` pair or an
    object with ``type``/``role`` and ``content`` attributes (LangChain messages)."""
    if isinstance(message, Mapping):
        return message.get("role") or message.get("type"), message.get("content")
    if isinstance(message, tuple | list) and len(message) == 2:
        return str(message[0]), message[1]
    role = getattr(message, "role", None) or getattr(message, "type", None)
    return (None if role is None else str(role)), getattr(message, "content", None)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):  # multi-part content: [{"type": "text", "text": ...}]
        parts = [p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content]
        return " ".join(p for p in parts if p)
    return "" if content is None else str(content)


def last_user_message(state: Mapping[str, Any]) -> str | None:
    """The text of the last user (``user``/``human``) message in ``state["messages"]``.

    Example:
        >>> last_user_message({"messages": [("user", "a"), ("assistant", "b"), ("human", "c")]})
        'c'
    """
    messages = state.get("messages") or []
    for message in reversed(list(messages)):
        role, content = _message_parts(message)
        if role in _USER_ROLES:
            text = _text_of(content).strip()
            if text:
                return text
    return None


def retrieve_knowledge(
    state: Mapping[str, Any],
    query: str | None = None,
    *,
    kb: DocumentKB | None = None,
    collection_name: str | None = None,
    db_path: str | Path | None = None,
    n_results: int = 5,
    where: dict[str, Any] | None = None,
    version_filter: str | None = None,
    mode: str | None = None,
    min_score: float | None = None,
) -> dict[str, Any]:
    """A new state with the documents retrieved for ``query`` under
    ``state["context"]["documents"]``; ``state`` itself is never changed (the new state is a
    deep copy, other keys included).

    Args:
        state: a LangGraph-style state dict (``messages``, ``context``, …).
        query: what to retrieve; default: the last user message.
        kb: the knowledge base (default: ``DocumentKB(collection_name, db_path)``, opened and
            closed here).
        collection_name / db_path: the collection and store to open when ``kb`` is not given
            (defaults: the settings' collection and file).
        n_results / where / version_filter / mode / min_score: passed to
            :meth:`DocumentKB.retrieve`.

    Raises:
        InvalidInputError: ``state`` is not a mapping, there is no query and no user message,
            or ``kb`` is given together with ``collection_name`` / ``db_path``.
    """
    if kb is not None and (collection_name is not None or db_path is not None):
        raise InvalidInputError(
            "retrieve_knowledge: pass either kb= or collection_name=/db_path= (to open one), "
            "not both"
        )
    if not isinstance(state, Mapping):
        raise InvalidInputError(f"state must be a mapping, got {type(state).__name__}")
    text = query if query is not None else last_user_message(state)
    if not text or not text.strip():
        raise InvalidInputError(
            "retrieve_knowledge needs a query: pass query=... or put a user message in "
            "state['messages']"
        )
    own = kb is None
    base = DocumentKB(collection_name, db_path) if kb is None else kb
    try:
        docs = base.retrieve(
            text,
            n_results=n_results,
            where=where,
            version_filter=version_filter,
            mode=mode,  # type: ignore[arg-type]
            min_score=min_score,
        )
    finally:
        if own:
            base.close()
    new_state = copy.deepcopy(dict(state))
    context = new_state.get("context")
    context = dict(context) if isinstance(context, Mapping) else {}
    context["documents"] = docs
    context["documents_query"] = text
    new_state["context"] = context
    return new_state


def format_knowledge_context(
    documents: Sequence[Mapping[str, Any]], max_docs: int = 3, *, max_chars: int = 2000
) -> str:
    """The prompt block for retrieved documents, each with its source attribution.

    Example:
        >>> doc = {"content": "Use max_retries.", "relevance_score": 0.9,
        ...        "metadata": {"file_name": "guide.md", "section_title": "Retries"}}
        >>> print(format_knowledge_context([doc]))
        ## Relevant documentation
        [1] guide.md — Retries (relevance 0.90)
        Use max_retries.
    """
    if isinstance(max_docs, bool) or not isinstance(max_docs, int) or max_docs < 0:
        raise InvalidInputError(f"max_docs must be an int >= 0, got {max_docs!r}")
    if not documents or max_docs == 0:
        return ""
    blocks = []
    for i, doc in enumerate(list(documents)[:max_docs], start=1):
        meta = doc.get("metadata") or {}
        head = f"[{i}] {meta.get('file_name') or meta.get('path') or meta.get('source') or '?'}"
        if meta.get("section_title"):
            head += f" — {meta['section_title']}"
        if meta.get("version"):
            head += f" (version {meta['version']})"
        score = doc.get("relevance_score")
        if isinstance(score, int | float):
            head += f" (relevance {score:.2f})"
        content = str(doc.get("content", "")).strip()
        if len(content) > max_chars:
            content = content[: max_chars - 1].rstrip() + "…"
        blocks.append(f"{head}\n{content}")
    return "## Relevant documentation\n" + "\n\n".join(blocks)
