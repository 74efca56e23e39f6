"""Ablations change what is retrieved; options are checked; the component query follows the
method's intersection tiers; harmful memory is detected and demoted."""

from __future__ import annotations

from typing import Any

import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.graph import TASK_DESCRIPTION, node_id
from costeer_lab.knowledge import (
    KnowledgeBaseV1,
    KnowledgeBaseV2,
    RAGSettings,
    RAGStrategyV2,
    find_harmful,
    iter_query_log,
    make_rag_strategy,
    open_kb,
)
from costeer_lab.knowledge._harmful import (
    STEP_RECORD_KIND,
    binomial_tail,
    harmful_items,
    step_attempts,
    stratified_tail,
)
from costeer_lab.knowledge._options import rag_option_keys
from costeer_lab.records import SingleFeedback
from costeer_lab.store import BaseStore

from ._kb_helpers import code, crash, factor, ok, seed

MA5 = factor("MA5", "Mean($close, 5)/$close", "average close over 5 days", "MA")
MA10 = factor("MA10", "Mean($close, 10)/$close", "average close over 10 days", "MA")
STD5 = factor("STD5", "Std($close, 5)/$close", "standard deviation of close, 5 days", "STD")
STD10 = factor("STD10", "Std($close, 10)/$close", "standard deviation of close, 10 days", "STD")
VMA5 = factor("VMA5", "Mean($volume, 5)/$volume", "average volume over 5 days", "VMA")

KINDS = ("former_trace", "similar", "component", "error")


def _full_kb(kb: KnowledgeBaseV2) -> dict[str, object]:
    """Seeds, a fixed error in STD5, and a failed attempt of MA10: every query kind finds
    something for MA10 at attempt 2."""
    kb.add_seed_knowledge([seed(MA5, "ma5"), seed(VMA5, "vma5")])
    rag = make_rag_strategy("v2")
    rag.generate_knowledge(kb, [(STD5, code("bad std"), crash("KeyError: 'close'"))], run_id="r")
    rag.generate_knowledge(kb, [(STD5, code("good std"), ok())], run_id="r")
    rag.generate_knowledge(kb, [(MA10, code("bad ma"), crash("KeyError: 'open'"))], run_id="r")
    return {"f/MA10": crash("KeyError: 'open'")}


def _retrieved(kb: KnowledgeBaseV2, **options: Any) -> dict[str, tuple[str, ...]]:
    rag = make_rag_strategy("v2", **options)
    last = {"f/MA10": crash("KeyError: 'open'")}
    qk = rag.query(kb, [MA10], last, run_id="r", attempt=2)
    return {
        "former_trace": tuple(k.implementation.code for k in qk.former_traces["f/MA10"]),
        "similar": tuple(x.knowledge.implementation.code for x in qk.similar_successful["f/MA10"]),
        "component": tuple(
            x.knowledge.implementation.code for x in qk.component_matches["f/MA10"]
        ),
        "error": tuple(f.fixed.implementation.code for f in qk.error_fixes["f/MA10"]),
    }


@pytest.mark.parametrize("kind", KINDS)
def test_each_v2_ablation_removes_exactly_its_query_kind(
    kb: KnowledgeBaseV2, store: BaseStore, kind: str
) -> None:
    _full_kb(kb)
    full = _retrieved(kb)
    assert all(full[k] for k in KINDS), full  # every kind finds something with all queries on
    ablated = _retrieved(kb, **{f"{kind}_query": False})
    assert ablated[kind] == ()
    assert {k: v for k, v in ablated.items() if k != kind} == {
        k: v for k, v in full.items() if k != kind
    }
    rag = make_rag_strategy("v2", **{f"{kind}_query": False})
    assert kind not in rag.query_kinds and len(rag.query_kinds) == 3
    rag.query(kb, [MA10], {}, run_id="log", attempt=1)
    logged = {row["query_kind"] for row in iter_query_log(store, run_id="log")}
    assert logged == set(KINDS) - {kind}


def test_error_query_example_of_the_arm_docstring(kb: KnowledgeBaseV2) -> None:
    """``{"error_query": false}`` (ArmSpec's own example) used to leave the arm running full V2."""
    _full_kb(kb)
    assert _retrieved(kb)["error"] == ("good std",)
    assert _retrieved(kb, error_query=False)["error"] == ()


@pytest.mark.parametrize("kind", ["former_trace", "similar"])
def test_each_v1_ablation_removes_its_query_kind(store: BaseStore, kind: str) -> None:
    kb = open_kb(store=store, version="v1", embedder="hashing")
    assert isinstance(kb, KnowledgeBaseV1)
    rag = make_rag_strategy("v1")
    kb.add_seed_knowledge([seed(MA5, "ma5")])
    rag.generate_knowledge(kb, [(MA10, code("bad ma"), crash("KeyError: 'open'"))], run_id="r")
    full = rag.query(kb, [MA10], {}, run_id="r", attempt=2)
    assert full.former_traces["f/MA10"] and full.similar_successful["f/MA10"]
    off = make_rag_strategy("v1", **{f"{kind}_query": False})
    got = off.query(kb, [MA10], {}, run_id="r", attempt=2)
    if kind == "similar":
        assert got.similar_successful["f/MA10"] == ()
        assert got.former_traces["f/MA10"] == full.former_traces["f/MA10"]
    else:
        assert got.former_traces["f/MA10"] == ()
        assert got.similar_successful["f/MA10"] == full.similar_successful["f/MA10"]
    assert off.query_kinds == tuple(k for k in ("former_trace", "similar") if k != kind)


def test_unknown_option_is_refused_naming_the_key_and_the_valid_keys() -> None:
    with pytest.raises(InvalidInputError) as info:
        make_rag_strategy("v2", error_qeury=False)
    msg = str(info.value)
    assert "'error_qeury'" in msg and "did you mean 'error_query'" in msg
    for key in rag_option_keys("v2"):
        assert repr(key) in msg
    # an option V1 does not honour is refused for V1, not silently ignored
    with pytest.raises(InvalidInputError, match="'max_error_fixes' is not an option of the v1"):
        make_rag_strategy("v1", max_error_fixes=0)
    with pytest.raises(InvalidInputError, match="error_query"):
        make_rag_strategy("v2", error_query="maybe")
    assert set(rag_option_keys("v1")) < set(rag_option_keys("v2"))
    assert set(rag_option_keys("v2")) == set(RAGSettings.model_fields)


def test_component_query_uses_intersection_tiers_not_cosine(kb: KnowledgeBaseV2) -> None:
    """B's description is the query's own wording (higher cosine) but B shares one of the
    query's four components; A is worded differently but shares all four. Tiers come first."""
    query = factor("Q", "Corr($close, Log($volume+1), 10)", "signal alpha beta gamma kappa")
    a = factor("A", "Corr(Log($volume+1), $close, 30)", "zq xv wk jj pp")
    b = factor("B", "Mean($close, 10)", "signal alpha beta gamma kappa")
    c = factor("C", "Corr($close, $volume, 10)", "unrelated words entirely here")
    kb.add_seed_knowledge([seed(a, "a"), seed(b, "b"), seed(c, "c")])
    index = kb.graph.collections[TASK_DESCRIPTION].index
    res = index.search(kb.query_vector(query.get_task_information()), 3)
    tds = {node_id(TASK_DESCRIPTION, t.get_task_information()): t.name for t in (a, b, c)}
    cosine_order = [tds[i] for i in res.ids]
    assert cosine_order[0] == "B"  # the precondition: cosine prefers B
    qk = v2_top(3).query(kb, [query], {}, run_id="r", attempt=1)
    got = [(x.knowledge.task.name, x.score) for x in qk.component_matches["f/Q"]]
    # A: close, volume, corr, log (4/4); C: close, volume, corr (3/4); B: close (1/4)
    assert set(kb.components_of(b)) == {"field:close", "op:mean"}
    assert got == [("A", 1.0), ("C", 0.75), ("B", 0.25)]
    assert [n for n, _ in got] != cosine_order


def test_component_query_cosine_breaks_ties_within_a_tier(kb: KnowledgeBaseV2) -> None:
    far = factor("FAR", "Mean($close, 30)/$close", "qq zz unrelated")
    near = factor("NEAR", "Mean($close, 20)/$close", "average close over 10 days")
    kb.add_seed_knowledge([seed(far, "far"), seed(near, "near")])
    qk = v2_top(2).query(kb, [MA10], {}, run_id="r", attempt=1)
    got = [(x.knowledge.task.name, x.score) for x in qk.component_matches["f/MA10"]]
    assert got == [("NEAR", 2 / 3), ("FAR", 2 / 3)]  # close, mean; not the category ma


def v2_top(k: int) -> RAGStrategyV2:
    return RAGStrategyV2(RAGSettings(max_component_matches=k, component_gt_ratio=1.0))


def test_binomial_tail_and_stratified_tail_by_hand() -> None:
    assert binomial_tail(0, 3, 0.5) == pytest.approx(0.125)
    assert binomial_tail(3, 3, 0.2) == pytest.approx(1.0)
    assert binomial_tail(1, 4, 0.5) == pytest.approx(5 / 16)
    with pytest.raises(InvalidInputError):
        binomial_tail(4, 3, 0.5)
    # one task, 4 attempts, 2 successes; the item's 2 uses both failed: C(2,0)C(2,2)/C(4,2)
    p, expected = stratified_tail([(4, 2, 2, 0)])
    assert p == pytest.approx(1 / 6) and expected == pytest.approx(1.0)
    # two such tasks: (1/6)^2 for 0 successes; E = 2
    assert stratified_tail([(4, 2, 2, 0)] * 2)[0] == pytest.approx(1 / 36)
    # 1 success among the uses of the first task: P(X <= 1) = 1/36 + 2 * (1/6)(4/6)
    assert stratified_tail([(4, 2, 2, 1), (4, 2, 2, 0)])[0] == pytest.approx(1 / 36 + 8 / 36)
    # a task with no attempt without the item, or none solved, is a single point: no evidence
    assert stratified_tail([(3, 0, 3, 0), (2, 0, 1, 0)]) == (1.0, 0.0)
    with pytest.raises(InvalidInputError, match="bad stratum"):
        stratified_tail([(2, 1, 3, 0)])


def test_item_used_on_hard_tasks_is_not_flagged() -> None:
    """Every attempt of the hard tasks fails, with or without the item: its 6 failures are
    what the tasks predict, so it is not flagged (a per-arm base rate would flag it)."""
    hard = [(f"h{i}", ["tough"], False) for i in range(6)]
    hard += [(f"h{i}", [], False) for i in range(6)] + [
        (f"h{i}", ["other"], False) for i in range(6)
    ]
    easy = [(f"e{i}", ["other"], True) for i in range(6)]
    assert find_harmful(hard + easy, min_uses=3, alpha=0.05) == []


def test_item_turning_easy_tasks_into_failures_is_flagged() -> None:
    """Each easy task succeeded twice without the item and failed when the coder used it."""
    attempts = [(f"e{i}", ["bad"], False) for i in range(4)]
    attempts += [(f"e{i}", [], True) for i in range(4) for _ in range(2)]
    found = find_harmful(attempts, min_uses=3, alpha=0.05)
    assert [(h.item_id, h.n, h.k) for h in found] == [("bad", 4, 0)]
    assert found[0].p_value == pytest.approx((1 / 3) ** 4)
    assert found[0].base_rate == pytest.approx(2 / 3)  # the tasks' prediction for its users
    assert find_harmful(attempts, min_uses=5, alpha=0.05) == []  # used 4 times only
    assert find_harmful(attempts, min_uses=3, alpha=(1 / 3) ** 4) == []  # tail not below


def test_retrieved_but_never_used_item_is_never_flagged(store: BaseStore) -> None:
    """Step records: "seen" is retrieved by every failing attempt but never used; "bad" is
    used. Only "bad" is evidence; former traces are never candidates."""
    attempts = []
    for i in range(4):
        retrieved = {"similar": [{"id": "seen", "score": 0.9}, {"id": "bad", "score": 0.8}],
                     "former_trace": [{"id": f"trace{i}", "score": 1.0}]}  # fmt: skip
        attempts.append(_step_attempt(f"t{i}", ["bad", f"trace{i}"], crash("E: x"), retrieved))
        attempts.append(
            _step_attempt(f"t{i}", [], ok(), {"similar": [{"id": "seen", "score": 1}]})
        )
    store.put_record(STEP_RECORD_KIND, "r/00001", {"run_id": "r", "step": 1, "attempts": attempts})
    uses = step_attempts(d for _, d in store.iter_records(STEP_RECORD_KIND))
    assert uses[0] == ("t0", ["bad"], False) and uses[1] == ("t0", [], True)
    flagged = harmful_items(store, RAGSettings(harmful_alpha=0.1))
    assert list(flagged) == ["bad"] and (flagged["bad"].n, flagged["bad"].k) == (4, 0)


def test_step_record_kind_is_the_agent_s() -> None:
    from costeer_lab.evolve._agent import STEP_KIND

    assert STEP_RECORD_KIND == STEP_KIND


def _step_attempt(
    task_id: str, used: list[str], fb: SingleFeedback, retrieved: dict[str, Any]
) -> dict[str, Any]:
    """One attempt of an ``evo_step`` record, in the shape :class:`EvoAgent` writes."""
    return {
        "task_id": task_id,
        "outcome": {"used_knowledge_ids": used},
        "feedback": fb.to_dict(),
        "retrieved": retrieved,
    }


def test_demote_harmful_changes_what_is_retrieved(kb: KnowledgeBaseV2, store: BaseStore) -> None:
    """MA5's implementation was used by four attempts that all failed on tasks whose two other
    attempts each (with other knowledge, or none) succeeded: it is flagged, and
    ``demote_harmful`` moves it last."""
    kb.add_seed_knowledge([seed(MA5, "ma5"), seed(STD5, "std5"), seed(VMA5, "vma5")])
    rag = make_rag_strategy("v2", max_similar=1, max_component_matches=1, component_gt_ratio=1.0)
    targets = [factor(f"MA{w}", f"Mean($close, {w})/$close", f"average close {w} d") for w in
               (11, 12, 13, 14)]  # fmt: skip
    ma5 = kb.success[kb.td_of(MA5)].node
    std5 = kb.success[kb.td_of(STD5)].node
    steps = [
        [_step_attempt(t.id, [ma5], crash("KeyError: 'a'"), {}) for t in targets],
        [_step_attempt(t.id, [std5], ok(), {}) for t in targets],
        [_step_attempt(t.id, [], ok(), {}) for t in targets],
    ]
    for i, attempts in enumerate(steps, 1):
        store.put_record(STEP_RECORD_KIND, f"h/{i:05d}", {"run_id": "h", "attempts": attempts})
    flagged = harmful_items(store, RAGSettings())
    assert list(flagged) == [ma5]
    assert (flagged[ma5].n, flagged[ma5].k) == (4, 0)
    probe = factor("MA15", "Mean($close, 15)/$close", "average close 15 d")
    plain = rag.query(kb, [probe], {}, run_id="p", attempt=1)
    assert plain.similar_successful["f/MA15"][0].knowledge.id == ma5
    assert plain.component_matches["f/MA15"][0].knowledge.id == ma5
    demoted = make_rag_strategy(
        "v2", max_similar=1, max_component_matches=1, component_gt_ratio=1.0, demote_harmful=True
    ).query(kb, [probe], {}, run_id="p", attempt=1)
    assert demoted.similar_successful["f/MA15"][0].knowledge.id != ma5
    assert demoted.component_matches["f/MA15"][0].knowledge.id != ma5
