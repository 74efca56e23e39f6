"""An LLM planner: a chat model chooses each step, through the ``openai`` package.

The model sees the task, its type, the tools, the actions so far (tool, inputs in short,
success, result head), the files and what the completion rule still misses, and replies with one
JSON object ``{"tool": …, "inputs": {…}, "reasoning": …}`` (``"tool": "finish"`` to stop).
:meth:`LLMPlanner.candidate_steps` asks instead for several alternative steps (a JSON list) and
scores each by what it would close (:func:`~costeer_lab.context._planner.score_steps`), so a
model's proposals are ranked by the same rule as the rule-based planner's.
Replies are untrusted: the tool and inputs are checked by the tool box, never executed here.
"""

from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any

from costeer_lab.context._completion import Validator
from costeer_lab.context._planner import PlannedStep, score_steps
from costeer_lab.context._task import TaskContext
from costeer_lab.context._tools import TOOLS
from costeer_lab.errors import LLMError
from costeer_lab.llm import ModelClient
from costeer_lab.settings import LLMSettings, get_settings

if TYPE_CHECKING:
    from costeer_lab.store._base import BaseStore

__all__ = ["LLMPlanner"]

SYSTEM_PROMPT = (
    "You are the planner of a coding and research agent. Each turn you choose ONE tool call. "
    "Reply with a single JSON object and nothing else: "
    '{"tool": "<name>", "inputs": {...}, "reasoning": "<one sentence>"}. '
    'Use {"tool": "finish", "reasoning": "..."} when nothing more can be done.'
)
_JSON = re.compile(r"\{.*\}", re.DOTALL)
_LIST = re.compile(r"\[.*\]", re.DOTALL)


def candidates_prompt(n: int) -> str:
    """The system prompt of :meth:`LLMPlanner.candidate_steps` (up to ``n`` alternatives)."""
    return (
        "You are the planner of a coding and research agent. Propose up to "
        f"{n} DIFFERENT tool calls that could be the next step, best first. Reply with a "
        'single JSON list and nothing else: [{"tool": "<name>", "inputs": {...}, '
        '"reasoning": "<one sentence>"}, ...]. Reply [] when nothing more can be done.'
    )


def _short(value: Any, n: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= n else text[: n - 3] + "..."


def describe_context(ctx: TaskContext, validator: Validator | None = None) -> str:
    """The user message of a planning turn: task, tools, history, files, what is missing."""
    report = (validator or Validator()).validate(ctx)
    lines = [f"Task ({ctx.task_type}): {ctx.task}", "", "Tools:"]
    lines += [f"- {name}: {args}" for name, args in TOOLS.items()]
    lines += ["", f"Actions so far ({len(ctx.actions)}):"]
    for a in ctx.actions:
        status = "ok" if a.success else "FAILED"
        inputs = {k: _short(v, 60) for k, v in a.inputs.items()}
        lines.append(
            f"- {a.id} {a.type} {json.dumps(inputs)} -> {status}: {_short(a.outputs.result)}"
        )
    lines += ["", "Files:"] + [f"- {f.path} ({f.file_type}, {f.size} bytes)" for f in ctx.files]
    lines += ["", f"Completion rule still misses: {', '.join(report.missing) or 'nothing'}"]
    return "\n".join(lines)


def parse_step(reply: str) -> PlannedStep | None:
    """The step in a model reply (``None`` for ``finish``).

    Raises:
        LLMError: the reply holds no JSON object with a string ``tool`` and object ``inputs``.

    Example:
        >>> step = parse_step('```json\\n{"tool": "read_file", "inputs": {"path": "a.py"}}\\n```')
        >>> step.tool, step.inputs, step.reasoning
        ('read_file', {'path': 'a.py'}, '')
    """
    match = _JSON.search(reply)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("tool"), str):
        raise LLMError(
            f"the planner model's reply is not a JSON object with a 'tool' name: {_short(reply)!r}"
        )
    if data["tool"] == "finish":
        return None
    inputs = data.get("inputs", {})
    if not isinstance(inputs, dict):
        raise LLMError(f"the planner model's 'inputs' must be an object; got {_short(inputs)!r}")
    return PlannedStep(data["tool"], inputs, str(data.get("reasoning", "")))


def parse_steps(reply: str) -> list[PlannedStep]:
    """The steps of a model reply holding a JSON list (``finish`` entries dropped).

    Raises:
        LLMError: the reply holds no JSON list, or an entry is not a valid step.

    Example:
        >>> steps = parse_steps('[{"tool": "read_file", "inputs": {"path": "a.py"}}, '
        ...                     '{"tool": "finish"}]')
        >>> [(s.tool, dict(s.inputs)) for s in steps]
        [('read_file', {'path': 'a.py'})]
    """
    match = _LIST.search(reply)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, list):
        raise LLMError(f"the planner model's reply is not a JSON list of steps: {_short(reply)!r}")
    steps = [parse_step(json.dumps(item)) for item in data]
    return [st for st in steps if st is not None]


class LLMPlanner:
    """A :class:`~costeer_lab.context.Planner` backed by an OpenAI-compatible chat model.

    Endpoint, model, retries and temperature come from ``settings`` (default: the ``llm``
    section), with ``model`` / ``base_url`` / ``api_key`` overriding them. Requests go through
    a :class:`~costeer_lab.llm.ModelClient` (endpoint failures are
    :class:`~costeer_lab.errors.EndpointError`); ``cache`` (a store or store URL) records and
    replays the replies (``settings.cache_mode``).

    Example:
        >>> from costeer_lab.testing import FakeOpenAIServer
        >>> reply = '{"tool": "answer", "inputs": {"text": "42"}, "reasoning": "known"}'
        >>> with FakeOpenAIServer(chat_handler=lambda body: reply) as server:
        ...     planner = LLMPlanner(base_url=server.base_url, api_key=server.api_key)
        ...     step = planner.plan(TaskContext("t", "simple_question", "6 * 7?"))
        >>> step.tool, step.inputs
        ('answer', {'text': '42'})
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        settings: LLMSettings | None = None,
        validator: Validator | None = None,
        cache: BaseStore | str | None = None,
    ) -> None:
        base = settings or get_settings().llm
        #: Tells the model what the completion rule still misses (use the manager's).
        self.validator = validator
        changes = {k: v for k, v in (("model", model), ("base_url", base_url),
                                     ("api_key", api_key)) if v is not None}  # fmt: skip
        self.settings = base.model_copy(update=changes)
        source: Any = functools.partial(_open_store, cache) if isinstance(cache, str) else cache
        self.client = ModelClient.from_llm_settings(
            self.settings,
            cache=source,
            cache_mode=None if cache is not None else "off",
            purpose="LLMPlanner",
        )
        #: Every (messages, reply) exchanged, in order.
        self.transcript: list[tuple[list[dict[str, str]], str]] = []

    def plan(self, ctx: TaskContext) -> PlannedStep | None:
        """Ask the model for the next step of ``ctx``.

        Raises:
            EndpointError: the endpoint fails for good (an ``LLMError``).
            LLMError: the reply is not a valid step.
            ConfigurationError: no API key is configured.
        """
        return parse_step(self._ask(SYSTEM_PROMPT, ctx))

    def _ask(self, system: str, ctx: TaskContext) -> str:
        """One chat turn: ``system`` and the described context; the reply is kept in the
        transcript."""
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": describe_context(ctx, self.validator)},
        ]
        params: dict[str, Any] = {
            "temperature": self.settings.temperature,
            self.settings.max_tokens_param: self.settings.max_tokens,
        }
        if self.settings.send_seed:
            params["seed"] = self.settings.seed
        content = self.client.chat(messages, **params).content
        self.transcript.append((messages, content))
        return content

    def candidate_steps(self, ctx: TaskContext, *, n: int = 3) -> list[PlannedStep]:
        """Up to ``n`` alternative next steps the model proposes, each scored by the
        completion requirements it would close and the evidence it would add (simulated, see
        :func:`~costeer_lab.context._planner.score_steps`) and ranked; repeats are dropped.

        Raises:
            EndpointError, LLMError, ConfigurationError: as :meth:`plan`.

        Example:
            >>> from costeer_lab.testing import FakeOpenAIServer
            >>> reply = ('[{"tool": "read_file", "inputs": {"path": "notes.md"}}, '
            ...          '{"tool": "answer", "inputs": {"text": "42"}}]')
            >>> with FakeOpenAIServer(chat_handler=lambda body: reply) as server:
            ...     planner = LLMPlanner(base_url=server.base_url, api_key=server.api_key)
            ...     ranked = planner.candidate_steps(TaskContext("t", "simple_question", "6*7?"))
            >>> [(s.tool, s.score) for s in ranked]
            [('answer', 2.1), ('read_file', 0.0)]
        """
        if n < 1:
            raise LLMError(f"candidate_steps needs n >= 1; got {n}")
        proposed: dict[str, PlannedStep] = {}
        for st in parse_steps(self._ask(candidates_prompt(n), ctx)):
            key = json.dumps([st.tool, dict(st.inputs)], sort_keys=True, default=str)
            proposed.setdefault(key, st)  # the first proposal of a repeated call
        return score_steps(ctx, list(proposed.values())[:n], self.validator)


def _open_store(url: str) -> BaseStore:
    from costeer_lab.store import get_store

    return get_store(url)
