"""``LLMComponentExtractor``: component analysis by a chat model (OpenAI-compatible endpoint)."""

from __future__ import annotations

import json
import re
from typing import Any

from costeer_lab.errors import LLMError
from costeer_lab.knowledge._components import BuiltinComponentExtractor, normalize_component
from costeer_lab.records import Task

__all__ = ["LLMComponentExtractor"]

_PROMPT = (
    "List the components of this coding task: the operators/functions it applies and the data "
    'fields it reads. Answer with JSON only: {"operators": [...], "fields": [...]}.\n\n'
)
_JSON = re.compile(r"\{.*\}|\[.*\]", re.DOTALL)


class LLMComponentExtractor:
    """Asks a chat model for a task's operators and data fields (``openai`` package).

    Replies are parsed as JSON (``{"operators": [...], "fields": [...]}`` or a list of names,
    possibly inside a code fence) and normalized like the built-in extractor's components.
    Answers are memoized per task text. When a reply cannot be parsed the built-in extractor's
    answer is used, so a task always gets components.

    Args:
        model: chat model name.
        api_key / base_url: endpoint (default: ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``).
        timeout_s / max_retries: passed to the ``openai`` client.

    Raises:
        LLMError: the endpoint failed after retries (authentication, server error).

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
    ) -> None:
        import openai

        self.model = model
        self.client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries
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
        import openai

        text = task.get_task_information() + (f"\n\ncode:\n{code}" if code else "")
        if text in self._memo:
            return list(self._memo[text])
        try:
            resp = self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": _PROMPT + text}],
                temperature=0,
            )
        except openai.OpenAIError as exc:
            raise LLMError(f"component extraction with {self.model!r} failed: {exc}") from exc
        self.calls += 1
        reply = resp.choices[0].message.content or ""
        comps = self.parse(reply) or self.fallback.extract(task, code)
        if task.category:
            comps = sorted({*comps, normalize_component("category", task.category)})
        self._memo[text] = comps
        return list(comps)
