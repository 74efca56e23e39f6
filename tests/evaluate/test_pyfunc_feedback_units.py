"""Fast unit tests of the function evaluator's feedback (no sandbox): the small-domain guard
(``may_return_bool``, ``guessable``, ``guard``), every ``explain`` text at each detail level,
and the error fingerprints. Replays run the real :class:`HiddenTests` in process on memos of
answers, as the evaluator does after the sandboxed run."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping

import pytest

from costeer_lab.evaluate import _pyfunc_feedback as fb
from costeer_lab.evaluate._plaindata import encode
from costeer_lab.evaluate._pyfunc_answers import Answer
from costeer_lab.evaluate._pyfunc_feedback import (
    SMALL_DOMAIN_TEXT,
    Verdict,
    explain,
    fingerprint,
    guard,
    guessable,
    may_return_bool,
)
from costeer_lab.evaluate._pyfunc_proxy import Call
from costeer_lab.evaluate._pyfunc_replay import HiddenTests, PassResult


def _value(v: object) -> Answer:
    return Answer("value", encode(v))


def _memo(answers: Mapping[tuple[object, ...], Answer]) -> dict[str, Answer]:
    return {Call.of(args, {}).key: a for args, a in answers.items()}


def _failure(
    tests: str, answers: Mapping[tuple[object, ...], object]
) -> tuple[HiddenTests, dict[str, Answer], PassResult]:
    """The hidden tests, the memo of the candidate's answers and the failing replay."""
    ht = HiddenTests(tests, "", "f")
    memo = _memo({args: _value(v) for args, v in answers.items()})
    result = ht.replay(memo)
    assert result.status not in ("passed", "need_calls"), result
    return ht, memo, result


# --------------------------------------------------------------------------- the constants


def test_small_domain_values_are_pinned() -> None:
    assert fb.SMALL_DOMAIN == (None, "YES", "NO", "Yes", "No", "yes", "no")
    assert fb.BOOLS == (True, False)
    assert fb.PROBE_BUDGET_S == 5.0
    assert SMALL_DOMAIN_TEXT == (
        "[FAIL] the hidden tests failed; the failing call is not named at this feedback level: "
        "its expected result lies in a small domain (a bool, None, a yes/no word), "
        "where the call and your result there would give the expected answer away"
    )


# --------------------------------------------------------------------------- may_return_bool


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("def f(x: int) -> bool:\n    ...\n", True),
        ("def f(x: int) -> int:\n    ...\n", False),
        ("def f(x) -> list[bool]:\n    ...\n", True),
        ("def f(x) -> 'bool | None':\n    ...\n", True),
        ("async def f(x) -> int:\n    ...\n", False),
        ("async def f(x) -> bool:\n    ...\n", True),
        # the annotation wins over examples
        ('def f(x) -> int:\n    """\n    >>> f(1)\n    True\n    """\n', False),
        ('def f(x) -> bool:\n    """\n    >>> f(1)\n    3\n    """\n', True),
    ],
)
def test_annotation_of_the_entry_point_decides(prompt: str, expected: bool) -> None:
    assert may_return_bool(prompt, "f") is expected


def test_only_the_entry_points_annotation_counts() -> None:
    helper_int = "def g(x) -> int:\n    ...\n\ndef f(x):\n    ...\n"
    assert may_return_bool(helper_int, "f") is True  # f unannotated, no example: open
    helper_bool = "def g(x) -> bool:\n    ...\n\ndef f(x) -> int:\n    ...\n"
    assert may_return_bool(helper_bool, "f") is False
    assert may_return_bool(helper_bool, "g") is True
    nested = "class C:\n    def f(self) -> int:\n        ...\n"
    assert may_return_bool(nested, "f") is False  # ast.walk finds methods too


def test_unannotated_entry_point_falls_back_to_the_examples() -> None:
    def prompt(*outputs: str) -> str:
        body = "".join(f"    >>> f({i})\n    {o}\n" for i, o in enumerate(outputs))
        return f'def f(x):\n    """Doc.\n\n{body}    """\n'

    assert may_return_bool(prompt("3", "4"), "f") is False
    assert may_return_bool(prompt("True"), "f") is True
    assert may_return_bool(prompt("False"), "f") is True
    assert may_return_bool(prompt("3", "False"), "f") is True  # any example
    assert may_return_bool(prompt("'True'"), "f") is False  # a string, not a bool
    assert may_return_bool(prompt(), "f") is True  # no example: open
    assert may_return_bool('def f(x):\n    """\n    >>> f(1)\n    """\n', "f") is True
    # the closing quotes right below an example are not part of its output
    single = "def f(x):\n    '''\n    >>> f(0)\n    False\n    '''\n"
    assert may_return_bool(single, "f") is True
    assert may_return_bool('def f(x):\n    """\n    >>> f(0)\n    1\n    """\n', "f") is False
    assert may_return_bool(">>> f(0)\nTrue\nx = '''\n", "f") is False  # not the quotes alone


def test_a_prompt_that_is_not_python_is_read_for_examples_only() -> None:
    assert may_return_bool("Write f(x) -> int.\n>>> f(1)\n2\n", "f") is False
    assert may_return_bool("Write f(x).\n>>> f(1)\nTrue\n", "f") is True
    assert may_return_bool("Write f(x).", "f") is True
    assert may_return_bool("", "f") is True
    # doctest cannot parse this example line (no blank after >>>): no examples, no error
    assert may_return_bool("def f(x) -> int: ...\n>>>f(1)\n", "f") is True


# --------------------------------------------------------------------------- guessable


BOOL_TESTS = "def check(c):\n    assert c(1) == 2\n    assert c(4) is True\n"


def test_a_bool_expected_result_is_guessable_only_with_bools() -> None:
    ht, memo, result = _failure(BOOL_TESTS, {(1,): 2, (4,): False})
    assert guessable(ht.replay, memo, result) is True
    assert guessable(ht.replay, memo, result, bools=True) is True
    assert guessable(ht.replay, memo, result, bools=False) is False


@pytest.mark.parametrize("expected", ["None", "'YES'", "'NO'", "'Yes'", "'No'", "'yes'", "'no'"])
def test_each_small_domain_value_is_guessable_without_bools(expected: str) -> None:
    tests = f"def check(c):\n    assert c(1) == 2\n    assert c(4) == {expected}\n"
    ht, memo, result = _failure(tests, {(1,): 2, (4,): "maybe"})
    assert guessable(ht.replay, memo, result, bools=False) is True


@pytest.mark.parametrize("expected", ["False", "0"])
def test_false_and_zero_are_guessed_with_bools(expected: str) -> None:
    tests = f"def check(c):\n    assert c(4) == {expected}\n"
    ht, memo, result = _failure(tests, {(4,): 7})
    assert guessable(ht.replay, memo, result) is True
    assert guessable(ht.replay, memo, result, bools=False) is False


def test_a_result_outside_the_small_domain_is_not_guessable() -> None:
    # the earlier answer (c(1) == 2) must stay in the probes' memo: without it the probe would
    # stop at c(1) and count as "past the failing call"
    tests = "def check(c):\n    assert c(1) == 2\n    assert c(4) == 3\n"
    ht, memo, result = _failure(tests, {(1,): 2, (4,): True})
    assert guessable(ht.replay, memo, result) is False
    assert guessable(ht.replay, memo, result, bools=False) is False
    words = "def check(c):\n    assert c(1) == 'maybe'\n"
    ht, memo, result = _failure(words, {(1,): "no"})
    assert guessable(ht.replay, memo, result) is False


def test_an_exception_at_the_call_is_stuck_too() -> None:
    # the tests index with the result: every small value raises KeyError on the same line
    tests = "def check(c):\n    assert {3: 1}[c(4)] == 1\n"
    ht, memo, result = _failure(tests, {(4,): 5})
    assert result.status == "error"
    assert guessable(ht.replay, memo, result) is False
    # ... unless one of them is a key: True == 1
    tests = "def check(c):\n    assert {1: 1}[c(4)] == 1\n"
    ht, memo, result = _failure(tests, {(4,): 5})
    assert guessable(ht.replay, memo, result) is True
    assert guessable(ht.replay, memo, result, bools=False) is False


def test_a_failure_without_a_call_is_not_guessable() -> None:
    def replay(memo: Mapping[str, Answer]) -> PassResult:
        raise AssertionError("never probed")

    assert guessable(replay, {}, PassResult("assertion_failed", line=2)) is False


CALL = Call.of((4,), {})
OTHER = Call.of((5,), {})


def _probe_results(*outcomes: PassResult) -> tuple[list[object], fb.Replay]:
    """A replay answering ``outcomes`` in turn; the values it was probed with."""
    seen: list[object] = []

    def replay(memo: Mapping[str, Answer]) -> PassResult:
        seen.append(memo[CALL.key].value())
        assert memo["kept"] == _value(1)
        return outcomes[min(len(seen), len(outcomes)) - 1]

    return seen, replay


def test_probes_try_bools_first_then_the_small_domain_in_order() -> None:
    stuck = PassResult("assertion_failed", call=CALL, line=3)
    seen, replay = _probe_results(stuck)
    assert guessable(replay, {"kept": _value(1)}, stuck) is False
    assert seen == [True, False, None, "YES", "NO", "Yes", "No", "yes", "no"]
    assert [type(v) for v in seen[:2]] == [bool, bool]
    seen, replay = _probe_results(stuck)
    assert guessable(replay, {"kept": _value(1)}, stuck, bools=False) is False
    assert seen == [None, "YES", "NO", "Yes", "No", "yes", "no"]


def test_the_first_probe_that_gets_past_stops_the_search() -> None:
    stuck = PassResult("assertion_failed", call=CALL, line=3)
    seen, replay = _probe_results(stuck, stuck, stuck, PassResult("passed"))
    assert guessable(replay, {"kept": _value(1)}, stuck) is True
    assert seen == [True, False, None, "YES"]


@pytest.mark.parametrize(
    ("again", "past"),
    [
        (PassResult("assertion_failed", call=CALL, line=3), False),
        (PassResult("error", call=CALL, line=3), False),
        (PassResult("timeout", call=CALL, line=3), False),
        (PassResult("no_answer", call=CALL, line=3), False),
        (PassResult("passed"), True),
        (PassResult("passed", call=CALL, line=3), True),
        (PassResult("need_calls", call=CALL, line=3), True),
        (PassResult("assertion_failed", call=OTHER, line=3), True),  # a later call failed
        (PassResult("assertion_failed", call=None, line=3), True),
        (PassResult("assertion_failed", call=CALL, line=4), True),  # a later line
        (PassResult("assertion_failed", call=CALL, line=None), True),
    ],
)
def test_what_counts_as_getting_past_the_failing_call(again: PassResult, past: bool) -> None:
    first = PassResult("assertion_failed", call=CALL, line=3)
    _, replay = _probe_results(again)
    assert guessable(replay, {"kept": _value(1)}, first) is past


def test_without_a_line_only_the_call_is_compared() -> None:
    first = PassResult("no_answer", call=CALL, line=None)
    _, replay = _probe_results(PassResult("assertion_failed", call=CALL, line=7))
    assert guessable(replay, {"kept": _value(1)}, first) is False
    _, replay = _probe_results(PassResult("assertion_failed", call=OTHER, line=None))
    assert guessable(replay, {"kept": _value(1)}, first) is True


def test_probes_past_the_time_budget_count_as_guessable(monkeypatch: pytest.MonkeyPatch) -> None:
    stuck = PassResult("assertion_failed", call=CALL, line=3)
    calls: list[int] = []

    def slow(memo: Mapping[str, Answer]) -> PassResult:
        calls.append(1)
        time.sleep(0.05)
        return stuck

    monkeypatch.setattr(fb, "PROBE_BUDGET_S", 0.02)
    assert guessable(slow, {}, stuck) is True  # fail closed
    assert len(calls) == 1  # the budget is checked before each probe
    monkeypatch.setattr(fb, "PROBE_BUDGET_S", 1.0)
    calls.clear()
    assert guessable(slow, {}, stuck) is False  # 9 probes of 0.05 s: within the budget
    assert len(calls) == 9


# --------------------------------------------------------------------------- guard


@pytest.mark.parametrize("status", ["assertion_failed", "error", "timeout", "no_result"])
def test_guard_marks_a_failure_at_a_guessable_call(status: str) -> None:
    ht, memo, result = _failure(BOOL_TESTS, {(1,): 2, (4,): False})
    verdict = Verdict(status, result=result, message="m")
    guarded = guard(verdict, ht.replay, memo, "def f(x) -> bool: ...", "f")
    assert guarded == dataclasses.replace(verdict, guessable=True)
    assert verdict.guessable is False  # a new verdict


@pytest.mark.parametrize("status", ["passed", "load_error", "missing_entry_point", "invalid"])
def test_guard_leaves_other_statuses_alone(status: str) -> None:
    ht, memo, result = _failure(BOOL_TESTS, {(1,): 2, (4,): False})
    verdict = Verdict(status, result=result)
    assert guard(verdict, ht.replay, memo, "def f(x) -> bool: ...", "f") is verdict


def test_guard_leaves_a_failure_without_a_call_alone() -> None:
    verdict = Verdict("assertion_failed", result=PassResult("assertion_failed", line=2))

    def replay(memo: Mapping[str, Answer]) -> PassResult:
        raise AssertionError("never probed")

    assert guard(verdict, replay, {}, "", "f") is verdict


def test_guard_tries_bools_only_when_the_prompt_allows_a_bool() -> None:
    ht, memo, result = _failure(BOOL_TESTS, {(1,): 2, (4,): False})
    verdict = Verdict("assertion_failed", result=result)
    int_prompt = "def f(x) -> int:\n    ...\n"
    assert guard(verdict, ht.replay, memo, int_prompt, "f") is verdict
    assert guard(verdict, ht.replay, memo, int_prompt, "g").guessable is True  # not f's
    assert guard(verdict, ht.replay, memo, "def f(x) -> bool: ...", "f").guessable is True
    assert guard(verdict, ht.replay, memo, "", "f").guessable is True


def test_guard_leaves_a_failure_at_a_large_domain_call_alone() -> None:
    tests = "def check(c):\n    assert c(1) == 2\n    assert c(4) == 3\n"
    ht, memo, result = _failure(tests, {(1,): 2, (4,): True})
    verdict = Verdict("assertion_failed", result=result)
    assert guard(verdict, ht.replay, memo, "", "f") is verdict


# --------------------------------------------------------------------------- explain

MAIN = "solution.py"


def _say(verdict: Verdict, detail: fb.Detail) -> str:
    return explain(verdict, detail, "f", MAIN)


DETAILS: tuple[fb.Detail, ...] = ("verdict", "diagnostics", "full")


@pytest.mark.parametrize("detail", DETAILS)
def test_texts_that_are_the_same_at_every_level(detail: fb.Detail) -> None:
    assert _say(Verdict("passed"), detail) == "[ok] all hidden tests passed"
    assert (
        _say(Verdict("passed", has_tests=False), detail)
        == "[ok] solution.py defines f() (no hidden tests given)"
    )
    assert (
        _say(Verdict("load_error", message="SyntaxError: bad"), detail)
        == "[FAIL] solution.py could not be loaded: SyntaxError: bad"
    )
    assert (
        _say(Verdict("missing_entry_point"), detail)
        == "[FAIL] solution.py does not define a function named 'f'"
    )
    assert (
        _say(Verdict("invalid", message="no check()"), detail)
        == "[FAIL] the hidden tests could not be run: no check()"
    )
    no_call = Verdict("no_result", result=PassResult("no_answer"), message="killed")
    assert _say(no_call, detail) == "[FAIL] the candidate did not report a result: killed"
    # guessable matters only where the call would be named
    assert _say(dataclasses.replace(no_call, guessable=True), detail) == _say(no_call, detail)
    passed = Verdict("passed", guessable=True)
    assert _say(passed, detail) == "[ok] all hidden tests passed"


ANSWER = Answer("value", encode([1, 2]))
FAILED = PassResult(
    "assertion_failed",
    call=Call.of((4,), {"k": "v"}),
    answer=ANSWER,
    message="want 3",
    line=5,
    statement="assert f(4, k='v') == 3, 'want 3'",
)


def test_verdict_level_says_pass_or_fail_only() -> None:
    for status in ("assertion_failed", "error", "timeout"):
        verdict = Verdict(status, result=dataclasses.replace(FAILED, status=status))
        assert _say(verdict, "verdict") == "[FAIL] the hidden tests failed"
        guessed = dataclasses.replace(verdict, guessable=True)
        assert _say(guessed, "verdict") == "[FAIL] the hidden tests failed"
    no_result = Verdict("no_result", result=dataclasses.replace(FAILED, status="no_answer"))
    assert (
        _say(no_result, "verdict")
        == "[FAIL] the candidate did not report a result (killed, timed out or crashed)"
    )


def test_a_guessable_failure_is_one_fixed_line_at_diagnostics_only() -> None:
    for status in ("assertion_failed", "error", "timeout", "no_result"):
        verdict = Verdict(status, result=FAILED, guessable=True)
        assert _say(verdict, "diagnostics") == SMALL_DOMAIN_TEXT
        assert _say(verdict, "full") == _say(dataclasses.replace(verdict, guessable=False), "full")
        assert _say(verdict, "full") != SMALL_DOMAIN_TEXT


def test_assertion_failed_texts() -> None:
    verdict = Verdict("assertion_failed", result=FAILED)
    head = (
        "[FAIL] assertion failed: a hidden test rejected the result of f(4, k='v')\n"
        "  it returned: [1, 2]"
    )
    assert _say(verdict, "diagnostics") == head
    assert _say(verdict, "full") == (
        head + "\n  failing statement (hidden test line 5): assert f(4, k='v') == 3, 'want 3'"
        "\n  message: want 3"
    )
    before = Verdict("assertion_failed", result=PassResult("assertion_failed", line=2))
    assert _say(before, "diagnostics") == "[FAIL] assertion failed before any call of f()"


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        (None, "no answer"),
        (Answer("value", encode("x" * 100)), "it returned: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        (Answer("value", encode(None)), "it returned: None"),
        (Answer("raised", type_name="KeyError", message="'k'"), "it raised KeyError: 'k'"),
        (Answer("raised", type_name="StopIteration"), "it raised StopIteration"),
        # only ": " is stripped, and only at the end (names and messages are the candidate's)
        (Answer("raised", type_name="ErrX", message="bad X"), "it raised ErrX: bad X"),
        (Answer("raised", type_name="ErrX"), "it raised ErrX"),
        (Answer("raised", type_name="E", message="a: "), "it raised E: a"),
        (Answer("unencodable", type_name="Foo"), "it returned a 'Foo', which is not plain data"),
        (Answer("missing", message="answer line too long"), "no answer: answer line too long"),
    ],
)
def test_what_the_candidate_answered(answer: Answer | None, text: str) -> None:
    result = PassResult("assertion_failed", call=Call.of((4,), {}), answer=answer, line=2)
    said = _say(Verdict("assertion_failed", result=result), "diagnostics")
    first, second = said.split("\n")
    assert first == "[FAIL] assertion failed: a hidden test rejected the result of f(4)"
    assert second.startswith("  " + text)
    if answer is not None and answer.kind == "value" and answer.value() is not None:
        assert second.endswith("xxx'")  # abbreviated by describe_value
        assert len(second) < 100
    else:
        assert second == "  " + text


def test_timeout_texts() -> None:
    result = dataclasses.replace(FAILED, status="timeout", message="the tests ran over 10 s")
    verdict = Verdict("timeout", result=result)
    head = "[FAIL] the tests ran over 10 s; the last call was f(4, k='v')\n  it returned: [1, 2]"
    assert _say(verdict, "diagnostics") == head
    # full adds the line only: a timeout has no assertion message or statement to show
    assert _say(verdict, "full") == head + ""
    lined = dataclasses.replace(result, statement="")
    assert _say(Verdict("timeout", result=lined), "full") == head
    no_call = PassResult("timeout", message="too long", line=3)
    assert _say(Verdict("timeout", result=no_call), "full") == (
        "[FAIL] too long; the last call was f()\n  no answer"
    )


def test_where_shows_the_line_only_with_a_statement() -> None:
    # _where: a line without a statement shows nothing; a statement without a line no line
    result = dataclasses.replace(FAILED, line=None)
    text = _say(Verdict("assertion_failed", result=result), "full")
    assert text.endswith(
        "\n  failing statement: assert f(4, k='v') == 3, 'want 3'\n  message: want 3"
    )
    result = dataclasses.replace(FAILED, statement="", message="")
    text = _say(Verdict("assertion_failed", result=result), "full")
    assert text == _say(Verdict("assertion_failed", result=result), "diagnostics")
    result = dataclasses.replace(FAILED, statement="")
    text = _say(Verdict("assertion_failed", result=result), "full")
    assert text.endswith("  it returned: [1, 2]\n  message: want 3")


def test_an_exception_of_the_candidate() -> None:
    raised = Answer("raised", type_name="ValueError", message="bad x")
    result = PassResult(
        "error",
        call=Call.of((4,), {}),
        answer=raised,
        by_candidate=True,
        error_type="ValueError",
        message="bad x",
        line=2,
        statement="assert f(4) == 3",
    )
    verdict = Verdict("error", result=result)
    head = (
        "[FAIL] an exception was raised while testing: f(4) failed\n  it raised ValueError: bad x"
    )
    assert _say(verdict, "diagnostics") == head
    # full: the statement, but the message is the candidate's own (already shown), not repeated
    assert _say(verdict, "full") == (
        head + "\n  failing statement (hidden test line 2): assert f(4) == 3"
    )


def test_an_exception_of_the_tests() -> None:
    result = PassResult(
        "error",
        call=Call.of((4,), {}),
        answer=Answer("value", encode(9)),
        error_type="KeyError",
        message="9 not in {3: 'x'}",
        line=2,
        statement="assert {3: 'x'}[f(4)] == 'x'",
    )
    verdict = Verdict("error", result=result)
    head = (
        "[FAIL] an exception was raised by the hidden tests: KeyError\n"
        "  while checking the result of f(4); it returned: 9"
    )
    assert _say(verdict, "diagnostics") == head
    assert _say(verdict, "full") == (
        head + "\n  failing statement (hidden test line 2): assert {3: 'x'}[f(4)] == 'x'"
        "\n  message: 9 not in {3: 'x'}"
    )
    before = PassResult("error", error_type="NameError", message="name 'g' is not defined")
    assert (
        _say(Verdict("error", result=before), "diagnostics")
        == "[FAIL] an exception was raised by the hidden tests: NameError"
    )
    assert _say(Verdict("error", result=before), "full") == (
        "[FAIL] an exception was raised by the hidden tests: NameError"
        "\n  message: name 'g' is not defined"
    )


def test_no_result_for_a_named_call() -> None:
    missing = Answer("missing", message="the run was killed (memory)")
    result = PassResult("no_answer", call=Call.of((4,), {}), answer=missing)
    text = "[FAIL] the candidate did not report a result for f(4): the run was killed (memory)"
    for detail in ("diagnostics", "full"):
        assert _say(Verdict("no_result", result=result), detail) == text
    unanswered = dataclasses.replace(result, answer=None)
    assert (
        _say(Verdict("no_result", result=unanswered), "full")
        == "[FAIL] the candidate did not report a result for f(4): no answer"
    )


def test_diagnostics_never_shows_expected_values() -> None:
    """The statement and the tests' messages (computed from expected values) stay at full."""
    for status in ("assertion_failed", "error", "timeout"):
        result = dataclasses.replace(FAILED, status=status, error_type="KeyError")
        text = _say(Verdict(status, result=result), "diagnostics")
        assert "== 3" not in text
        assert "want 3" not in text or status == "timeout"  # a timeout's message is ours


# --------------------------------------------------------------------------- fingerprint


def test_fingerprints_of_passes_and_load_failures_are_none() -> None:
    for status in ("passed", "load_error", "missing_entry_point"):
        for detail in DETAILS:
            assert fingerprint(Verdict(status), detail, "X: y") is None


def test_fingerprint_of_a_guessable_failure_is_fixed_below_full() -> None:
    fixed = "AssertionError: a hidden test failed on a small-domain result"
    for status in ("assertion_failed", "error", "timeout", "no_result"):
        verdict = Verdict(status, result=FAILED, guessable=True)
        assert fingerprint(verdict, "diagnostics", "MemoryError: x") == fixed
        assert fingerprint(verdict, "verdict", None) == fixed
    raised = dataclasses.replace(FAILED, status="error", error_type="KeyError")
    verdict = Verdict("error", result=raised, guessable=True)
    assert fingerprint(verdict, "full", None) == "KeyError: want <num>"  # full: no guard


def test_fingerprint_of_an_assertion() -> None:
    verdict = Verdict("assertion_failed", result=FAILED)
    generic = "AssertionError: a hidden test assertion failed"
    assert fingerprint(verdict, "verdict", None) == generic
    assert fingerprint(verdict, "diagnostics", None) == generic
    full = fingerprint(verdict, "full", None)
    assert full is not None and full.startswith("AssertionError: assert <id>(<num>")
    assert full != generic
    no_statement = Verdict("assertion_failed", result=dataclasses.replace(FAILED, statement=""))
    assert fingerprint(no_statement, "full", None) == generic
    guessed_full = Verdict("assertion_failed", result=FAILED, guessable=True)
    assert fingerprint(guessed_full, "full", None) == full


def test_fingerprint_of_an_exception() -> None:
    tests = PassResult("error", error_type="KeyError", message="9 not in 3")
    verdict = Verdict("error", result=tests)
    assert fingerprint(verdict, "verdict", None) == "KeyError: raised by the hidden tests"
    assert fingerprint(verdict, "diagnostics", None) == "KeyError: raised by the hidden tests"
    assert fingerprint(verdict, "full", None) == "KeyError: <num> not in <num>"
    own = Verdict("error", result=dataclasses.replace(tests, by_candidate=True))
    for detail in DETAILS:
        assert fingerprint(own, detail, None) == "KeyError: <num> not in <num>"


def test_fingerprint_of_a_timeout_invalid_and_no_result() -> None:
    timeout = Verdict("timeout", result=PassResult("timeout", message="the tests ran too long"))
    assert fingerprint(timeout, "diagnostics", None) == "TimeoutError: the tests ran too long"
    invalid = Verdict("invalid", message="no check function")
    assert fingerprint(invalid, "verdict", None) == "EvaluationError: no check function"
    no_result = Verdict("no_result")
    assert fingerprint(no_result, "verdict", None) == "ExecutionError: no test result"
    assert fingerprint(no_result, "verdict", "") == "ExecutionError: no test result"
    assert fingerprint(no_result, "full", "MemoryError: killed") == "MemoryError: killed"
