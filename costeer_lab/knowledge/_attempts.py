"""How far an attempt got: its errors (fingerprints) and its progress level."""

from __future__ import annotations

from collections.abc import Iterable

from costeer_lab._fingerprint import extract_errors
from costeer_lab.errors import InvalidInputError
from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace

__all__ = ["as_triples", "attempt_errors", "attempt_level", "deteriorated"]

Triple = tuple[Task, Workspace, SingleFeedback]


def as_triples(trace: Iterable[Triple | Knowledge]) -> list[Triple]:
    """``(task, implementation, feedback)`` triples from triples or :class:`Knowledge` records.

    Raises:
        InvalidInputError: an item is neither.
    """
    out: list[Triple] = []
    for i, item in enumerate(trace):
        if isinstance(item, Knowledge):
            out.append((item.task, item.implementation, item.feedback))
        elif (
            isinstance(item, tuple)
            and len(item) == 3
            and isinstance(item[0], Task)
            and isinstance(item[1], Workspace)
            and isinstance(item[2], SingleFeedback)
        ):
            out.append(item)
        else:
            raise InvalidInputError(
                f"trace item {i} must be a (Task, Workspace, SingleFeedback) tuple or a "
                f"Knowledge, got {type(item).__name__}: {item!r:.80}"
            )
    return out


#: Progress levels: raised an error < ran but the result was wrong < success.
LEVEL_ERROR, LEVEL_WRONG, LEVEL_SUCCESS = 0, 1, 2


def attempt_errors(fb: SingleFeedback) -> list[tuple[str, str]]:
    """``(fingerprint, error line)`` pairs of a failed attempt.

    Uses ``fb.error_fingerprints`` (filled by the evaluators) with the matching lines of
    ``fb.execution``; when the evaluator gave none but the execution text holds a traceback,
    the fingerprints are extracted here. A successful attempt has no errors.
    """
    if fb.succeeded:
        return []
    lines = dict(extract_errors(fb.execution)) if fb.execution else {}
    if fb.error_fingerprints:
        return [(fp, lines.get(fp, fp)) for fp in dict.fromkeys(fb.error_fingerprints) if fp]
    if "Traceback (most recent call last)" in fb.execution:
        return list(lines.items())
    return []


def attempt_level(fb: SingleFeedback, errors: list[tuple[str, str]]) -> int:
    """0 when the attempt raised an error, 1 when it ran but failed the checks, 2 on success."""
    if fb.succeeded:
        return LEVEL_SUCCESS
    return LEVEL_ERROR if errors else LEVEL_WRONG


def deteriorated(level: int, score: float | None, best: tuple[int, float | None]) -> bool:
    """True when ``(level, score)`` is worse than the best earlier ``(level, score)``."""
    b_level, b_score = best
    if level != b_level:
        return level < b_level
    return score is not None and b_score is not None and score < b_score
