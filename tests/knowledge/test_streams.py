"""Random streams of the RAG strategies: draws are keyed by the stream, not by the run id, so
arms of one experiment share random numbers (common random numbers)."""

from __future__ import annotations

from typing import Any

import pytest

from costeer_lab.knowledge import make_rag_strategy, open_kb
from costeer_lab.store import BaseStore

from ._kb_helpers import factor, seed

SEEDS = [
    factor(f"MA{w}", f"Mean($close, {w})/$close", f"average close over {w} days")
    for w in (3, 5, 7, 9, 11, 13)
]
TARGETS = [
    factor(f"T{w}", f"Mean($close, {w})/$close", f"average close over {w} days")
    for w in (4, 6, 8, 10, 12, 14, 16, 18)
]
OPTS = {"sampler": "weighted", "sampler_temperature": 50.0, "max_similar": 1}


def _similar(
    kb: Any, version: str, *, run_id: str, stream: str | None = None, stream_id: str | None = None
) -> list[str]:
    """The similar pick of every target at attempt 1."""
    rag = make_rag_strategy(version, seed=0, **OPTS)
    rag.stream_id = stream_id
    qk = rag.query(kb, TARGETS, {}, run_id=run_id, attempt=1, stream=stream)
    return [x.knowledge.task.id for t in TARGETS for x in qk.similar_successful[t.id]]


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_draws_follow_the_stream_not_the_run_id(store: BaseStore, version: str) -> None:
    kb = open_kb(store=store, version=version, embedder="hashing")
    kb.add_seed_knowledge([seed(t, t.name) for t in SEEDS])
    by_a = _similar(kb, version, run_id="rag_v2-seed0", stream="seed0")
    # another arm's run id, the same stream: the same draws
    assert _similar(kb, version, run_id="rag_v2_no_error-seed0", stream="seed0") == by_a
    # the stream may come from the strategy's ``stream_id`` instead of the argument
    assert _similar(kb, version, run_id="other", stream_id="seed0") == by_a
    # with no stream, the run id is the stream (backwards compatible)
    assert _similar(kb, version, run_id="seed0") == by_a
    # another stream draws differently for some task (near-uniform weights over 6 candidates)
    assert _similar(kb, version, run_id="rag_v2-seed0", stream="seed1") != by_a
    assert len(by_a) == len(TARGETS)
