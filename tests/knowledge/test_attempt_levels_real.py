"""Attempt levels and the former-trace rule on real evaluator feedback (issue 27).

The feedback is what ``FactorEvaluator`` (on a small synthetic Alpha158 panel) and
``PythonFunctionEvaluator`` return for real candidate code: a crash, a wrong result and a right
answer. Both evaluators fingerprint wrong results (``FactorMismatchError: …``,
``AssertionError: …``); the former-trace rule must still rank a wrong result above a crash, so
a crash that follows a wrong result is dropped as deteriorated.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costeer_lab.evaluate import EvaluatorSettings, PythonFunctionEvaluator
from costeer_lab.knowledge import KnowledgeBaseV2, RAGSettings, RAGStrategyV2
from costeer_lab.knowledge._attempts import (
    LEVEL_ERROR,
    LEVEL_SUCCESS,
    LEVEL_WRONG,
    attempt_errors,
    attempt_level,
)
from costeer_lab.records import SingleFeedback, Task, Workspace
from costeer_lab.suites import Suite, load_suite

MA5 = "alpha158/MA5"


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return load_suite(
        "alpha158", n_instruments=5, n_days=80, seed=3, cache_dir=tmp_path_factory.mktemp("p")
    )


@pytest.fixture(scope="module")
def factor_feedback(suite: Suite) -> dict[str, tuple[Workspace, SingleFeedback]]:
    """Real FactorEvaluator feedback on MA5 for candidates made from its ground truth."""
    task = suite.task(MA5)
    gt = suite.ground_truth(MA5)
    src = gt.files[gt.main_file]
    variants = {
        "right": src,
        "wrong": src.replace("WINDOW = 5", "WINDOW = 7"),  # runs, wrong values
        "wrong2": src.replace("WINDOW = 5", "WINDOW = 6"),
        "crash": src.replace('close = df["close"]', 'close = df["closing"]'),  # KeyError
        "no_output": src.replace('to_parquet("result.parquet")', 'to_parquet("x.parquet")'),
        "bad_format": src.replace("factor.to_frame(NAME)", "factor.reset_index()"),
    }
    ev = suite.evaluator(runner="inprocess")
    out = {}
    for name, code in variants.items():
        assert code != src or name == "right", f"variant {name} did not change the code"
        ws = Workspace({gt.main_file: code})
        out[name] = (ws, ev.evaluate(task, ws, gt))
    return out


@pytest.fixture(scope="module")
def suite_and_feedback(
    suite: Suite, factor_feedback: dict[str, tuple[Workspace, SingleFeedback]]
) -> tuple[Suite, dict[str, tuple[Workspace, SingleFeedback]]]:
    return suite, factor_feedback


def level(fb: SingleFeedback) -> int:
    return attempt_level(fb, attempt_errors(fb))


def test_the_factor_evaluator_fingerprints_wrong_values(
    factor_feedback: dict[str, tuple[Workspace, SingleFeedback]],
) -> None:
    """The premise: a wrong value carries an error fingerprint, like a crash."""
    wrong = factor_feedback["wrong"][1]
    assert not wrong.succeeded and wrong.details["ran"] is True
    assert any(fp.startswith("FactorMismatchError") for fp in wrong.error_fingerprints)
    crash = factor_feedback["crash"][1]
    assert crash.details["ran"] is False and crash.error_fingerprints
    assert factor_feedback["right"][1].succeeded


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("crash", LEVEL_ERROR),
        ("no_output", LEVEL_ERROR),  # ran, but generated no value
        ("wrong", LEVEL_WRONG),
        ("bad_format", LEVEL_WRONG),  # a value was generated, in the wrong shape
        ("right", LEVEL_SUCCESS),
    ],
)
def test_factor_levels(
    factor_feedback: dict[str, tuple[Workspace, SingleFeedback]], name: str, expected: int
) -> None:
    assert level(factor_feedback[name][1]) == expected


def test_former_traces_drop_a_crash_after_a_wrong_value(
    suite: Suite, kb: KnowledgeBaseV2, factor_feedback: dict[str, tuple[Workspace, SingleFeedback]]
) -> None:
    task = suite.task(MA5)
    rag = RAGStrategyV2(RAGSettings(max_former_traces=5, include_latest_attempt=False))
    order = ["wrong", "crash", "wrong2", "no_output"]
    for name in order:
        ws, fb = factor_feedback[name]
        rag.generate_knowledge(kb, [(task, ws, fb)], run_id="r")
    codes = {factor_feedback[n][0].code: n for n in order}

    def former(settings: RAGSettings) -> list[str]:
        qk = RAGStrategyV2(settings).query(kb, [task], {}, run_id="r", attempt=len(order) + 1)
        return [codes[k.implementation.code] for k in qk.former_traces[task.id]]

    # the crash and the run without output came after a wrong value: both deteriorated
    assert former(rag.settings) == ["wrong", "wrong2"]
    assert former(RAGSettings(max_former_traces=5)) == ["wrong", "wrong2", "no_output"]
    assert former(RAGSettings(max_former_traces=5, drop_deteriorated=False)) == order
    ws, fb = factor_feedback["right"]
    rag.generate_knowledge(kb, [(task, ws, fb)], run_id="r")
    assert kb.is_solved(task.id, run_id="r")
    assert [a.level for a in kb.task_attempts("r", task.id)] == [1, 0, 1, 0, 2]


TASK = Task("t/double", "double", "Return twice x.", extra={"entry_point": "double"})
TESTS = Workspace({"tests.py": "def check(f):\n    assert f(2) == 4\n    assert f(3) == 6\n"})
PYFUNC = {
    "right": "def double(x):\n    return 2 * x\n",
    "wrong": "def double(x):\n    return x + 3\n",  # returns, wrong value
    "raises": "def double(x):\n    raise ValueError('no')\n",
    "load_error": "import no_such_module_here\n",
    "no_entry": "def triple(x):\n    return 3 * x\n",
}


@pytest.mark.parametrize("detail", ["verdict", "diagnostics", "full"])
def test_python_function_levels_and_former_traces(detail: str, tmp_path: Path) -> None:
    from costeer_lab.knowledge import open_kb

    settings = EvaluatorSettings(feedback_detail=detail)
    ev = PythonFunctionEvaluator(runner="inprocess", settings=settings)
    fbs = {n: ev.evaluate(TASK, Workspace({"main.py": s}), TESTS) for n, s in PYFUNC.items()}
    assert fbs["wrong"].error_fingerprints  # wrong results are fingerprinted too
    assert {n: level(fb) for n, fb in fbs.items()} == {
        "right": LEVEL_SUCCESS,
        "wrong": LEVEL_WRONG,
        "raises": LEVEL_ERROR,
        "load_error": LEVEL_ERROR,
        "no_entry": LEVEL_ERROR,
    }
    kb = open_kb(f"sqlite:///{tmp_path / 'kb.db'}", version="v2", embedder="hashing")
    assert isinstance(kb, KnowledgeBaseV2)
    rag = RAGStrategyV2(RAGSettings(max_former_traces=5, include_latest_attempt=False))
    order = ["load_error", "wrong", "raises", "no_entry"]
    for name in order:
        rag.generate_knowledge(
            kb, [(TASK, Workspace({"main.py": PYFUNC[name]}), fbs[name])], run_id="r"
        )
    qk = rag.query(kb, [TASK], {}, run_id="r", attempt=5)
    codes = {PYFUNC[n]: n for n in order}
    assert [codes[k.implementation.code] for k in qk.former_traces[TASK.id]] == [
        "load_error",
        "wrong",
    ]
    kb.close()


def value_generated_rule(generated: list[bool]) -> list[int]:
    """The method's former-trace rule as RD-Agent states it: walking the kept attempts, drop an
    attempt that generated no value when the attempt before it did (indices of those kept)."""
    kept = list(range(len(generated)))
    i = 1
    while i < len(kept):
        if not generated[kept[i]] and generated[kept[i - 1]]:
            kept.pop(i)
        else:
            i += 1
    return kept


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["crash", "no_output", "wrong", "wrong2", "bad_format"]),
                min_size=1, max_size=7))  # fmt: skip
def test_former_traces_follow_the_value_generated_rule(
    suite_and_feedback: tuple[Suite, dict[str, tuple[Workspace, SingleFeedback]]],
    names: list[str],
) -> None:
    """On any sequence of real failed attempts, the former traces are the method's choice."""
    from costeer_lab.knowledge import open_kb

    suite, fbs = suite_and_feedback
    task = suite.task(MA5)
    kb = open_kb(":memory:", version="v2", embedder="hashing")
    rag = RAGStrategyV2(RAGSettings(max_former_traces=10, include_latest_attempt=False))
    for name in names:
        ws, fb = fbs[name]
        rag.generate_knowledge(kb, [(task, ws, fb)], run_id="r")
    qk = rag.query(kb, [task], {}, run_id="r", attempt=len(names) + 1)
    got = [k.id for k in qk.former_traces[task.id]]
    traces = [a.trace for a in kb.task_attempts("r", task.id)]
    generated = [fbs[n][1].details.get("format_ok") is not None for n in names]
    assert got == [traces[i] for i in value_generated_rule(generated)]
    kb.close()
