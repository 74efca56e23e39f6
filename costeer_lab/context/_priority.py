"""Task metadata for scheduling: ``priority`` (higher first) and estimated ``complexity``.

The complexity is a 1–5 estimate from the task's text when the caller gives none: a base per
task type (question 1, general 2, research 3, coding 3), plus one for a long text (more than 60
words) and one for a text that lists several items (three or more bullet or numbered lines),
clamped to 1–5. Tasks stored before these fields existed load with priority 0 and the estimate.
"""

from __future__ import annotations

import re

from costeer_lab.errors import InvalidInputError

__all__ = ["COMPLEXITY_RANGE", "check_complexity", "check_priority", "estimate_complexity"]

#: The smallest and largest complexity.
COMPLEXITY_RANGE = (1, 5)
_BASE = {"simple_question": 1, "general_task": 2, "research_task": 3, "coding_task": 3}
_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+\S", re.MULTILINE)


def estimate_complexity(task: str, task_type: str) -> int:
    """The 1–5 complexity estimate of ``task`` (see the module docstring).

    Example:
        >>> estimate_complexity("What is 6 * 7?", "simple_question")
        1
        >>> estimate_complexity("Implement:\\n- a parser\\n- a printer\\n- tests", "coding_task")
        4
    """
    score = _BASE.get(task_type, 2)
    score += len(task.split()) > 60
    score += len(_ITEM.findall(task)) >= 3
    return max(COMPLEXITY_RANGE[0], min(COMPLEXITY_RANGE[1], score))


def check_priority(priority: object) -> int:
    """``priority`` when it is an integer, else :class:`InvalidInputError`."""
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise InvalidInputError(
            f"priority must be an integer (higher runs first); got {priority!r}"
        )
    return priority


def check_complexity(complexity: object) -> int:
    """``complexity`` when it is an integer in 1–5, else :class:`InvalidInputError`."""
    lo, hi = COMPLEXITY_RANGE
    if (
        isinstance(complexity, bool)
        or not isinstance(complexity, int)
        or not lo <= complexity <= hi
    ):
        raise InvalidInputError(
            f"complexity must be an integer from {lo} to {hi}; got {complexity!r}"
        )
    return complexity
