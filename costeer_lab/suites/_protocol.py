"""``SuiteLike``: what an experiment needs from a task suite (the joint the runner plugs it in).

:class:`~costeer_lab.suites.Suite` is the implementation every built-in suite and task file
returns; a user's own suite object needs only these members to run in an experiment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from costeer_lab.evaluate._protocol import Evaluator
from costeer_lab.records import Task, Workspace

__all__ = ["SuiteLike"]


class SuiteLike(Protocol):
    """Public tasks, hidden ground truths, splits, input files and the evaluators that fit.

    Example:
        >>> from costeer_lab.suites import load_suite
        >>> suite: SuiteLike = load_suite("humaneval", limit=2)
        >>> suite.split("train")
        ['humaneval/0']
    """

    @property
    def name(self) -> str:
        """The suite's name (named in error messages)."""
        ...

    @property
    def task_ids(self) -> Sequence[str]:
        """Ids of all tasks, in suite order."""
        ...

    @property
    def inputs(self) -> Mapping[str, Path]:
        """Data files every candidate gets in its working directory (name → path)."""
        ...

    def task(self, task_id: str) -> Task:
        """The task with this id (``NotFoundError`` otherwise)."""
        ...

    def ground_truth(self, task_id: str) -> Workspace:
        """The hidden reference implementation of ``task_id``; never shown to a coder."""
        ...

    def split(self, name: str) -> list[str]:
        """Task ids of split ``name`` (``"all"``: every id)."""
        ...

    def evaluator(self, **kwargs: object) -> Evaluator:
        """A new evaluator suited to the tasks."""
        ...

    def evaluators(self, *, critic: bool | None = None) -> list[Evaluator]:
        """The evaluators of a step (the suite's, plus an LLM critic when ``critic``)."""
        ...
