"""open_kb / make_rag_strategy / kb_stats / kb_search, settings and the knowledge sampler."""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.errors import EmbedderMismatchError, InvalidInputError, UnknownNameError
from costeer_lab.knowledge import (
    KnowledgeBaseV1,
    KnowledgeBaseV2,
    RAGSettings,
    RAGStrategyV1,
    RAGStrategyV2,
    kb_search,
    kb_stats,
    make_rag_strategy,
    open_kb,
)
from costeer_lab.knowledge._sampler import KnowledgeSampler
from costeer_lab.store import SQLiteStore

from ._kb_helpers import code, crash, factor, seed

MA5 = factor("MA5", "Mean($close, 5)/$close", "average close over 5 days")


def test_open_kb_versions_and_errors(tmp_path: Path) -> None:
    assert isinstance(open_kb(store=":memory:"), KnowledgeBaseV2)
    assert isinstance(open_kb(store=":memory:", version="v1"), KnowledgeBaseV1)
    with pytest.raises(UnknownNameError, match="v2"):
        open_kb(store=":memory:", version="v3")
    url = f"sqlite:///{tmp_path / 'kb.db'}"
    kb = open_kb(store=url, embedder="hashing")
    kb.add_seed_knowledge([seed(MA5, "x")])
    kb.store.close()
    from costeer_lab.embed import get_embedder

    with pytest.raises(EmbedderMismatchError):
        open_kb(store=url, embedder=get_embedder("hashing", dim=64))


def test_make_rag_strategy_options_override_settings() -> None:
    rag = make_rag_strategy("v2", seed=9, max_error_fixes=5)
    assert isinstance(rag, RAGStrategyV2)
    assert rag.settings.seed == 9 and rag.settings.max_error_fixes == 5
    assert rag.query_kinds == ("former_trace", "similar", "component", "error")
    v1 = make_rag_strategy("v1")
    assert isinstance(v1, RAGStrategyV1) and v1.query_kinds == ("former_trace", "similar")
    with pytest.raises(UnknownNameError):
        make_rag_strategy("v9")
    with pytest.raises(ValueError, match="trial_limit"):
        make_rag_strategy("v2", trial_limit=0)


def test_settings_defaults_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    s = RAGSettings()
    assert (s.max_former_traces, s.trial_limit, s.sampler, s.seed) == (3, 10, "top", 0)
    assert RAGSettings.model_validate({"sampler": "weighted"}).sampler == "weighted"


def test_kb_stats_and_search(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with SQLiteStore(path) as store:
        kb = open_kb(store=store)
        kb.add_seed_knowledge([seed(MA5, "x")])
        make_rag_strategy("v2").generate_knowledge(
            kb, [(factor("B", "Std($close, 3)"), code("b"), crash("KeyError: 'c'"))], run_id="r"
        )
    stats = kb_stats(path)
    assert stats["nodes.task_description"] == 2 and stats["nodes.error"] == 1
    assert stats["attempts.v2"] == 2 and stats["query_log"] == 0
    hits = kb_search(path, "average of close", k=1)
    assert hits[0]["kind"] == "task_description" and "MA5" in hits[0]["content"]
    assert kb_search(path, "KeyError", kind="error")[0]["content"] == "KeyError: <str>"
    assert kb_search(path, "x", kind="no_such_kind") == []


def test_sampler_modes() -> None:
    items = list("abcdefgh")
    assert KnowledgeSampler("top").sample(items, 3) == ["a", "b", "c"]
    r = KnowledgeSampler("random", seed=1)
    got = r.sample(items, 3, key=("k",))
    assert got == r.sample(items, 3, key=("k",)) and len(set(got)) == 3
    assert got == sorted(got, key=items.index)  # ranked order kept
    w = KnowledgeSampler("weighted", seed=0, temperature=0.01)
    assert w.sample(items, 2, scores=[10, 9, 0, 0, 0, 0, 0, 0]) == ["a", "b"]
    assert KnowledgeSampler("random").sample(items, 20) == items
    assert KnowledgeSampler("top").sample([], 2) == []
    with pytest.raises(InvalidInputError):
        KnowledgeSampler("best")
    with pytest.raises(InvalidInputError):
        w.sample(items, 2)


def test_close_closes_only_stores_opened_by_open_kb(tmp_path: Path) -> None:
    from costeer_lab.errors import StoreError

    kb = open_kb(store=f"sqlite:///{tmp_path / 'own.db'}")
    kb.close()
    kb.close()
    with pytest.raises(StoreError):
        kb.store.count_nodes()
    with SQLiteStore(tmp_path / "mine.db") as store:
        open_kb(store=store).close()
        assert store.count_nodes() == 0  # still open
