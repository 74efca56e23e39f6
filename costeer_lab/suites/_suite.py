"""The :class:`Suite` object: public tasks, hidden ground truths, inputs, splits, evaluator."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from costeer_lab.errors import InvalidInputError, NotFoundError, did_you_mean
from costeer_lab.evaluate._protocol import Evaluator
from costeer_lab.records import Task, Workspace

__all__ = ["Suite"]


class Suite:
    """A named set of tasks with their hidden ground truths.

    Coders see only :attr:`tasks` (and the :attr:`inputs` files at run time); ground truths
    come from :meth:`ground_truth` and are never attached to a :class:`Task`.

    Args:
        name: suite name (``"alpha158"``).
        tasks: the public tasks (ids unique).
        ground_truths: task id → reference implementation, or a callable building it lazily.
        evaluator_factory: builds the evaluator that fits the tasks (called by
            :meth:`evaluator` with its keyword arguments).
        inputs: data files every candidate gets in its working directory (name → path).
        splits: split name → task ids (``"train"``, ``"test"``).
        instructions: the candidate contract (what ``main.py`` reads and writes).
        check_targets: raises :class:`InvalidInputError` when the suite, as configured, cannot
            evaluate some of these task ids (see :meth:`check_targets`).
        verify_references: the experiment preflight runs each selected task's reference against
            its own tests before a run (user task files, whose references are untested).

    Example:
        >>> from costeer_lab.evaluate import PythonFunctionEvaluator
        >>> t = Task("demo/add", "add", "Add two numbers.", extra={"entry_point": "add"})
        >>> gt = Workspace({"main.py": "def add(a, b):\\n    return a + b\\n",
        ...                 "tests.py": "def check(f):\\n    assert f(1, 2) == 3\\n"})
        >>> s = Suite("demo", [t], {"demo/add": gt}, PythonFunctionEvaluator)
        >>> s.ground_truth("demo/add").files["tests.py"].startswith("def check")
        True
    """

    def __init__(
        self,
        name: str,
        tasks: Sequence[Task],
        ground_truths: Mapping[str, Workspace] | Callable[[str], Workspace],
        evaluator_factory: Callable[..., Evaluator],
        *,
        inputs: Mapping[str, str | Path] | None = None,
        splits: Mapping[str, Sequence[str]] | None = None,
        instructions: str = "",
        check_targets: Callable[[Sequence[str]], None] | None = None,
        verify_references: bool = False,
    ) -> None:
        self.name = name
        self.tasks: list[Task] = list(tasks)
        self._by_id = {t.id: t for t in self.tasks}
        if len(self._by_id) != len(self.tasks):
            ids = [t.id for t in self.tasks]
            dup = next(i for i in ids if ids.count(i) > 1)
            raise InvalidInputError(f"suite {name!r}: duplicate task id {dup!r}")
        self._ground_truths = ground_truths
        self._gt_cache: dict[str, Workspace] = {}
        self._evaluator_factory = evaluator_factory
        self.inputs: dict[str, Path] = {k: Path(v) for k, v in (inputs or {}).items()}
        self._splits = {k: list(v) for k, v in (splits or {}).items()}
        for split, ids in self._splits.items():
            unknown = [i for i in ids if i not in self._by_id]
            if unknown:
                raise InvalidInputError(
                    f"suite {name!r}: split {split!r} names unknown task ids {unknown[:5]}"
                )
        self.instructions = instructions
        self._check_targets = check_targets
        self.verify_references = verify_references

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def __repr__(self) -> str:
        return f"Suite({self.name!r}, {len(self.tasks)} tasks, splits={sorted(self._splits)})"

    def _repr_html_(self) -> str:
        from costeer_lab._html import card

        splits = ", ".join(f"{k} ({len(v)})" for k, v in sorted(self._splits.items()))
        rows = [[t.id, t.name, " ".join(t.description.split())[:90]] for t in self.tasks]
        return card(
            f"Suite {self.name}",
            [
                ("tasks", len(self.tasks)),
                ("splits", splits or "none"),
                ("inputs", ", ".join(sorted(self.inputs)) or "none"),
            ],
            table=(["id", "name", "description"], rows),
        )

    @property
    def task_ids(self) -> list[str]:
        """Ids of all tasks, in suite order."""
        return [t.id for t in self.tasks]

    def task(self, task_id: str) -> Task:
        """The task with this id (``NotFoundError`` naming the closest id otherwise)."""
        self._check_id(task_id)
        return self._by_id[task_id]

    def ground_truth(self, task_id: str) -> Workspace:
        """The hidden reference implementation of ``task_id`` (built once, then cached)."""
        self._check_id(task_id)
        if task_id not in self._gt_cache:
            source = self._ground_truths
            self._gt_cache[task_id] = source(task_id) if callable(source) else source[task_id]
        return self._gt_cache[task_id]

    def evaluator(self, **kwargs: object) -> Evaluator:
        """A new evaluator suited to these tasks; keyword arguments go to its constructor."""
        return self._evaluator_factory(**kwargs)

    def evaluators(self, *, critic: bool | None = None, **kwargs: Any) -> list[Evaluator]:
        """The suite's evaluator plus, when ``critic`` (default: the ``critic_enabled``
        setting), an :class:`~costeer_lab.evaluate.LLMCodeCritic`; for :class:`MultiEvaluator`."""
        from costeer_lab.evaluate._critic import LLMCodeCritic
        from costeer_lab.settings import get_settings

        out = [self.evaluator(**kwargs)]
        if critic if critic is not None else get_settings().evaluator.critic_enabled:
            out.append(LLMCodeCritic())
        return out

    def check_targets(self, task_ids: Sequence[str]) -> None:
        """Refuse targets this suite, as configured, cannot evaluate (e.g. an Alpha158 panel
        with too few days for a task's window: every value would be missing).

        Raises:
            InvalidInputError: naming the task, the option and the value it needs.
        """
        if self._check_targets is not None:
            self._check_targets(task_ids)

    @property
    def split_names(self) -> list[str]:
        """Names of the defined splits."""
        return sorted(self._splits)

    def split(self, name: str) -> list[str]:
        """Task ids of split ``name`` (``"train"`` or ``"test"``; ``"all"`` gives every id)."""
        if name == "all":
            return self.task_ids
        if name not in self._splits:
            raise NotFoundError(
                f"suite {self.name!r} has no split {name!r}; "
                + did_you_mean(name, [*self._splits, "all"])
            )
        return list(self._splits[name])

    def _check_id(self, task_id: str) -> None:
        if task_id not in self._by_id:
            close = difflib.get_close_matches(task_id, list(self._by_id), n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise NotFoundError(
                f"suite {self.name!r} has no task {task_id!r} ({len(self.tasks)} tasks){hint}"
            )
