"""EvolvingItem: the tasks of one evolution run and their current implementations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from costeer_lab.errors import InvalidInputError
from costeer_lab.records import Task, Workspace

__all__ = ["EvolvingItem"]


@dataclass
class EvolvingItem:
    """The sub-tasks being evolved, their current implementations and (hidden) ground truths.

    Ground truths are for evaluators only: :class:`~costeer_lab.evolve.EvolvingStrategy` hands
    coders the :class:`~costeer_lab.records.Task` and the queried knowledge, never this object.
    Read them with :meth:`ground_truth_for_evaluation`, a name that makes every use easy to audit.

    Example:
        >>> from costeer_lab.records import Task
        >>> item = EvolvingItem([Task("t1", "t1", "add two numbers")])
        >>> item.implementations
        [None]
    """

    tasks: list[Task]
    implementations: list[Workspace | None] = field(default_factory=list)
    _ground_truths: list[Workspace | None] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        n = len(self.tasks)
        ids = [t.id for t in self.tasks]
        if len(set(ids)) != n:
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise InvalidInputError(f"EvolvingItem got duplicate task ids: {dup}")
        if not self.implementations:
            self.implementations = [None] * n
        if not self._ground_truths:
            self._ground_truths = [None] * n
        if len(self.implementations) != n or len(self._ground_truths) != n:
            raise InvalidInputError(
                f"EvolvingItem: {n} tasks but {len(self.implementations)} implementations and "
                f"{len(self._ground_truths)} ground truths"
            )

    @classmethod
    def from_tasks(
        cls, tasks: Sequence[Task], ground_truths: Sequence[Workspace | None] | None = None
    ) -> EvolvingItem:
        """Build an item; ``ground_truths[i]`` belongs to ``tasks[i]`` (or pass ``None``)."""
        gts: list[Workspace | None] = (
            list(ground_truths) if ground_truths is not None else [None] * len(tasks)
        )
        return cls(list(tasks), [None] * len(tasks), gts)

    def __len__(self) -> int:
        return len(self.tasks)

    @property
    def task_ids(self) -> list[str]:
        return [t.id for t in self.tasks]

    def ground_truth_for_evaluation(self, i: int) -> Workspace | None:
        """The ground truth of task ``i`` — to be passed to evaluators only, never to coders."""
        return self._ground_truths[i]
