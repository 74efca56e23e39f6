"""Ground-truth relevance of a retrieved item to the task it was retrieved for.

A retrieval *hit* is a relevant item, not merely a returned one. Relevance is judged from what
the query side already knows (the target task's description and its last feedback) and what the
item carries (its task and feedback); no reference solution or hidden test is read, so judging
leaks nothing to the coders. The rules, per query kind:

- **similar / component**: the item's task and the target task share an *operator*
  (``op:<name>`` from :class:`BuiltinComponentExtractor`: a factor formula's operators, a
  HumanEval prompt's operation words). Categories, annotated types and data fields are shared
  by whole families (every Alpha158 task reads ``$close``, every HumanEval task is in category
  ``python_function``), so they do not make two tasks related. A task with no operator at all
  (pure field arithmetic such as ``($close-$open)/$open``) is related to another operator-free
  task sharing a data field.
- **error**: the fix was stored under an error fingerprint (the error's cause) that the
  target's last failure has too; a fix of a merely similar fingerprint is a miss.
- **former trace**: the trace failed with a cause of the current failure (a shared
  fingerprint) *and* it is not the current failure itself — a trace whose feedback equals the
  last feedback (the task's own last attempt, or an identical repeat of it) tells the coder
  nothing it was not already told. So an earlier attempt that hit the same cause with other
  code counts (it shows what was tried against this cause and did not work); the task's own
  last failure coming back does not, nor does a trace of another cause.

Example:
    >>> from costeer_lab.records import Task
    >>> ma = Task("MA5", "MA5", "", formulation="Mean($close, 5)/$close")
    >>> ma20 = Task("MA20", "MA20", "", formulation="Mean($close, 20)/$close")
    >>> std = Task("STD5", "STD5", "", formulation="Std($close, 5)/$close")
    >>> tasks_related(ma20, ma), tasks_related(std, ma)
    (True, False)
"""

from __future__ import annotations

from functools import lru_cache

from costeer_lab.knowledge._attempts import attempt_errors
from costeer_lab.knowledge._components import BuiltinComponentExtractor
from costeer_lab.records import Knowledge, SingleFeedback, Task

__all__ = [
    "current_causes",
    "fix_relevant",
    "relevance_components",
    "tasks_related",
    "trace_relevant",
]

_EXTRACTOR = BuiltinComponentExtractor()


@lru_cache(maxsize=4096)
def _cached(
    formulation: str, description: str, variables: tuple[str, ...], category: str
) -> frozenset[str]:
    task = Task("t", "t", description, formulation, dict.fromkeys(variables, ""), category)
    return frozenset(_EXTRACTOR.extract(task))


def _components(task: Task) -> frozenset[str]:
    return _cached(task.formulation, task.description, tuple(task.variables), task.category)


def relevance_components(task: Task) -> frozenset[str]:
    """The components that make two tasks related: operators, or fields when there is none.

    Example:
        >>> sorted(relevance_components(Task("K", "K", "", formulation="($close-$open)/$open")))
        ['field:close', 'field:open']
    """
    comps = _components(task)
    ops = frozenset(c for c in comps if c.startswith("op:"))
    return ops or frozenset(c for c in comps if c.startswith("field:"))


def tasks_related(item: Task, target: Task) -> bool:
    """Whether ``item``'s task is relevant knowledge for ``target`` (module docstring).

    Both share an operator; two operator-free tasks share a data field.
    """
    a, b = relevance_components(item), relevance_components(target)
    same_kind = any(c.startswith("op:") for c in a) == any(c.startswith("op:") for c in b)
    return same_kind and bool(a & b)


def current_causes(feedback: SingleFeedback | None) -> frozenset[str]:
    """Error fingerprints (causes) of the current failure; empty without one.

    Example:
        >>> current_causes(SingleFeedback(final_decision=False, error_fingerprints=("E: x",)))
        frozenset({'E: x'})
    """
    if feedback is None:
        return frozenset()
    return frozenset(fp for fp, _ in attempt_errors(feedback))


def fix_relevant(fingerprint: str, current: SingleFeedback | None) -> bool:
    """An error fix is relevant when its fingerprint is a cause of the current failure."""
    return fingerprint in current_causes(current)


def _same_failure(a: SingleFeedback, b: SingleFeedback) -> bool:
    return (a.execution, a.error_fingerprints, a.return_checking, a.code) == (
        b.execution,
        b.error_fingerprints,
        b.return_checking,
        b.code,
    )


def trace_relevant(trace: Knowledge, current: SingleFeedback | None) -> bool:
    """A former trace is relevant when it shares a cause with the current failure and is not
    that failure (or an identical repeat of it)."""
    if current is None or _same_failure(trace.feedback, current):
        return False
    return bool(current_causes(trace.feedback) & current_causes(current))
