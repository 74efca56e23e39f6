"""Arms' ``rag_options`` are checked against what the strategy honours; stages are validated."""

from __future__ import annotations

from typing import Any

import pytest

from costeer_lab.errors import ConfigurationError
from costeer_lab.experiment import load_spec
from costeer_lab.knowledge._options import rag_option_keys


def _spec(*arms: dict[str, Any], **over: Any) -> dict[str, Any]:
    return {"name": "x", "suite": "alpha158", "arms": list(arms), **over}


def test_misspelt_option_is_refused_with_the_field_the_key_and_the_valid_keys() -> None:
    with pytest.raises(ConfigurationError) as info:
        load_spec(
            _spec({"name": "a"}, {"name": "b", "rag": "v2", "rag_options": {"eror_query": 0}})
        )
    msg = str(info.value)
    assert "arms.1" in msg and "'eror_query'" in msg and "did you mean 'error_query'" in msg
    assert all(repr(k) in msg for k in rag_option_keys("v2"))


def test_option_the_strategy_does_not_honour_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="'component_query' is not an option of the v1"):
        load_spec(_spec({"name": "a", "rag": "v1", "rag_options": {"component_query": False}}))
    with pytest.raises(ConfigurationError, match="rag: none"):
        load_spec(_spec({"name": "a", "rag_options": {"max_similar": 1}}))
    with pytest.raises(ConfigurationError, match="max_similar"):
        load_spec(_spec({"name": "a", "rag": "v2", "rag_options": {"max_similar": -1}}))


def test_ablation_arms_are_accepted_and_kept() -> None:
    arms = [
        {"name": f"no_{k}", "rag": "v2", "rag_options": {f"{k}_query": False}}
        for k in ("former_trace", "similar", "component", "error")
    ]
    arms.append({"name": "demote", "rag": "v2", "rag_options": {"demote_harmful": True}})
    spec = load_spec(_spec(*arms))
    assert spec.arms[0].rag_options == {"former_trace_query": False}
    assert spec.arms[-1].rag_options == {"demote_harmful": True}


def test_stages_are_validated() -> None:
    staged = load_spec(
        _spec(
            {"name": "a"},
            stages=[{"name": "one", "tasks": {"match": "10$"}}, {"name": "two"}],
        )
    )
    assert [s.name for s in staged.stages] == ["one", "two"]
    assert staged.stages[0].carry_knowledge and staged.stages[0].tasks.match == "10$"
    with pytest.raises(ConfigurationError, match="stage names must be unique"):
        load_spec(_spec({"name": "a"}, stages=[{"name": "s"}, {"name": "s"}]))
    with pytest.raises(ConfigurationError, match="not a regular expression"):
        load_spec(_spec({"name": "a"}, tasks={"match": "(unclosed"}))


def test_options_of_the_knowledge_base_reach_the_arms_knowledge_base(tmp_path: Any) -> None:
    """``index_kind`` / ``hnsw_above`` act on the KB an arm opens, not only on its strategy."""
    from costeer_lab.experiment._runner import _open_knowledge
    from costeer_lab.graph import TASK_DESCRIPTION
    from costeer_lab.knowledge import KnowledgeBaseV1, KnowledgeBaseV2
    from costeer_lab.store import SQLiteStore

    spec = load_spec(
        _spec(
            {"name": "plain", "rag": "v2"},
            {"name": "hnsw", "rag": "v2", "rag_options": {"index_kind": "hnsw"}},
            {"name": "v1_hnsw", "rag": "v1", "rag_options": {"index_kind": "hnsw"}},
        )
    )
    kinds = {}
    for arm in spec.arms:
        store = SQLiteStore(str(tmp_path / f"{arm.name}.db"))
        opened = _open_knowledge(spec, arm, 0, store)
        assert opened is not None
        kb = opened.kb
        if isinstance(kb, KnowledgeBaseV2):
            kinds[arm.name] = kb.graph.collections[TASK_DESCRIPTION].kind
        else:
            assert isinstance(kb, KnowledgeBaseV1)
            kinds[arm.name] = kb.collection.kind
        store.close()
    assert kinds == {"plain": "exact", "hnsw": "hnsw", "v1_hnsw": "hnsw"}
