"""The texts of :class:`PythonFunctionEvaluator`'s feedback, at each ``feedback_detail`` level.

``verdict`` says pass or fail and whether the code ran; errors of loading the candidate's own
module are still named. ``diagnostics`` adds the failing hidden-test call (function and
arguments) and what the candidate returned or raised; it never shows an expected value, the
text or message of an assertion, or the message of an exception raised by the tests' own code
(those are computed from expected values). ``full`` adds them: the failing statement, its
line, the assertion message and the tests' exception message.

Small domains (issue 22). Where the expected result of the failing call lies in a small domain
(a bool, ``None``, a yes/no word), naming the call *is* the answer: the coder knows what its
code returned there, so for a bool the other value is the expected one; an attacker returning
``True`` everywhere, then flipping each named input, passes a boolean task in one attempt per
hidden case without implementing anything. So at ``diagnostics`` :func:`guard` replays the
tests with each value of :data:`SMALL_DOMAIN` (and :data:`BOOLS` unless the prompt's
annotation or ``>>>`` examples show another return type: ``True`` would also pass ``== 1``) in
place of the failing call's answer; when one of them gets the tests past that call, the text is
one fixed line (:data:`SMALL_DOMAIN_TEXT`) whatever the status (assertion, exception, missing
answer, timeout) and the call — the same text for a wrong guess and for a failure further on,
so the position of the failure tells nothing either — and the error fingerprint is fixed too. An
attacker then learns pass/fail only, as at ``verdict``; the candidate's own stdout and stderr
(its tracebacks) are still shown. Residual: a domain outside these values (say one of five
task-specific words, or small ints) still leaks one guess per attempt, and a failure at a call
whose expected result is *not* small shows that every earlier result was accepted.
"""

from __future__ import annotations

import ast
import dataclasses
import doctest
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from costeer_lab._fingerprint import error_fingerprint
from costeer_lab.evaluate import _plaindata
from costeer_lab.evaluate._pyfunc_answers import Answer
from costeer_lab.evaluate._pyfunc_proxy import Call, describe_value
from costeer_lab.evaluate._pyfunc_replay import PassResult

__all__ = ["BOOLS", "SMALL_DOMAIN", "Detail", "Verdict", "explain", "fingerprint", "guard"]
__all__ += ["guessable", "may_return_bool"]

Detail = Literal["verdict", "diagnostics", "full"]

#: Results tried in place of a failing call's answer: when one passes, the expected result is
#: guessable and ``diagnostics`` does not name the call (see the module docstring).
SMALL_DOMAIN: tuple[object, ...] = (None, "YES", "NO", "Yes", "No", "yes", "no")
#: Tried too when the entry point may return a bool (its annotation says ``bool``, or there is
#: none): they would also pass a test expecting 0 or 1 (``1 == True``) of an ``int`` function.
BOOLS: tuple[object, ...] = (True, False)
#: Seconds the probes of one failure may take; beyond, the result counts as guessable.
PROBE_BUDGET_S = 5.0
#: The whole ``return_checking`` text of a failure at a guessable call (``diagnostics``).
SMALL_DOMAIN_TEXT = (
    "[FAIL] the hidden tests failed; the failing call is not named at this feedback level: "
    "its expected result lies in a small domain (a bool, None, a yes/no word), "
    "where the call and your result there would give the expected answer away"
)
_FAILING = ("assertion_failed", "error", "timeout", "no_result")
_QUOTES = ('"""', "'''")


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
    guessable: bool = False


Replay = Callable[[Mapping[str, Answer]], PassResult]


def _stuck(again: PassResult, first: PassResult) -> bool:
    """Whether a replay fails where ``first`` failed: at the same call, and on the same line
    of the tests when ``first`` has one (a call without an answer has none)."""
    a, b = again.call, first.call
    same_call = a is not None and b is not None and a.key == b.key
    same_line = first.line is None or again.line == first.line
    return again.status not in ("passed", "need_calls") and same_call and same_line


def _example_outputs(prompt: str) -> list[str]:
    """The outputs of the ``>>>`` examples in the prompt (public text), without the closing
    quotes of a docstring right below the last one (doctest reads them as an output line)."""
    try:
        examples = doctest.DocTestParser().get_examples(prompt)
    except ValueError:
        return []
    wants = (
        "\n".join(x for x in e.want.splitlines() if x.strip() not in _QUOTES).strip()
        for e in examples
    )
    return [w for w in wants if w]


def may_return_bool(prompt: str, entry: str) -> bool:
    """Whether the task's public prompt leaves it open that ``entry`` returns a bool: its
    return annotation mentions ``bool``; without one, an example output (``>>>``) is ``True``
    or ``False``, or there is no example.

    Example:
        >>> may_return_bool("def f(x: int) -> bool: ...", "f")
        True
        >>> may_return_bool("def f(x: int) -> int: ...", "f")
        False
    """
    try:
        tree = ast.parse(prompt)
    except (SyntaxError, ValueError):
        tree = ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.name == entry and node.returns is not None:
            return "bool" in ast.unparse(node.returns)
    outputs = _example_outputs(prompt)
    return not outputs or any(w in ("True", "False") for w in outputs)


def guessable(
    replay: Replay, memo: Mapping[str, Answer], result: PassResult, *, bools: bool = True
) -> bool:
    """Whether some value of :data:`SMALL_DOMAIN` (and of :data:`BOOLS` when ``bools``) in
    place of the failing call's answer gets the hidden tests past that call (probes taking
    over :data:`PROBE_BUDGET_S` count as yes).

    Example:
        >>> from costeer_lab.evaluate._pyfunc_proxy import Call
        >>> call = Call.of((4,), {})
        >>> def replay(memo):  # the hidden test: assert is_even(4) is True
        ...     ok = memo[call.key].value() is True
        ...     return PassResult("passed" if ok else "assertion_failed", call=call, line=1)
        >>> guessable(replay, {}, PassResult("assertion_failed", call=call, line=1))
        True
    """
    if result.call is None:
        return False
    start = time.perf_counter()
    for value in (BOOLS if bools else ()) + SMALL_DOMAIN:
        if time.perf_counter() - start > PROBE_BUDGET_S:
            return True  # fail closed
        probe = {**memo, result.call.key: Answer("value", encoded=_plaindata.encode(value))}
        if not _stuck(replay(probe), result):
            return True
    return False


def guard(
    verdict: Verdict, replay: Replay, memo: Mapping[str, Answer], prompt: str, entry: str
) -> Verdict:
    """``verdict`` marked :attr:`Verdict.guessable` when it fails at a call whose expected
    result lies in a small domain (:func:`guessable`, with :data:`BOOLS` when
    :func:`may_return_bool`); only worth calling for ``diagnostics``."""
    if verdict.status not in _FAILING or verdict.result.call is None:
        return verdict
    bools = may_return_bool(prompt, entry)
    if not guessable(replay, memo, verdict.result, bools=bools):
        return verdict
    return dataclasses.replace(verdict, guessable=True)


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
    if detail == "diagnostics" and verdict.guessable:
        return SMALL_DOMAIN_TEXT
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
    if verdict.guessable and detail != "full":
        return error_fingerprint("AssertionError: a hidden test failed on a small-domain result")
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
