"""The ReuseCoder's feedback path: after a wrong answer it tries its own next candidate before
a fix borrowed from another task; after a crash the known fix for that error comes first."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from costeer_lab.coders import ReuseCoder
from costeer_lab.coders._adapt import adapt_workspace
from costeer_lab.coders._reuse import wrong_answer
from costeer_lab.records import ErrorFix, Knowledge, QueriedKnowledge, SingleFeedback

from ._coder_helpers import (
    expected_ma,
    knowledge,
    ma_code,
    ma_task,
    qk_for,
    run_factor,
    write_panel,
)

CHECK = "FactorCheckError: equal values (|diff| <= <num> + <num>*|truth|): <num> (threshold <num>)"


def _fb(*fps: str) -> SingleFeedback:
    return SingleFeedback(execution="x", final_decision=False, error_fingerprints=fps)


def _setup(last: SingleFeedback) -> QueriedKnowledge:
    """Target MA10: its first candidate (adapted MA5 code, here made wrong) already failed
    with ``last``; a second candidate (MA20) and a fix borrowed from another task (MA30) that
    once failed with the same fingerprint remain."""
    target = ma_task(10)
    wrong_ma5 = ma_code(5).replace(".mean()", ".sum()")
    first, second = knowledge(ma_task(5), wrong_ma5), knowledge(ma_task(20), ma_code(20))
    src = ma_task(30)
    fp = last.error_fingerprints[0]
    borrowed = ErrorFix(
        fp, fp, knowledge(src, "bad", last), knowledge(src, ma_code(30), kid="fix:MA30"), 1.0
    )
    adapted, _ = adapt_workspace(first.implementation, first.task, target)
    tried = Knowledge(target, adapted, last, "t")
    return qk_for(target, similar=[(first, 0.9), (second, 0.8)], traces=[tried], fixes=[borrowed])


def test_wrong_answer_is_told_apart_from_a_crash() -> None:
    assert wrong_answer(_fb(CHECK))
    assert wrong_answer(_fb("FactorOutputError: output: <str> was not written"))
    assert wrong_answer(_fb("AssertionError: candidate(<num>) == <num>"))
    assert wrong_answer(_fb("FactorMismatchError: window"))  # the code ran; values are wrong
    assert not wrong_answer(_fb("KeyError: <str>"))
    assert not wrong_answer(_fb(CHECK, "KeyError: <str>"))  # a crash among them
    assert not wrong_answer(_fb())
    assert not wrong_answer(SingleFeedback(final_decision=True)) and not wrong_answer(None)


def test_after_a_wrong_answer_the_next_own_candidate_comes_before_a_borrowed_fix(
    tmp_path: Path,
) -> None:
    last = _fb(CHECK)
    res = ReuseCoder().implement_with_info(ma_task(10), _setup(last), last)
    assert res.strategy == "adapted" and res.used_knowledge_ids == ("k:alpha/MA20",)
    assert res.extra["skipped"] == ["k:alpha/MA5"]  # its adaptation is the failed attempt
    # attempt 2 is right: the feedback led to a success without any ground truth
    write_panel(tmp_path)
    out = run_factor(res.workspace, tmp_path)
    want = expected_ma(tmp_path, 10, "close")
    np.testing.assert_allclose(out["MA10"].to_numpy(), want.to_numpy(), equal_nan=True)


def test_after_a_crash_the_known_fix_comes_first() -> None:
    last = _fb("KeyError: <str>")
    res = ReuseCoder().implement_with_info(ma_task(10), _setup(last), last)
    assert res.strategy == "known_fix" and res.used_knowledge_ids == ("fix:MA30",)
    assert res.workspace.code == ma_code(10)


def test_code_that_ran_is_a_wrong_answer_whatever_its_stderr_says() -> None:
    ran = {"ran": True, "format_ok": True}
    noisy = ("RuntimeWarning: invalid value encountered", "FactorMismatchError: values")
    assert wrong_answer(
        SingleFeedback(final_decision=False, error_fingerprints=noisy, details=ran)
    )
    assert not wrong_answer(SingleFeedback(final_decision=False, error_fingerprints=noisy[:1]))
    infra = {"ran": True, "infrastructure_error": "the reference failed"}
    assert not wrong_answer(SingleFeedback(final_decision=False, details=infra))


def test_after_a_value_mismatch_the_next_own_candidate_comes_before_a_borrowed_fix() -> None:
    last = _fb("FactorMismatchError: window")
    res = ReuseCoder().implement_with_info(ma_task(10), _setup(last), last)
    assert res.strategy == "adapted" and res.used_knowledge_ids == ("k:alpha/MA20",)
