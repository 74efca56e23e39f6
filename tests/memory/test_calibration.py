"""Comparable query/stored vectors, calibrated thresholds, outcome-aware ranking, the embedding
cache and who closes the store."""

from __future__ import annotations

import pytest

from costeer_lab.embed import HashingEmbedder, get_embedder
from costeer_lab.errors import StoreError
from costeer_lab.memory import (
    CALIBRATED_THRESHOLDS,
    PatternMemory,
    calibrate,
    calibrated_threshold,
    calibration_pairs,
    make_template,
    open_memory,
    register_threshold,
)
from costeer_lab.settings import MemorySettings
from costeer_lab.store import get_store

CODE = "def factor(df):\n    return df['close'].rolling(20).mean()\n"
TASK_TEXT = "20-day moving average of the close price"


def test_an_identical_description_scores_one(store_url: str) -> None:
    with open_memory(store_url, embedder="hashing") as memory:
        pid = memory.patterns.store_pattern("rolling mean", CODE, description=TASK_TEXT)
        (hit,) = memory.patterns.search_patterns(TASK_TEXT, threshold=0.99, record=False)
        assert hit.id == pid and hit.similarity == pytest.approx(1.0, abs=1e-5)


def test_a_store_of_the_old_vector_form_is_re_embedded_on_open(sqlite_url: str) -> None:
    first = PatternMemory(sqlite_url, embedder="hashing")
    pid = first.store_pattern("rolling mean", CODE, ["assert True"], description=TASK_TEXT)
    first.close()
    store = get_store(sqlite_url)  # rewrite it as the previous version left it
    old = f"rolling mean\n{TASK_TEXT}\n{make_template(CODE)}"
    store.put_vectors("memory.patterns", "hashing@1:384", [pid], HashingEmbedder().embed([old]))
    store.delete_records("memory.meta", ["patterns.vector_form"])
    store.close()
    memory = PatternMemory(sqlite_url, embedder="hashing")
    (hit,) = memory.search_patterns(TASK_TEXT, threshold=0.99, record=False)
    assert (hit.id, hit.code, hit.tests) == (pid, CODE, ("assert True",))
    assert hit.similarity == pytest.approx(1.0, abs=1e-5) and len(memory) == 1
    memory.close()


def test_the_readme_example_finds_its_pattern_and_nothing_unrelated(store_url: str) -> None:
    with open_memory(store_url, embedder="hashing") as memory:
        pid = memory.patterns.store_pattern(
            "rolling mean", CODE, "assert True", ["pandas"], description=TASK_TEXT
        )
        found = memory.patterns.search_patterns("20-day moving average", limit=5)
        assert [m.id for m in found] == [pid]
        assert memory.patterns.search_patterns("bake a chocolate cake with cream") == []
        assert memory.patterns.search_patterns("parse an XML file and validate its schema") == []
        strict = PatternMemory(
            memory.store, embedder="hashing", settings=MemorySettings(pattern_threshold=0.99)
        )
        assert strict.search_patterns("20-day moving average") == []  # an explicit number


@pytest.mark.parametrize("name", ["hashing", "minilm"])
def test_the_stored_calibration_reaches_its_precision(name: str) -> None:
    embedder = get_embedder(name)
    cal = calibrate(embedder, precision=0.9)
    assert cal.precision >= 0.9 and cal.recall >= 0.5
    assert CALIBRATED_THRESHOLDS[embedder.id] == pytest.approx(cal.threshold, abs=1e-3)
    assert calibrated_threshold(embedder.id) == CALIBRATED_THRESHOLDS[embedder.id]
    stricter = calibrate(embedder, precision=0.97)
    assert stricter.threshold >= cal.threshold and stricter.recall <= cal.recall


def test_recalibrating_for_a_users_own_embedder(sqlite_url: str) -> None:
    mine = HashingEmbedder(dim=64)  # an embedder without a stored calibration
    assert calibrated_threshold(mine.id) == 0.7
    pairs = calibration_pairs()
    cal = calibrate(mine, pairs[:400])
    assert (cal.matches, cal.non_matches, cal.embedder_id) == (60, 340, mine.id)
    register_threshold(mine.id, cal.threshold)
    try:
        memory = PatternMemory(sqlite_url, embedder=mine)
        assert memory._pattern_threshold(None) == cal.threshold
        memory.close()
    finally:
        CALIBRATED_THRESHOLDS.pop(mine.id)


@pytest.mark.parametrize("winner", [0, 1])
def test_the_pattern_that_succeeded_ranks_above_an_equally_similar_one(
    sqlite_url: str, winner: int
) -> None:
    memory = PatternMemory(sqlite_url, embedder="hashing")
    ids = [
        memory.store_pattern(kind, CODE, description=TASK_TEXT) for kind in ("mean a", "mean b")
    ]
    memory.record_outcome(ids[winner], success=True)
    memory.record_outcome(ids[1 - winner], success=False)
    got = memory.search_patterns(TASK_TEXT, limit=1, record=False)
    assert [m.id for m in got] == [ids[winner]]
    assert got[0].score == pytest.approx(got[0].similarity + 0.05, abs=1e-6)
    flat = PatternMemory(
        memory.store, embedder="hashing", settings=MemorySettings(outcome_weight=0.0)
    )
    plain = flat.search_patterns(TASK_TEXT, limit=2, record=False)
    assert [m.score for m in plain] == [m.similarity for m in plain]
    memory.close()


def test_the_same_query_twice_is_embedded_once(sqlite_url: str) -> None:
    inner = HashingEmbedder()
    memory = PatternMemory(sqlite_url, embedder=inner)
    memory.store_pattern("rolling mean", CODE, description=TASK_TEXT)
    before = inner.texts_embedded
    memory.search_patterns("20-day moving average")
    memory.search_patterns("20-day moving average")
    memory.search_patterns(TASK_TEXT)  # embedded when the pattern was stored
    assert inner.texts_embedded - before == 1
    memory.close()


def test_close_leaves_a_callers_store_open(sqlite_url: str) -> None:
    store = get_store(sqlite_url)
    memory = PatternMemory(store, embedder="hashing")
    memory.store_pattern("rolling mean", CODE, description=TASK_TEXT)
    memory.close()
    assert store.count_records("memory.pattern") == 1  # still open
    store.close()
    owned = PatternMemory(sqlite_url, embedder="hashing")
    owned.close()
    with pytest.raises(StoreError, match="closed"):
        owned.store.count_records("memory.pattern")
