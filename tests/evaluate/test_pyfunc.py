"""PythonFunctionEvaluator's design: trusted replay, rounds of calls, random tests, feedback
levels, defensive reading of answers (in-process runner; the sandbox: test_pyfunc_adversarial)."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.evaluate import EvaluatorSettings, InProcessRunner, PythonFunctionEvaluator
from costeer_lab.evaluate._protocol import InProcessOutcome
from costeer_lab.evaluate._pyfunc_answers import read_answers
from costeer_lab.evaluate._pyfunc_proxy import Call
from costeer_lab.evaluate._pyfunc_replay import HiddenTests
from costeer_lab.records import SingleFeedback, Task, Workspace

TASK = Task("t/f", "f", "A function.", extra={"entry_point": "f"})
EXPECTED = 987654321  # the distinctive expected value of a hidden assertion


def hidden(tests: str) -> Workspace:
    return Workspace({"tests.py": tests})


def code(src: str) -> Workspace:
    return Workspace({"main.py": src})


class RecordingRunner:
    """The in-process runner, keeping every workspace it was asked to run."""

    def __init__(self) -> None:
        self.workspaces: list[Workspace] = []
        self.inner = InProcessRunner()

    def run(
        self,
        workspace: Workspace,
        *,
        inputs: Mapping[str, str | Path] | None = None,
        collect: Sequence[str] = (),
    ) -> InProcessOutcome:
        self.workspaces.append(workspace)
        return self.inner.run(workspace, inputs=inputs, collect=collect)


def evaluate(
    src: str, tests: str | None, detail: str = "diagnostics", task: Task = TASK
) -> SingleFeedback:
    settings = EvaluatorSettings(feedback_detail=detail)
    ev = PythonFunctionEvaluator(runner="inprocess", settings=settings)
    return ev.evaluate(task, code(src), None if tests is None else hidden(tests))


def everything(fb: SingleFeedback) -> str:
    return json.dumps(fb.to_dict(), default=str)


# -- the hidden tests never reach the candidate's process ---------------------------------------


def test_the_workspace_holds_calls_but_neither_tests_nor_expected_values() -> None:
    runner = RecordingRunner()
    tests = f"# canary-7f3a\ndef check(c):\n    assert c(3) == {EXPECTED}\n    assert c(4) == 5\n"
    ev = PythonFunctionEvaluator(runner=runner)
    fb = ev.evaluate(TASK, code("def f(x):\n    return x + 1\n"), hidden(tests))
    assert fb.final_decision is False and fb.details["status"] == "assertion_failed"
    assert len(runner.workspaces) == 1
    files = runner.workspaces[0].files
    assert "tests.py" not in files and "_costeer_tests.py" not in files
    for text in files.values():
        assert "canary-7f3a" not in text and str(EXPECTED) not in text and "check(" not in text
    calls = json.loads(files["_costeer_calls.json"])
    assert calls["calls"] == [[[{"int": "3"}], {"dict": []}], [[{"int": "4"}], {"dict": []}]]


def test_helpers_come_from_the_trusted_prompt_not_from_the_candidate() -> None:
    prompt = 'def enc(s):\n    return s[::-1]\n\n\ndef f(s):\n    """Undo enc."""\n'
    task = Task("t/f", "f", "Undo enc.", extra={"entry_point": "f", "prompt": prompt})
    tests = "def check(c):\n    assert c(enc('abc')) == 'abc'\n"
    cheat = "def enc(s):\n    return s\n\n\ndef f(s):\n    return s\n"  # redefines the helper
    assert evaluate(cheat, tests, task=task).final_decision is False
    assert evaluate("def f(s):\n    return s[::-1]\n", tests, task=task).final_decision is True


def test_a_prompt_that_ends_at_a_bare_signature_still_gives_its_helpers() -> None:
    prompt = "K = 7\n\ndef f(x):\n"
    task = Task("t/f", "f", "Add K.", extra={"entry_point": "f", "prompt": prompt})
    tests = "def check(c):\n    assert c(1) == 1 + K\n"
    assert evaluate("def f(x):\n    return x + 7\n", tests, task=task).final_decision is True


# -- rounds of calls, mutation, exceptions ----------------------------------------------------


def test_arguments_that_depend_on_earlier_answers_take_more_rounds() -> None:
    tests = (
        "def check(c):\n    x = 0\n    for _ in range(4):\n        x = c(x)\n    assert x == 4\n"
    )
    fb = evaluate("def f(x):\n    return x + 1\n", tests)
    assert fb.final_decision is True, fb.return_checking
    assert fb.details["runs"] == 4 and fb.details["calls"] == 4
    nested = evaluate(
        "def f(x):\n    return x + 1\n", "def check(c):\n    assert c(c(c(0))) == 3\n"
    )
    assert nested.final_decision is True and nested.details["runs"] == 3


def test_statements_that_need_unknown_answers_are_skipped_in_discovery() -> None:
    cases = [(i, i + 1) for i in range(30)]
    tests = (
        f"def check(c):\n    for x, want in {cases}:\n        got = c(x)\n"
        "        if got != want:\n            raise AssertionError(f'{x}: {got}')\n"
    )
    fb = evaluate("def f(x):\n    return x + 1\n", tests)
    assert fb.final_decision is True and fb.details["calls"] == 30 and fb.details["runs"] == 1
    assert evaluate("def f(x):\n    return x\n", tests).details["status"] == "assertion_failed"


def test_no_call_is_made_with_a_stale_argument() -> None:
    tests = "def check(c):\n    x = 0\n    x = int(c(1))\n    assert c(x + 100) == 103\n"
    fb = evaluate("def f(x):\n    return x + 1\n", tests)
    # discovery skips `x = int(c(1))` and makes x pending: no spurious f(100)
    assert fb.final_decision is True and fb.details["calls"] == 2 and fb.details["runs"] == 2


def test_too_many_rounds_is_a_clear_failure() -> None:
    tests = (
        "def check(c):\n    x = 0\n    for _ in range(20):\n        x = c(x)\n    assert x == 20\n"
    )
    fb = evaluate("def f(x):\n    return x + 1\n", tests)
    assert fb.final_decision is False and fb.details["status"] == "invalid"
    assert "more than 8 rounds" in (fb.return_checking or "")


def test_too_many_calls_is_a_clear_failure() -> None:
    tests = "def check(c):\n    for i in range(10_001):\n        assert c(i) == i\n"
    fb = evaluate("def f(x):\n    return x\n", tests)
    assert fb.final_decision is False and fb.details["status"] == "invalid"
    assert "more than 10000 distinct calls of f()" in (fb.return_checking or "")
    assert fb.details["runs"] == 0 and fb.execution == "Not run."


def test_independent_calls_are_collected_in_one_round() -> None:
    tests = "def check(c):\n" + "".join(f"    assert c({i}) == {i * 2}\n" for i in range(50))
    fb = evaluate("def f(x):\n    return 2 * x\n", tests)
    assert fb.final_decision is True and fb.details == {
        "status": "passed",
        "line": None,
        "feedback_detail": "diagnostics",
        "calls": 50,
        "runs": 1,
        "isolation": "inprocess",
    }


def test_a_failing_assertion_stops_the_replay_at_the_first_failure() -> None:
    tests = "def check(c):\n    assert c(1) == 1\n    assert c(2) == 2\n    assert c(3) == 3\n"
    fb = evaluate("def f(x):\n    return 1 if x == 1 else 0\n", tests)
    assert fb.final_decision is False
    assert "rejected the result of f(2)\n  it returned: 0" in (fb.return_checking or "")


def test_arguments_are_recorded_as_they_were_at_the_call() -> None:
    tests = (
        "def check(c):\n    a = [1]\n    first = c(a)\n    a.append(2)\n"
        "    assert (first, c(a)) == (1, 2)\n    r = c([5, 6, 7])\n    r_len = r\n"
        "    assert c([5, 6, 7]) == 3 and r_len == 3\n"
    )
    assert evaluate("def f(xs):\n    return len(xs)\n", tests).final_decision is True
    # every call hands the tests a fresh copy of the answer
    tests = "def check(c):\n    r = c(3)\n    r.append(99)\n    assert c(3) == [0, 1, 2]\n"
    assert evaluate("def f(n):\n    return list(range(n))\n", tests).final_decision is True


EXPECTS_VALUE_ERROR = (
    "def check(c):\n    try:\n        c(-1)\n    except ValueError:\n        pass\n"
    "    else:\n        assert False, 'should raise'\n    assert c(2) == 4\n"
)


@pytest.mark.parametrize(
    ("src", "ok"),
    [
        ("def f(x):\n    if x < 0:\n        raise ValueError('neg')\n    return x * x\n", True),
        (
            "class Neg(ValueError):\n    pass\n\n"
            "def f(x):\n    if x < 0:\n        raise Neg('neg')\n    return x * x\n",
            True,
        ),
        ("def f(x):\n    if x < 0:\n        raise KeyError('neg')\n    return x * x\n", False),
        ("def f(x):\n    return x * x\n", False),
    ],
)
def test_the_candidates_exceptions_are_raised_again_by_builtin_type(src: str, ok: bool) -> None:
    assert evaluate(src, EXPECTS_VALUE_ERROR).final_decision is ok


def test_the_tests_random_module_is_private_and_the_same_in_every_pass() -> None:
    tests = (
        "import random\nfrom random import choice\n\ndef check(c):\n"
        "    for _ in range(40):\n        x = random.randint(0, 10**9)\n"
        "        s = ''.join(choice('abc') for _ in range(random.randint(1, 9)))\n"
        "        assert c(x, s) == (x * 2, s[::-1])\n"
    )
    random.seed(123)
    state = random.getstate()
    fb = evaluate("def f(x, s):\n    return (x * 2, s[::-1])\n", tests)
    assert fb.final_decision is True, fb.return_checking
    assert fb.details["calls"] == 40 and fb.details["runs"] == 1
    assert random.getstate() == state  # the process's own random state is untouched


def test_humaneval_38_style_random_tests_replay_consistently() -> None:
    prompt = (
        "def encode_cyclic(s: str):\n"
        "    groups = [s[(3 * i):min((3 * i + 3), len(s))] for i in range((len(s) + 2) // 3)]\n"
        "    groups = [(group[1:] + group[0]) if len(group) == 3 else group for group in groups]\n"
        '    return "".join(groups)\n\n\ndef decode_cyclic(s: str):\n    """Undo."""\n'
    )
    tests = (
        "def check(candidate):\n    from random import randint, choice\n    import string\n"
        "    letters = string.ascii_lowercase\n    for _ in range(100):\n"
        "        str = ''.join(choice(letters) for i in range(randint(10, 20)))\n"
        "        encoded_str = encode_cyclic(str)\n        assert candidate(encoded_str) == str\n"
    )
    task = Task("t/d", "decode_cyclic", "Undo.", extra={"entry_point": "decode_cyclic",
                                                       "prompt": prompt})  # fmt: skip
    good = "def decode_cyclic(s):\n    return encode_cyclic(encode_cyclic(s))\n"
    fb = evaluate(prompt.split("\n\n\ndef decode")[0] + "\n\n\n" + good, tests, task=task)
    assert fb.final_decision is True and fb.details["calls"] == 100, fb.return_checking
    again = evaluate(prompt.split("\n\n\ndef decode")[0] + "\n\n\n" + good, tests, task=task)
    assert again.details == fb.details


# -- feedback levels ------------------------------------------------------------------------------

FAILING = (
    f"def check(c):\n    assert c(1) == 2\n    assert c(3) == {EXPECTED}, 'want {EXPECTED}'\n"
)
WRONG = "def f(x):\n    return x + 1\n"


@pytest.mark.parametrize("detail", ["verdict", "diagnostics", "full"])
def test_the_expected_value_is_shown_only_in_full(detail: str) -> None:
    fb = evaluate(WRONG, FAILING, detail)
    assert fb.final_decision is False
    assert fb.details["feedback_detail"] == detail and fb.details["status"] == "assertion_failed"
    rc = fb.return_checking or ""
    if detail == "full":
        assert f"assert c(3) == {EXPECTED}, 'want {EXPECTED}'" in rc
        assert "hidden test line 3" in rc and f"message: want {EXPECTED}" in rc
        assert "f(3)" in rc and "it returned: 4" in rc
    else:
        assert str(EXPECTED) not in everything(fb)
        assert "assert" not in rc.replace("assertion failed", "")
    if detail == "diagnostics":
        assert rc == "[FAIL] assertion failed: a hidden test rejected the result of f(3)\n" + (
            "  it returned: 4"
        )
    if detail == "verdict":
        assert rc == "[FAIL] the hidden tests failed" and "f(3)" not in everything(fb)


@pytest.mark.parametrize("detail", ["verdict", "diagnostics", "full"])
def test_messages_of_the_tests_own_exceptions_are_shown_only_in_full(detail: str) -> None:
    tests = (
        "def check(c):\n    r = c(3)\n    if r != 987654321:\n"
        "        raise ValueError(f'want 987654321, got {r}')\n"
    )
    fb = evaluate(WRONG, tests, detail)
    assert fb.final_decision is False and fb.details["status"] == "error"
    rc = fb.return_checking or ""
    assert (str(EXPECTED) in everything(fb)) is (detail == "full")
    if detail == "diagnostics":
        assert rc == (
            "[FAIL] an exception was raised by the hidden tests: ValueError\n"
            "  while checking the result of f(3); it returned: 4"
        )


@pytest.mark.parametrize("detail", ["verdict", "diagnostics", "full"])
def test_load_errors_are_named_at_every_level(detail: str) -> None:
    fb = evaluate("def f(:\n", FAILING, detail)
    assert fb.details["status"] == "load_error"
    assert "could not be loaded: SyntaxError" in (fb.return_checking or "")
    assert "SyntaxError" in fb.execution
    missing = evaluate("def g():\n    pass\n", FAILING, detail)
    assert missing.details["status"] == "missing_entry_point"
    assert "does not define a function named 'f'" in (missing.return_checking or "")


def test_the_candidates_own_exception_is_reported_with_its_call() -> None:
    fb = evaluate("def f(x):\n    return [][x]\n", FAILING)
    assert fb.details["status"] == "error"
    assert (fb.return_checking or "") == (
        "[FAIL] an exception was raised while testing: f(1) failed\n"
        "  it raised IndexError: list index out of range"
    )
    assert "IndexError" in fb.execution  # the runner printed the candidate's traceback
    assert "IndexError: index out of range" in fb.error_fingerprints
    quiet = evaluate("def f(x):\n    return [][x]\n", FAILING, "verdict")
    assert quiet.execution == "Executed successfully." and "f(1)" not in everything(quiet)


def test_values_that_are_not_plain_data_fail() -> None:
    fb = evaluate("def f(x):\n    return iter([x + 1])\n", FAILING)
    assert fb.final_decision is False
    assert "it returned a 'list_iterator', which is not plain data" in (fb.return_checking or "")


def test_numpy_scalars_are_converted_by_the_runner() -> None:
    pytest.importorskip("numpy")
    src = "import numpy as np\n\ndef f(x):\n    return np.int64(x) + 1\n"
    assert evaluate(src, "def check(c):\n    assert c(1) == 2\n").final_decision is True


def test_invalid_hidden_tests_are_reported() -> None:
    assert "define no check" in (evaluate(WRONG, "x = 1\n").return_checking or "")
    bad = evaluate(WRONG, "def check(c):\n    assert c(lambda: 1) == 2\n")
    assert bad.details["status"] == "invalid" and "not plain data" in (bad.return_checking or "")
    syntax = evaluate(WRONG, "def check(c):\n    assert (\n")
    assert syntax.details["status"] == "invalid" and "do not compile" in (
        syntax.return_checking or ""
    )


def test_without_tests_only_loading_is_checked() -> None:
    fb = evaluate(WRONG, None)
    assert fb.final_decision is True and fb.details["runs"] == 1
    assert evaluate("raise SystemExit(0)\n", None).final_decision is False


# -- the trusted side reads answers defensively -------------------------------------------------


def _lines(*records: Any) -> bytes:
    return b"".join(
        (r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records
    )


def test_answers_are_read_defensively() -> None:
    data = (
        _lines(
            {"status": "loaded"},
            {"i": 0, "value": {"int": "1"}},
            b"{not json",
            {"i": 1, "value": 5},  # a bare number is not a valid encoding
            {"i": 2, "value": {"int": "2"}},
            {"i": 2, "value": {"int": "3"}},  # answered twice: no answer
            {"i": 7, "value": None},  # no such call
            {"i": True, "value": None},  # bool is not an index
            {"i": 3, "raised": "ValueError", "base": "ValueError", "message": "m"},
            {"i": 4, "unencodable": "Eq"},
            {"i": 5, "value": [True, "x", None]},
        )
        + b'{"i": 6, "value": tru'
    )  # unterminated: the run was killed mid-write
    report = read_answers(data, 7)
    assert report.status == "loaded" and sorted(report.answers) == [0, 3, 4, 5]
    assert report.rejected == {1, 2}
    assert report.answers[0].value() == 1 and report.answers[3].kind == "raised"
    assert report.answers[4].type_name == "Eq"
    big = _lines({"status": "loaded"}, {"i": 0, "value": "x" * 3_000_000})
    assert read_answers(big, 1).answers == {}
    assert read_answers(b'{"i": 0, "value": 1}\n', 1).status == "no_status"
    assert read_answers(None, 1).status == "no_status"
    forged = _lines({"status": "passed"})
    assert read_answers(forged, 0).status == "no_status"


def test_discovery_collects_past_failing_asserts_and_pending_values() -> None:
    tests = (
        "def check(c):\n    assert c(1) == 1\n    assert c(2) + 1 == 3\n"
        "    assert sorted(c(3)) == [1]\n    y = c(4)\n    assert c(y) == 0\n"
        "    assert c(5) == 5\n"
    )
    found = HiddenTests(tests, None, "f").discover({})
    assert found.status == "need_calls"
    # c(y) waits for c(4); everything else is collected in the first pass
    assert [c.describe("f") for c in found.new_calls] == ["f(1)", "f(2)", "f(3)", "f(4)", "f(5)"]
    assert all(isinstance(c, Call) for c in found.new_calls)


def test_feedback_detail_is_validated() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="feedback_detail"):
        EvaluatorSettings(feedback_detail="everything")
    assert EvaluatorSettings().feedback_detail == "diagnostics"
