"""The texts of :class:`PythonFunctionEvaluator`'s feedback, at each ``feedback_detail`` level.

``verdict`` says pass or fail and whether the code ran; errors of loading the candidate's own
module are still named. ``diagnostics`` adds the failing hidden-test call (function and
arguments) and what the candidate returned or raised; it never shows an expected value, the
text or message of an assertion, or the message of an exception raised by the tests' own code
(those are computed from expected values). ``full`` adds them: the failing statement, its
line, the assertion message and the tests' exception message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from costeer_lab._fingerprint import error_fingerprint
from costeer_lab.evaluate._pyfunc_answers import Answer
from costeer_lab.evaluate._pyfunc_proxy import Call, describe_value
from costeer_lab.evaluate._pyfunc_replay import PassResult

__all__ = ["Detail", "Verdict", "explain", "fingerprint"]

Detail = Literal["verdict", "diagnostics", "full"]


@dataclass(frozen=True)
class Verdict:
    """The outcome of one evaluation, before it becomes text.

    Attributes:
        status: ``passed``, ``load_error``, ``missing_entry_point``, ``assertion_failed``,
            ``error``, ``no_result`` (a needed call got no answer, or the module never
            finished loading), ``timeout`` (the tests ran too long on the candidate's answers)
            or ``invalid`` (the hidden tests cannot be run; ``message`` says why).
        has_tests: whether the task has hidden tests.
        result: the replay's result (its call, answer, line, statement and messages).
        message: load error, or why the evaluation is ``invalid``.
    """

    status: str
    has_tests: bool = True
    result: PassResult = field(default_factory=lambda: PassResult("passed"))
    message: str = ""


def _answer_text(answer: Answer | None) -> str:
    if answer is None:
        return "no answer"
    if answer.kind == "value":
        return f"it returned: {describe_value(answer.value())}"
    if answer.kind == "raised":
        return f"it raised {answer.type_name}: {answer.message}".rstrip(": ")
    if answer.kind == "unencodable":
        return f"it returned a {answer.type_name!r}, which is not plain data"
    return f"no answer: {answer.message}"


def _call_text(call: Call | None, entry: str) -> str:
    return f"{entry}()" if call is None else call.describe(entry)


def _where(result: PassResult) -> str:
    line = f" (hidden test line {result.line})" if result.line else ""
    text = f"\n  failing statement{line}: {result.statement}" if result.statement else ""
    return text + (f"\n  message: {result.message}" if result.message else "")


def explain(verdict: Verdict, detail: Detail, entry: str, main_file: str) -> str:
    """The ``return_checking`` text of a verdict.

    Example:
        >>> explain(Verdict("assertion_failed"), "verdict", "f", "main.py")
        '[FAIL] the hidden tests failed'
    """
    status, r = verdict.status, verdict.result
    if status == "passed":
        if not verdict.has_tests:
            return f"[ok] {main_file} defines {entry}() (no hidden tests given)"
        return "[ok] all hidden tests passed"
    if status == "load_error":
        return f"[FAIL] {main_file} could not be loaded: {verdict.message}"
    if status == "missing_entry_point":
        return f"[FAIL] {main_file} does not define a function named {entry!r}"
    if status == "invalid":
        return f"[FAIL] the hidden tests could not be run: {verdict.message}"
    if status == "no_result" and r.call is None:
        return f"[FAIL] the candidate did not report a result: {verdict.message}"
    if detail == "verdict":
        if status == "no_result":
            return "[FAIL] the candidate did not report a result (killed, timed out or crashed)"
        return "[FAIL] the hidden tests failed"
    call = _call_text(r.call, entry)
    if status == "no_result":
        why = r.answer.message if r.answer is not None else "no answer"
        return f"[FAIL] the candidate did not report a result for {call}: {why}"
    if status == "assertion_failed":
        text = (
            f"[FAIL] assertion failed: a hidden test rejected the result of {call}\n"
            f"  {_answer_text(r.answer)}"
            if r.call is not None
            else f"[FAIL] assertion failed before any call of {entry}()"
        )
    elif status == "timeout":
        text = f"[FAIL] {r.message}; the last call was {call}\n  {_answer_text(r.answer)}"
        return text + (_where(PassResult("timeout", line=r.line)) if detail == "full" else "")
    elif r.by_candidate:
        text = f"[FAIL] an exception was raised while testing: {call} failed\n  "
        text += _answer_text(r.answer)
    else:
        text = f"[FAIL] an exception was raised by the hidden tests: {r.error_type}"
        if r.call is not None:
            text += f"\n  while checking the result of {call}; {_answer_text(r.answer)}"
    if detail == "full":
        message = r.message if status == "assertion_failed" or not r.by_candidate else ""
        text += _where(PassResult(r.status, line=r.line, statement=r.statement, message=message))
    return text


def fingerprint(verdict: Verdict, detail: Detail, run_error: str | None) -> str | None:
    """Error fingerprint of the failure (``None`` when passed or already in stderr).

    The text fingerprinted follows the detail level: below ``full`` it never includes the
    assertion statement (masking keeps ``True``/``False``/``None``, which may be expected).

    Example:
        >>> fingerprint(Verdict("assertion_failed"), "diagnostics", None)
        'AssertionError: a hidden test assertion failed'
    """
    r = verdict.result
    if verdict.status == "assertion_failed":
        if detail == "full" and r.statement:
            return error_fingerprint(f"AssertionError: {r.statement}")
        return error_fingerprint("AssertionError: a hidden test assertion failed")
    if verdict.status == "error":
        if r.by_candidate or detail == "full":
            return error_fingerprint(f"{r.error_type}: {r.message}")
        return error_fingerprint(f"{r.error_type}: raised by the hidden tests")
    if verdict.status == "timeout":
        return error_fingerprint(f"TimeoutError: {r.message}")
    if verdict.status == "no_result":
        return error_fingerprint(run_error or "ExecutionError: no test result")
    if verdict.status == "invalid":
        return error_fingerprint(f"EvaluationError: {verdict.message}")
    return None
