"""LLMCodeCritic: an optional LLM review that fills the ``code`` feedback section.

Off by default (``EvaluatorSettings.critic_enabled``); combine it with a checking evaluator
through :class:`MultiEvaluator` (``MultiEvaluator([suite.evaluator(), LLMCodeCritic()])``).
The critic sees the public task and the candidate code, never the ground truth (its text goes
back to coders). It does not veto by default (``final_decision=True``); with ``veto=True`` a
reply whose last verdict line is ``VERDICT: PROBLEM`` fails the task. The review is optional:
an endpoint error (:class:`~costeer_lab.errors.EndpointError` from the one model client) gives a
note in the ``code`` section and ``details["critic_error"]`` (its kind), not a failure.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from costeer_lab.errors import EndpointError
from costeer_lab.llm import CacheMode, ModelClient
from costeer_lab.records import SingleFeedback, Task, Workspace
from costeer_lab.settings import EvaluatorSettings, get_settings

if TYPE_CHECKING:
    from costeer_lab.store._base import BaseStore

__all__ = ["LLMCodeCritic"]

SYSTEM_PROMPT = (
    "You review code written for a task. Point out concrete bugs and deviations from the task "
    "(wrong formula, window, column, missing grouping, look-ahead, wrong output format), "
    "briefly, as a numbered list; say so when the code looks correct. End with one line: "
    "'VERDICT: OK' or 'VERDICT: PROBLEM'."
)


class LLMCodeCritic:
    """Review code with a chat model of any OpenAI-compatible endpoint.

    Args:
        model: chat model (default ``EvaluatorSettings.critic_model``).
        api_key: key (default: settings ``openai.api_key``, then ``OPENAI_API_KEY``).
        base_url: endpoint (default: settings ``openai.base_url``, then ``OPENAI_BASE_URL``).
        veto: let a ``VERDICT: PROBLEM`` reply fail the task.
        settings: evaluator settings (code size sent, model).
        cache / cache_mode: a store URL for the response cache (see
            :class:`~costeer_lab.llm.ModelClient`); ``None``: no cache.

    Example:
        >>> from costeer_lab.testing import FakeOpenAIServer
        >>> with FakeOpenAIServer(chat_handler=lambda b: "1. fine\\nVERDICT: OK") as srv:
        ...     critic = LLMCodeCritic(api_key=srv.api_key, base_url=srv.base_url)
        ...     fb = critic.evaluate(Task("t", "MA5", "mean"), Workspace({"main.py": "x = 1"}))
        >>> fb.code.splitlines()[-1], fb.final_decision
        ('VERDICT: OK', True)
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        veto: bool = False,
        settings: EvaluatorSettings | None = None,
        timeout_s: float | None = None,
        max_retries: int | None = None,
        cache: str | None = None,
        cache_mode: str = "read_write",
    ) -> None:
        oa = get_settings().openai
        self.settings = settings or get_settings().evaluator
        self.model = model or self.settings.critic_model
        self.veto = veto
        self.cache, self.cache_mode = cache, CacheMode.parse(cache_mode)
        source = None if cache is None else functools.partial(_open_store, cache)
        self.client = ModelClient(
            self.model,
            api_key=api_key,
            base_url=base_url,
            timeout_s=timeout_s,
            max_retries=max_retries,
            settings=oa,
            cache=source,
            cache_mode=self.cache_mode,
            purpose="LLMCodeCritic",
        )
        self.api_key, self.base_url = self.client.api_key, self.client.base_url
        self.timeout_s, self.max_retries = self.client.timeout_s, self.client.max_retries

    def to_spec(self) -> dict[str, Any]:
        """JSON description to rebuild the critic in another process (key included)."""
        return {
            "kind": "critic",
            "model": self.model,
            "api_key": self.api_key,
            "base_url": self.base_url,
            "veto": self.veto,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "cache": self.cache,
            "cache_mode": self.cache_mode.value,
            "settings": self.settings.model_dump(),
        }

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> LLMCodeCritic:
        """Inverse of :meth:`to_spec`."""
        return cls(
            model=spec.get("model"),
            api_key=spec.get("api_key"),
            base_url=spec.get("base_url"),
            veto=bool(spec.get("veto", False)),
            settings=EvaluatorSettings(**spec.get("settings", {})),
            timeout_s=spec.get("timeout_s"),
            max_retries=spec.get("max_retries"),
            cache=spec.get("cache"),
            cache_mode=spec.get("cache_mode", "read_write"),
        )

    def messages(self, task: Task, implementation: Workspace) -> list[dict[str, str]]:
        """The chat messages sent for one review (public task + code only)."""
        limit = self.settings.critic_max_code_chars
        files = []
        for name in sorted(implementation.files, key=lambda n: n != implementation.main_file):
            text = implementation.files[name]
            if len(text) > limit:
                text = text[:limit] + "\n# … (truncated)"
            files.append(f"### {name}\n```python\n{text}\n```")
            limit = max(100, limit - len(text))
        contract = task.extra.get("contract")
        user = f"## Task\n{task.get_task_information()}\n"
        if isinstance(contract, str):
            user += f"\n## Contract\n{contract}\n"
        user += "\n## Code\n" + "\n".join(files)
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

    def evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None = None
    ) -> SingleFeedback:
        """Ask the model for a review; ``gt_implementation`` is ignored on purpose."""
        try:
            reply = self.client.chat(self.messages(task, implementation), temperature=0)
            text = reply.content.strip()
        except EndpointError as exc:
            return SingleFeedback(
                code=f"code review unavailable ({exc.kind}: {exc})",
                final_decision=True,
                details={"critic_verdict": None, "critic_error": exc.kind},
            )
        verdicts = [
            ln.split(":", 1)[1].strip().upper()
            for ln in text.splitlines()
            if ln.strip().upper().startswith("VERDICT:")
        ]
        verdict = verdicts[-1] if verdicts else None
        return SingleFeedback(
            code=text or "(empty review)",
            final_decision=not (self.veto and verdict == "PROBLEM"),
            details={"critic_verdict": verdict},
        )


def _open_store(url: str) -> BaseStore:
    from costeer_lab.store import get_store

    return get_store(url)
