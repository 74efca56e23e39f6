"""``LLMComponentExtractor``: component analysis by a chat model (OpenAI-compatible endpoint)."""

from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any

from costeer_lab.knowledge._components import BuiltinComponentExtractor, normalize_component
from costeer_lab.llm import ModelClient
from costeer_lab.records import Task

if TYPE_CHECKING:
    from costeer_lab.store._base import BaseStore

__all__ = ["LLMComponentExtractor"]

_PROMPT = (
    "List the components of this coding task: the operators/functions it applies and the data "
    'fields it reads. Answer with JSON only: {"operators": [...], "fields": [...]}.\n\n'
)
_JSON = re.compile(r"\{.*\}|\[.*\]", re.DOTALL)


class LLMComponentExtractor:
    """Asks a chat model for a task's operators and data fields (through the one
    :class:`~costeer_lab.llm.ModelClient`).

    Replies are parsed as JSON (``{"operators": [...], "fields": [...]}`` or a list of names,
    possibly inside a code fence) and normalized like the built-in extractor's components.
    Answers are memoized per task text. When a reply cannot be parsed the built-in extractor's
    answer is used, so a task always gets components.

    Args:
        model: chat model name.
        api_key / base_url: endpoint (default: settings ``openai``, then ``OPENAI_API_KEY`` /
            ``OPENAI_BASE_URL``).
        timeout_s / max_retries: of the model client (retries with backoff).
        cache / cache_mode: a store or store URL for the response cache; ``None``: no cache.

    Raises:
        EndpointError: the endpoint failed after retries (authentication, server error).

    Example:
        >>> ex = LLMComponentExtractor("gpt-4o-mini", api_key="k", base_url="http://127.0.0.1:9/v1")
        >>> ex.parse('{"operators": ["Mean"], "fields": ["$close"]}')
        ['field:close', 'op:mean']
    """

    def __init__(
        self,
        model: str = "gpt-4o-mini",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        cache: BaseStore | str | None = None,
        cache_mode: str = "read_write",
    ) -> None:
        self.model = model
        source: Any = functools.partial(_open_store, cache) if isinstance(cache, str) else cache
        self.client = ModelClient(
            model,
            api_key=api_key,
            base_url=base_url,
            timeout_s=timeout_s,
            max_retries=max_retries,
            cache=source,
            cache_mode=cache_mode,
            purpose="LLMComponentExtractor",
        )
        self.fallback = BuiltinComponentExtractor()
        self.calls = 0
        self._memo: dict[str, list[str]] = {}

    @staticmethod
    def parse(reply: str) -> list[str]:
        """Components named in a model reply (``[]`` when it holds no usable JSON)."""
        m = _JSON.search(reply or "")
        if not m:
            return []
        try:
            data: Any = json.loads(m.group(0))
        except ValueError:
            return []
        pairs: list[tuple[str, Any]] = []
        if isinstance(data, dict):
            pairs += [("op", x) for x in data.get("operators", []) or []]
            pairs += [("field", x) for x in data.get("fields", []) or []]
        elif isinstance(data, list):
            pairs += [("field" if str(x).startswith("$") else "op", x) for x in data]
        found = {normalize_component(kind, str(x)) for kind, x in pairs if str(x).strip()}
        return sorted(c for c in found if not c.endswith(":"))

    def extract(self, task: Task, code: str | None = None) -> list[str]:
        """Components of ``task`` (and ``code``) according to the model."""
        text = task.get_task_information() + (f"\n\ncode:\n{code}" if code else "")
        if text in self._memo:
            return list(self._memo[text])
        reply = self.client.chat(
            [{"role": "user", "content": _PROMPT + text}], temperature=0
        ).content
        self.calls += 1
        comps = self.parse(reply) or self.fallback.extract(task, code)
        if task.category:
            comps = sorted({*comps, normalize_component("category", task.category)})
        self._memo[text] = comps
        return list(comps)


def _open_store(url: str) -> BaseStore:
    from costeer_lab.store import get_store

    return get_store(url)
