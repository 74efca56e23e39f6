"""RAGStrategyV2 queries on hand-built knowledge with known answers, and the edge cases."""

from __future__ import annotations

import pytest

from costeer_lab.graph import (
    COMPONENT,
    ERROR,
    TASK_DESCRIPTION,
    TASK_SUCCESS_IMPLEMENT,
    TASK_TRACE,
    intersection,
    node_id,
)
from costeer_lab.knowledge import (
    KnowledgeBaseV2,
    RAGSettings,
    RAGStrategyV2,
    iter_query_log,
    make_rag_strategy,
)

from ._kb_helpers import code, crash, factor, ok, seed, wrong

MA5 = factor("MA5", "Mean($close, 5)/$close", "average close over 5 days", "MA")
MA10 = factor("MA10", "Mean($close, 10)/$close", "average close over 10 days", "MA")
STD5 = factor("STD5", "Std($close, 5)/$close", "standard deviation of close, 5 days", "STD")
VMA5 = factor("VMA5", "Mean($volume, 5)/$volume", "average volume over 5 days", "VMA")
CORR = factor("CORR5", "Corr($close, Log($volume+1), 5)", "correlation of close and volume")


def v2(**kw: object) -> RAGStrategyV2:
    return RAGStrategyV2(RAGSettings.model_validate(kw))


def test_empty_kb_and_unseen_task(kb: KnowledgeBaseV2) -> None:
    qk = v2().query(kb, [MA5], {"f/MA5": crash("KeyError: 'close'")}, run_id="r", attempt=1)
    assert qk.former_traces == {"f/MA5": ()}
    assert qk.similar_successful == {"f/MA5": ()}
    assert qk.component_matches == {"f/MA5": ()}
    assert qk.error_fixes == {"f/MA5": ()}
    assert not qk.success_task_to_knowledge and not qk.failed_task_info_set
    assert kb.stats()["nodes.task_description"] == 0


def test_generate_knowledge_builds_the_typed_graph(kb: KnowledgeBaseV2) -> None:
    rag = v2()
    rag.generate_knowledge(kb, [(STD5, code("bad"), crash("KeyError: 'close'"))], run_id="r")
    rag.generate_knowledge(kb, [(STD5, code("good"), ok())], run_id="r")
    G = kb.graph.G
    td = node_id(TASK_DESCRIPTION, STD5.get_task_information())
    comps = {n for n in G.adj[td] if G.nodes[n]["kind"] == COMPONENT}
    assert comps == {node_id(COMPONENT, c) for c in ("field:close", "op:std", "category:std")}
    traces = [n for n in G.adj[td] if G.nodes[n]["kind"] == TASK_TRACE]
    assert len(traces) == 2
    err = node_id(ERROR, "KeyError: <str>")
    assert sum(G.has_edge(t, err) for t in traces) == 1
    assert [n for n in G.adj[td] if G.nodes[n]["kind"] == TASK_SUCCESS_IMPLEMENT]
    assert [a.attempt for a in kb.task_attempts("r", STD5.id)] == [1, 2]


def test_solved_tasks_are_returned_as_is(kb: KnowledgeBaseV2) -> None:
    kb.add_seed_knowledge([seed(MA5, "gt")])
    v2().generate_knowledge(kb, [(STD5, code("mine"), ok())], run_id="r")
    qk = v2().query(kb, [MA5, STD5], {}, run_id="r", attempt=2)
    assert qk.success_task_to_knowledge["f/MA5"].implementation.code == "gt"
    assert qk.success_task_to_knowledge["f/STD5"].implementation.code == "mine"
    other = v2().query(kb, [STD5], {}, run_id="other", attempt=1)
    assert "f/STD5" not in other.success_task_to_knowledge  # earned in another run


def test_former_traces_last_n_drop_deteriorated_keep_latest(kb: KnowledgeBaseV2) -> None:
    rag = v2(max_former_traces=2)
    steps = [crash("KeyError: 'a'"), wrong(0.1), wrong(0.3), crash("TypeError: x"), wrong(0.2)]
    for i, fb in enumerate(steps):
        rag.generate_knowledge(kb, [(MA5, code(f"v{i}"), fb)], run_id="r")
    qk = rag.query(kb, [MA5], {}, run_id="r", attempt=6)
    # kept (non-deteriorated): v0, v1, v2; last two = v1, v2; latest v4 replaces the oldest
    assert [k.implementation.code for k in qk.former_traces["f/MA5"]] == ["v2", "v4"]
    plain = v2(max_former_traces=3, include_latest_attempt=False, drop_deteriorated=False)
    qk = plain.query(kb, [MA5], {}, run_id="r", attempt=6)
    assert [k.implementation.code for k in qk.former_traces["f/MA5"]] == ["v2", "v3", "v4"]
    assert v2().query(kb, [MA5], {}, run_id="other", attempt=1).former_traces["f/MA5"] == ()


def test_trial_limit_marks_failed(kb: KnowledgeBaseV2) -> None:
    rag = v2(trial_limit=3)
    for i in range(2):
        rag.generate_knowledge(kb, [(MA5, code(f"v{i}"), wrong())], run_id="r")
    assert not rag.query(kb, [MA5], {}, run_id="r", attempt=3).failed_task_info_set
    rag.generate_knowledge(kb, [(MA5, code("v2"), wrong())], run_id="r")
    assert rag.query(kb, [MA5], {}, run_id="r", attempt=4).failed_task_info_set == {"f/MA5"}


def test_similar_query_ranks_successful_descriptions(kb: KnowledgeBaseV2) -> None:
    kb.add_seed_knowledge([seed(MA5, "ma5"), seed(VMA5, "vma5"), seed(CORR, "corr")])
    qk = v2(max_similar=2).query(kb, [MA10, MA5], {}, run_id="r", attempt=1)
    got = qk.similar_successful["f/MA10"]
    assert got[0].knowledge.implementation.code == "ma5"
    assert len(got) == 2 and got[0].score >= got[1].score
    assert "f/MA5" not in qk.similar_successful  # solved by seed


def test_component_query_intersects_components(kb: KnowledgeBaseV2) -> None:
    kb.add_seed_knowledge([seed(MA5, "ma5"), seed(VMA5, "vma5"), seed(STD5, "std5")])
    # MA10: field:close, op:mean, category:ma -> MA5 shares all, STD5 only close, VMA5 only mean
    qk = v2(max_component_matches=3).query(kb, [MA10], {}, run_id="r", attempt=1)
    got = qk.component_matches["f/MA10"]
    assert got[0].knowledge.implementation.code == "ma5" and got[0].score == 1.0
    assert {x.knowledge.implementation.code for x in got[1:]} == {"std5", "vma5"}
    assert all(x.score == 1 / 3 for x in got[1:])
    # the graph function agrees: tasks linked to both close and mean
    G = kb.graph.G
    both = intersection(G, [node_id(COMPONENT, "field:close"), node_id(COMPONENT, "op:mean")])
    assert both == {node_id(TASK_DESCRIPTION, MA5.get_task_information())}


def test_component_query_balances_ground_truth_and_self_earned(kb: KnowledgeBaseV2) -> None:
    gt = [factor(f"G{i}", f"Mean($close, {i})", f"gt mean {i}") for i in range(4)]
    mine = [factor(f"S{i}", f"Mean($close, {i + 10})", f"own mean {i}") for i in range(4)]
    kb.add_seed_knowledge([seed(t, f"gt{i}") for i, t in enumerate(gt)])
    v2().generate_knowledge(
        kb, [(t, code(f"self{i}"), ok()) for i, t in enumerate(mine)], run_id="r"
    )
    target = factor("T", "Mean($close, 99)", "target mean")

    def picked(ratio: float) -> list[str]:
        rag = v2(max_component_matches=4, component_gt_ratio=ratio)
        qk = rag.query(kb, [target], {}, run_id="r", attempt=1)
        return [x.knowledge.implementation.code[:2] for x in qk.component_matches["f/T"]]

    assert sorted(picked(0.5)) == ["gt", "gt", "se", "se"]
    assert picked(1.0) == ["gt"] * 4
    assert picked(0.0) == ["se"] * 4


def test_error_query_returns_fix_triples(kb: KnowledgeBaseV2) -> None:
    rag = v2()
    rag.generate_knowledge(kb, [(STD5, code("bad std"), crash("KeyError: 'close'"))], run_id="r")
    rag.generate_knowledge(kb, [(STD5, code("good std"), ok())], run_id="r")
    # another task hits the same mistake with another literal, path and line
    fb = crash("KeyError: 'volume'", path="/other/place.py")
    qk = rag.query(kb, [VMA5], {"f/VMA5": fb}, run_id="r", attempt=2)
    (fix,) = qk.error_fixes["f/VMA5"]
    assert fix.fingerprint == "KeyError: <str>" and fix.score == 1.0
    assert fix.error_text == "KeyError: 'close'"
    assert (
        fix.failed.implementation.code == "bad std" and fix.fixed.implementation.code == "good std"
    )
    assert fix.failed.task.id == fix.fixed.task.id == "f/STD5"
    # a different error type gets nothing
    qk = v2(error_similarity=1.0).query(
        kb, [VMA5], {"f/VMA5": crash("ZeroDivisionError: division by zero")}, run_id="r", attempt=2
    )
    assert qk.error_fixes["f/VMA5"] == ()


def test_error_seen_only_in_tasks_that_never_succeeded(kb: KnowledgeBaseV2) -> None:
    rag = v2()
    rag.generate_knowledge(kb, [(STD5, code("bad"), crash("KeyError: 'close'"))], run_id="r")
    rag.generate_knowledge(kb, [(STD5, code("bad2"), crash("KeyError: 'high'"))], run_id="r")
    qk = rag.query(kb, [VMA5], {"f/VMA5": crash("KeyError: 'volume'")}, run_id="r", attempt=1)
    assert qk.error_fixes["f/VMA5"] == ()
    assert kb.graph.count(ERROR) == 1


def test_duplicate_content_is_one_node(kb: KnowledgeBaseV2) -> None:
    kb.add_seed_knowledge([seed(MA5, "same")])
    kb.add_seed_knowledge([seed(MA5, "same")])
    same_desc = MA5.__class__(**{**MA5.to_dict(), "id": "other/MA5"})
    kb.add_seed_knowledge([seed(same_desc, "same")])
    stats = kb.stats()
    assert stats["nodes.task_description"] == 1
    assert stats["nodes.task_success_implement"] == 1
    assert kb.store.count_nodes(COMPONENT) == 3
    rag = v2()
    for _ in range(2):
        rag.generate_knowledge(kb, [(MA10, code("x"), crash("KeyError: 'a'"))], run_id="r")
    assert kb.stats()["nodes.task_trace"] == 1
    assert len(kb.task_attempts("r", MA10.id)) == 2  # both attempts still count as trials


def test_queries_are_logged(kb: KnowledgeBaseV2) -> None:
    kb.add_seed_knowledge([seed(MA5, "ma5")])
    rag = make_rag_strategy("v2", seed=1)
    qk = rag.query(kb, [MA10], {}, run_id="r", attempt=4)
    rows = iter_query_log(kb.store, run_id="r")
    assert {r["query_kind"] for r in rows} == set(rag.query_kinds)
    by_kind = {r["query_kind"]: r for r in rows}
    sim = by_kind["similar"]
    assert sim["task_id"] == "f/MA10" and sim["attempt"] == 4 and sim["strategy"] == "v2"
    assert sim["ids"] == [x.knowledge.id for x in qk.similar_successful["f/MA10"]]
    assert sim["scores"] == [x.score for x in qk.similar_successful["f/MA10"]]
    quiet = make_rag_strategy("v2", log_queries=False)
    quiet.query(kb, [MA10], {}, run_id="q", attempt=1)
    assert iter_query_log(kb.store, run_id="q") == []


def test_seeded_sampler_reproduces(kb: KnowledgeBaseV2) -> None:
    tasks = [factor(f"M{i}", f"Mean($close, {i})", f"mean close {i}") for i in range(12)]
    kb.add_seed_knowledge([seed(t, f"c{i}") for i, t in enumerate(tasks)])
    target = factor("T", "Mean($close, 50)", "mean close 50")

    def run(s: int) -> list[str]:
        rag = make_rag_strategy("v2", seed=s, sampler="random", max_similar=3)
        qk = rag.query(kb, [target], {}, run_id="r", attempt=1)
        return [x.knowledge.id for x in qk.similar_successful["f/T"]]

    assert run(7) == run(7)
    assert len({tuple(run(s)) for s in range(6)}) > 1


def test_generate_knowledge_accepts_knowledge_records(kb: KnowledgeBaseV2) -> None:
    from costeer_lab.errors import InvalidInputError
    from costeer_lab.records import Knowledge

    rag = v2()
    rag.generate_knowledge(kb, [Knowledge(MA5, code("a"), crash("KeyError: 'x'"))], run_id="r")
    rag.generate_knowledge(kb, [(MA5, code("b"), ok())], run_id="r")
    assert [a.attempt for a in kb.task_attempts("r", MA5.id)] == [1, 2]
    with pytest.raises(InvalidInputError, match="item 0"):
        rag.generate_knowledge(kb, [("not", "a", "triple")], run_id="r")  # type: ignore[list-item]


def test_keep_probability_sampler_in_the_strategy(kb: KnowledgeBaseV2) -> None:
    tasks = [factor(f"M{i}", f"Mean($close, {i})", f"mean close {i}") for i in range(12)]
    kb.add_seed_knowledge([seed(t, f"c{i}") for i, t in enumerate(tasks)])
    target = factor("T", "Mean($close, 50)", "mean close 50")

    def run(s: int, p: float) -> list[str]:
        rag = make_rag_strategy(
            "v2", seed=s, sampler="keep", sampler_keep_probability=p, max_similar=3
        )
        qk = rag.query(kb, [target], {}, run_id="r", attempt=1)
        return [x.knowledge.id for x in qk.similar_successful["f/T"]]

    assert run(7, 0.5) == run(7, 0.5)
    assert run(7, 0.0) == []
    top = make_rag_strategy("v2", max_similar=3).query(kb, [target], {}, run_id="r", attempt=1)
    assert run(7, 1.0) == [x.knowledge.id for x in top.similar_successful["f/T"]]
    assert len({tuple(run(s, 0.5)) for s in range(8)}) > 1
