"""ReuseCoder: adapts retrieved code, skips failed candidates, prefers fixes, never sees truth."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

from costeer_lab.coders import BaseCoder, ReuseCoder
from costeer_lab.records import ErrorFix, Knowledge, QueriedKnowledge, Task, Workspace

from ._coder_helpers import (
    OK,
    expected_ma,
    failed,
    knowledge,
    ma_code,
    ma_task,
    qk_for,
    run_factor,
    write_panel,
)


def test_is_a_base_coder() -> None:
    assert isinstance(ReuseCoder(), BaseCoder)


def test_adapts_a_window_and_the_result_is_right(tmp_path: Path) -> None:
    target = ma_task(10)
    qk = qk_for(target, similar=[(knowledge(ma_task(5), ma_code(5)), 0.9)])
    res = ReuseCoder().implement_with_info(target, qk, None)
    assert res.strategy == "adapted"
    assert res.used_knowledge_ids == ("k:alpha/MA5",)
    assert res.workspace.code == ma_code(10)
    write_panel(tmp_path)
    out = run_factor(res.workspace, tmp_path)
    assert list(out.columns) == ["MA10"]
    want = expected_ma(tmp_path, 10, "close")
    np.testing.assert_allclose(out["MA10"].to_numpy(), want.to_numpy(), equal_nan=True)


def test_adapts_a_field_name(tmp_path: Path) -> None:
    target = ma_task(5, "open")
    qk = qk_for(target, similar=[(knowledge(ma_task(5), ma_code(5)), 0.8)])
    ws = ReuseCoder().implement(target, qk, None)
    assert '"$open"' in ws.code and "$close" not in ws.code
    write_panel(tmp_path)
    out = run_factor(ws, tmp_path)
    want = expected_ma(tmp_path, 5, "open")
    np.testing.assert_allclose(out.iloc[:, 0].to_numpy(), want.to_numpy(), equal_nan=True)


def test_takes_candidates_best_first() -> None:
    target = ma_task(10)
    best, other = knowledge(ma_task(5), ma_code(5)), knowledge(ma_task(20), ma_code(20))
    qk = qk_for(target, similar=[(best, 0.9), (other, 0.5)])
    assert ReuseCoder().implement_with_info(target, qk, None).used_knowledge_ids == (best.id,)


def test_skips_a_candidate_that_already_failed() -> None:
    target = ma_task(10)
    first, second = knowledge(ma_task(5), ma_code(5)), knowledge(ma_task(20), ma_code(20))
    # The adapted first candidate was already tried for this task and failed.
    tried = Knowledge(target, Workspace({"main.py": ma_code(10)}), failed("wrong values"), "t1")
    broken_second = ma_code(20).replace("rolling(20)", "rolling(20, min_periods=1)")
    second = knowledge(ma_task(20), broken_second)
    qk = qk_for(target, similar=[(first, 0.9), (second, 0.8)], traces=[tried])
    res = ReuseCoder().implement_with_info(target, qk, None)
    assert res.used_knowledge_ids == (second.id,)
    assert res.extra["skipped"] == [first.id]
    assert res.workspace.content_hash != tried.implementation.content_hash


def test_all_candidates_failed_falls_back_to_generic() -> None:
    target = ma_task(10)
    first = knowledge(ma_task(5), ma_code(5))
    tried = Knowledge(target, Workspace({"main.py": ma_code(10)}), failed("wrong"), "t1")
    res = ReuseCoder().implement_with_info(target, qk_for(target, [(first, 0.9)], [tried]), None)
    assert res.strategy == "generic"
    assert "already failed" in res.notes


def test_prefers_the_known_fix_for_the_last_error() -> None:
    target = ma_task(10)
    fp = "KeyError: <str>"
    src = ma_task(20)
    bad = knowledge(src, ma_code(20).replace('"$close"', '"close"'), failed("KeyError: 'close'"))
    fixed = knowledge(src, ma_code(20), kid="fixed:MA20")
    fix = ErrorFix(fp, "KeyError: 'close'", bad, fixed, score=0.7)
    other = knowledge(ma_task(5), ma_code(5))
    last = failed("KeyError: 'close'", fp)
    mine = Knowledge(target, Workspace({"main.py": "boom"}), last, "t1")
    qk = qk_for(target, similar=[(other, 0.95)], traces=[mine], fixes=[fix])
    res = ReuseCoder().implement_with_info(target, qk, last)
    assert res.strategy == "known_fix"
    assert res.used_knowledge_ids == ("fixed:MA20",)
    assert res.workspace.code == ma_code(10)


def test_fix_for_another_error_is_not_applied() -> None:
    target = ma_task(10)
    src = ma_task(20)
    fix = ErrorFix(
        "ValueError: <str>",
        "ValueError",
        knowledge(src, "x", failed("ValueError")),
        knowledge(src, ma_code(20), kid="fix"),
    )
    last = failed("KeyError: 'close'", "KeyError: <str>")
    qk = qk_for(target, similar=[(knowledge(ma_task(5), ma_code(5)), 0.9)], fixes=[fix])
    assert ReuseCoder().implement_with_info(target, qk, last).strategy == "adapted"


def test_uses_component_matches_after_similar_ones() -> None:
    target = ma_task(10)
    comp = knowledge(ma_task(30), ma_code(30))
    res = ReuseCoder().implement_with_info(target, qk_for(target, components=[(comp, 0.4)]), None)
    assert res.used_knowledge_ids == (comp.id,)
    no_comp = ReuseCoder(use_component_matches=False)
    qk = qk_for(target, components=[(comp, 0.4)])
    assert no_comp.implement_with_info(target, qk, None).strategy == "generic"


def test_generic_factor_attempt_without_knowledge(tmp_path: Path) -> None:
    target = Task("a/X", "X", "volume ratio", formulation="$volume/Mean($volume, 5)")
    res = ReuseCoder().implement_with_info(target, QueriedKnowledge(), None)
    assert res.strategy == "generic"
    assert res.used_knowledge_ids == ()
    write_panel(tmp_path)
    out = run_factor(res.workspace, tmp_path)  # follows the contract, even if wrong
    assert list(out.columns) == ["X"]
    assert "$volume" in res.workspace.code


def test_generic_function_attempt_without_knowledge() -> None:
    prompt = 'def add(a: int, b: int) -> int:\n    """Add two numbers."""\n'
    task = Task("he/0", "add", "add", extra={"prompt": prompt, "entry_point": "add"})
    ws = ReuseCoder().implement(task, QueriedKnowledge(), None)
    assert ws.code.startswith(prompt)
    namespace: dict[str, object] = {}
    exec(compile(ws.code, "main.py", "exec"), namespace)
    with pytest.raises(NotImplementedError):
        namespace["add"](1, 2)  # type: ignore[operator]


def test_already_solved_task_is_returned_as_is() -> None:
    target = ma_task(10)
    own = knowledge(target, ma_code(10), kid="own")
    qk = QueriedKnowledge(success_task_to_knowledge={target.id: own})
    res = ReuseCoder().implement_with_info(target, qk, None)
    assert res.strategy == "already_solved"
    assert res.workspace == own.implementation


def test_deterministic_given_seed_and_ties_depend_on_it() -> None:
    target = ma_task(10)
    tied = [(knowledge(ma_task(w), ma_code(w), kid=f"k{w}"), 0.5) for w in range(2, 30)]
    qk = qk_for(target, similar=tied)
    picks = {
        seed: ReuseCoder(seed=seed).implement_with_info(target, qk, None).used_knowledge_ids
        for seed in range(6)
    }
    again = ReuseCoder(seed=3).implement_with_info(target, qk, None)
    assert again.used_knowledge_ids == picks[3]
    assert len(set(picks.values())) > 1  # the seed decides between equal scores


def test_does_not_mutate_its_arguments() -> None:
    target = ma_task(10)
    qk = qk_for(target, similar=[(knowledge(ma_task(5), ma_code(5)), 0.9)])
    before = json.dumps(qk.to_dict(), sort_keys=True)
    ReuseCoder().implement(target, qk, failed("x", "fp"))
    assert json.dumps(qk.to_dict(), sort_keys=True) == before


def test_canary_ground_truth_never_reaches_the_coder() -> None:
    """Everything a coder may see is built from train knowledge and its own attempts; a canary
    planted only in the target's ground truth must appear in no argument and no output."""
    canary = "CANARY_7f3a91_GROUND_TRUTH"
    target = ma_task(10)
    ground_truth = Workspace({"main.py": ma_code(10) + f"# {canary}\n"})
    train = [knowledge(ma_task(w), ma_code(w)) for w in (5, 20, 30)]
    coder = ReuseCoder()
    traces: list[Knowledge] = []
    last = None
    seen_args: list[str] = []
    outputs: list[str] = []
    for attempt in range(4):
        similar = [(k, 1.0 - 0.1 * i) for i, k in enumerate(train)]
        qk = qk_for(target, similar=similar, traces=traces)
        seen_args.append(json.dumps([target.to_dict(), qk.to_dict(), last and last.to_dict()]))
        res = coder.implement_with_info(target, qk, last)
        outputs.append(json.dumps(res.to_dict()))
        # The evaluator (not the coder) compares with the ground truth and says "fail".
        verdict = res.workspace.code == ground_truth.code
        last = failed(f"attempt {attempt}: values differ") if not verdict else OK
        traces.append(Knowledge(target, res.workspace, last, f"trace{attempt}"))
    assert all(canary not in s for s in seen_args)
    assert all(canary not in s for s in outputs)
    # The three candidates adapt to the same code: tried once, then the generic attempt.
    strategies = [json.loads(o)["strategy"] for o in outputs]
    assert strategies == ["adapted", "generic", "generic", "generic"]


def test_output_parses_for_all_strategies() -> None:
    target = ma_task(10)
    for qk in (QueriedKnowledge(), qk_for(target, [(knowledge(ma_task(5), ma_code(5)), 1.0)])):
        ast.parse(ReuseCoder().implement(target, qk, None).code)
