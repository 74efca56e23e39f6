"""ScriptedCoder: a coder for tests that returns pre-set workspaces per task and attempt."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from costeer_lab.coders._base import AbstractCoder, CoderResult
from costeer_lab.errors import InvalidInputError, NotFoundError
from costeer_lab.records import QueriedKnowledge, SingleFeedback, Task, Workspace

__all__ = ["ScriptedCall", "ScriptedCoder"]


@dataclass(frozen=True)
class ScriptedCall:
    """One call a :class:`ScriptedCoder` received (arguments kept for assertions)."""

    task: Task
    queried_knowledge: QueriedKnowledge
    last_feedback: SingleFeedback | None
    attempt: int


class ScriptedCoder(AbstractCoder):
    """Returns ``script[task.id][attempt]``; after the last entry, the last one again.

    The attempt number is the number of earlier calls for the task (``attempt_from="calls"``,
    default) or the number of former traces of the task in the queried knowledge
    (``attempt_from="former_traces"``, which also works when each call runs in a fresh process).
    Every call is recorded in :attr:`calls`. Tasks without a script get ``default`` or raise
    :class:`~costeer_lab.errors.NotFoundError`. Its config names it by import path
    (``"costeer_lab.testing:ScriptedCoder"``), so it round-trips through
    :func:`~costeer_lab.coders.coder_from_config` and works in experiment specs and process pools
    without being in the production coder registry.

    Example:
        >>> from costeer_lab.records import QueriedKnowledge, Task, Workspace
        >>> one, two = Workspace({"main.py": "1"}), Workspace({"main.py": "2"})
        >>> coder = ScriptedCoder({"t": [one, two]})
        >>> t, qk = Task("t", "t", ""), QueriedKnowledge()
        >>> [coder.implement(t, qk, None).code for _ in range(3)]
        ['1', '2', '2']
    """

    name = "costeer_lab.testing:ScriptedCoder"

    def __init__(
        self,
        script: Mapping[str, Sequence[Workspace | Mapping[str, Any]]],
        *,
        default: Workspace | Mapping[str, Any] | None = None,
        attempt_from: Literal["calls", "former_traces"] = "calls",
        used_knowledge: bool = True,
        seed: int = 0,
    ) -> None:
        if attempt_from not in ("calls", "former_traces"):
            raise InvalidInputError(
                f"attempt_from must be 'calls' or 'former_traces', got {attempt_from!r}"
            )
        self.script: dict[str, list[Workspace]] = {
            tid: [w if isinstance(w, Workspace) else Workspace.from_dict(w) for w in items]
            for tid, items in script.items()
        }
        for tid, items in self.script.items():
            if not items:
                raise InvalidInputError(f"ScriptedCoder: empty script for task {tid!r}")
        self.default = (
            default
            if default is None or isinstance(default, Workspace)
            else Workspace.from_dict(default)
        )
        self.attempt_from = attempt_from
        self.used_knowledge = used_knowledge
        self.seed = seed  # accepted like every coder's; scripts have no random choices
        self.calls: list[ScriptedCall] = []
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def _implement(
        self,
        task: Task,
        queried_knowledge: QueriedKnowledge,
        last_feedback: SingleFeedback | None,
        *,
        stream: int | None = None,  # no random choice depends on the stream
    ) -> CoderResult:
        with self._lock:
            if self.attempt_from == "calls":
                attempt = self._counts.get(task.id, 0)
            else:
                attempt = len(queried_knowledge.former_traces.get(task.id, ()))
            self._counts[task.id] = self._counts.get(task.id, 0) + 1
            self.calls.append(ScriptedCall(task, queried_knowledge, last_feedback, attempt))
        items = self.script.get(task.id)
        if items is None:
            if self.default is None:
                raise NotFoundError(
                    f"ScriptedCoder has no script for task {task.id!r}; scripted tasks: "
                    f"{sorted(self.script)}"
                )
            ws = self.default
        else:
            ws = items[min(attempt, len(items) - 1)]
        used: tuple[str, ...] = ()
        if self.used_knowledge:
            used = tuple(
                s.knowledge.id for s in queried_knowledge.similar_successful.get(task.id, ())
            )
        return CoderResult(ws, used_knowledge_ids=used, strategy="scripted", notes=f"#{attempt}")

    def to_config(self, *, include_secrets: bool = False) -> dict[str, Any]:
        return {
            "name": self.name,
            "script": {tid: [w.to_dict() for w in ws] for tid, ws in self.script.items()},
            "default": None if self.default is None else self.default.to_dict(),
            "attempt_from": self.attempt_from,
            "used_knowledge": self.used_knowledge,
            "seed": self.seed,
        }
