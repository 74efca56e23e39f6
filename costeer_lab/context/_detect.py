"""Rule-based detection of a task's type from its text.

Rules, first match wins: words of programming (implement, function, script, bug, ``.py``, …)
make a ``coding_task``; words of inquiry (research, investigate, compare, sources, literature,
…) a ``research_task``; a short question (ends with ``?``, at most 25 words) a
``simple_question``; anything else a ``general_task``.
"""

from __future__ import annotations

import re

from costeer_lab.context._records import TaskType
from costeer_lab.errors import InvalidInputError

__all__ = ["detect_task_type"]

_CODING = re.compile(
    r"\b(implement\w*|code|coding|program\w*|script|function|class|method|module|python|"
    r"refactor\w*|debug\w*|bug|compile|unit tests?|algorithm|api|regex|sql|def)\b|\.py\b",
    re.IGNORECASE,
)
_RESEARCH = re.compile(
    r"\b(research\w*|investigat\w*|survey\w*|literature|compare|comparison|sources?|"
    r"analy[sz]e|analysis|study|studies|review|evidence for|state of the art|papers?)\b",
    re.IGNORECASE,
)
_MAX_QUESTION_WORDS = 25


def detect_task_type(text: str) -> TaskType:
    """The type of a task, from the words of its text.

    Args:
        text: the task as a person would write it.

    Returns:
        ``"coding_task"``, ``"research_task"``, ``"simple_question"`` or ``"general_task"``.

    Raises:
        InvalidInputError: ``text`` is not a non-empty string.

    Example:
        >>> detect_task_type("Implement a function that reverses a list")
        'coding_task'
        >>> detect_task_type("Compare the sources on factor decay")
        'research_task'
        >>> detect_task_type("What is the capital of France?")
        'simple_question'
        >>> detect_task_type("Plan the team offsite")
        'general_task'
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError(f"a task text must be a non-empty string; got {text!r}")
    if _CODING.search(text):
        return "coding_task"
    if _RESEARCH.search(text):
        return "research_task"
    stripped = text.strip()
    if stripped.endswith("?") and len(stripped.split()) <= _MAX_QUESTION_WORDS:
        return "simple_question"
    return "general_task"
