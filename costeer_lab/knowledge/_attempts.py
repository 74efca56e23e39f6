"""How far an attempt got: its errors (fingerprints) and its progress level.

The level orders attempts for the former-trace rule (``drop_deteriorated``): an attempt that
crashed (did not run, raised, produced no result) ranks below one that produced a result the
checks rejected, which ranks below a success. Error fingerprints do not decide it: evaluators
fingerprint wrong results too (``FactorMismatchError: …``, ``AssertionError: …``), so the level
comes from what the evaluator says about the run (:func:`produced_result`).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from costeer_lab._fingerprint import extract_errors
from costeer_lab.errors import InvalidInputError
from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace

__all__ = ["as_triples", "attempt_errors", "attempt_level", "deteriorated", "produced_result"]

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
    lines = dict(_errors_of(fb.execution)) if fb.execution else {}
    if fb.error_fingerprints:
        return [(fp, lines.get(fp, fp)) for fp in dict.fromkeys(fb.error_fingerprints) if fp]
    if "Traceback (most recent call last)" in fb.execution:
        return list(lines.items())
    return []


@lru_cache(maxsize=2048)
def _errors_of(execution: str) -> tuple[tuple[str, str], ...]:
    """:func:`extract_errors` of an execution text, memoized: the feedback a query is given is
    usually the one just recorded, whose text was scanned then, and a run repeats a few hundred
    distinct failures (a bulk insert scans each of them once while they stay in the memo)."""
    return tuple(extract_errors(execution))


#: ``details["status"]`` of :class:`~costeer_lab.evaluate.PythonFunctionEvaluator` when the
#: function returned results and a hidden test rejected one.
PYFUNC_WRONG_STATUSES = frozenset({"assertion_failed"})
#: ... when it did not load, lacked the entry point, raised (or returned what cannot be
#: checked), left a call unanswered, made the tests time out, or passed although a run failed.
PYFUNC_CRASH_STATUSES = frozenset(
    {"load_error", "missing_entry_point", "error", "no_result", "timeout", "passed"}
)


def produced_result(fb: SingleFeedback) -> bool | None:
    """Whether a failed attempt produced a result the checks rejected, from evaluator details.

    * :class:`~costeer_lab.evaluate.FactorEvaluator` (``details["ran"]``): ``True`` when the
      code ran and its output file was read (``format_ok`` set: a value mismatch or a format
      failure), ``False`` when it did not run to completion or wrote no output (no value was
      generated, as RD-Agent's ``value_generated_flag`` says).
    * :class:`~costeer_lab.evaluate.PythonFunctionEvaluator` (``details["status"]``): ``True``
      for ``assertion_failed``; ``False`` for a load error, a missing entry point, an exception
      while testing, no result or a timeout.
    * ``None`` when the details say neither (another evaluator, hand-built feedback, an
      infrastructure failure).

    Example:
        >>> produced_result(SingleFeedback(final_decision=False, details={"ran": False}))
        False
        >>> produced_result(SingleFeedback(details={"ran": True, "format_ok": True}))
        True
        >>> produced_result(SingleFeedback(details={"status": "assertion_failed"}))
        True
        >>> produced_result(SingleFeedback()) is None
        True
    """
    d = fb.details
    if "infrastructure_error" in d:
        return None
    ran = d.get("ran")
    if isinstance(ran, bool):
        return ran and isinstance(d.get("format_ok"), bool)
    status = d.get("status")
    if status in PYFUNC_WRONG_STATUSES:
        return True
    if status in PYFUNC_CRASH_STATUSES:
        return False
    return None


def attempt_level(fb: SingleFeedback, errors: list[tuple[str, str]]) -> int:
    """``LEVEL_SUCCESS`` (2) on success; ``LEVEL_WRONG`` (1) when the attempt produced a result
    the checks rejected; ``LEVEL_ERROR`` (0) when it crashed or produced nothing.

    What the evaluator reports decides (:func:`produced_result`); only feedback whose details
    say nothing falls back to the errors: any error (fingerprint or traceback) counts as a crash.

    Example:
        >>> from costeer_lab._fingerprint import error_fingerprint
        >>> wrong = SingleFeedback(
        ...     final_decision=False,
        ...     error_fingerprints=(error_fingerprint("FactorMismatchError: scale"),),
        ...     details={"ran": True, "format_ok": True},
        ... )
        >>> attempt_level(wrong, attempt_errors(wrong))
        1
        >>> attempt_level(SingleFeedback(final_decision=False, details={"ran": False}), [])
        0
    """
    if fb.succeeded:
        return LEVEL_SUCCESS
    produced = produced_result(fb)
    if produced is not None:
        return LEVEL_WRONG if produced else LEVEL_ERROR
    return LEVEL_ERROR if errors else LEVEL_WRONG


def deteriorated(level: int, score: float | None, best: tuple[int, float | None]) -> bool:
    """True when ``(level, score)`` is worse than the best earlier ``(level, score)``."""
    b_level, b_score = best
    if level != b_level:
        return level < b_level
    return score is not None and b_score is not None and score < b_score
