"""The records of the CoSTEER method: frozen, JSON-serializable dataclasses (layer 0, no I/O).

Every record has ``to_dict()`` / ``from_dict()`` and ``from_dict(to_dict(x)) == x``. The
definitions live in :mod:`costeer_lab._records`; this is the public place to import them from.

Example:
    >>> from costeer_lab.records import Task
    >>> t = Task("alpha158/MA5", "MA5", "5-day mean of close", formulation="Mean($close, 5)")
    >>> Task.from_dict(t.to_dict()) == t
    True
"""

from costeer_lab._records import (
    ErrorFix,
    Knowledge,
    MultiFeedback,
    QueriedKnowledge,
    ScoredKnowledge,
    SingleFeedback,
    Task,
    Workspace,
)

__all__ = [
    "ErrorFix",
    "Knowledge",
    "MultiFeedback",
    "QueriedKnowledge",
    "ScoredKnowledge",
    "SingleFeedback",
    "Task",
    "Workspace",
]
