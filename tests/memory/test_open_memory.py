"""``open_memory``: which store, embedder and settings the two memories get (explicit argument,
then the memory settings, then the top-level settings), and the metrics as ``Memory`` methods
with their defaults."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.embed import _registry, get_embedder, register_embedder
from costeer_lab.memory import Memory, open_memory
from costeer_lab.settings import MemorySettings
from costeer_lab.store import get_store

FAILURE_KIND = "memory.failure"
ERROR_TYPES = ("KeyError", "ValueError", "TypeError", "OSError", "NameError", "IndexError")


@pytest.fixture
def hashing_64() -> Iterator[str]:
    """A registered embedder id whose vectors (64 dims) differ from the default hashing (384)."""
    register_embedder("hashing-64", lambda **kw: get_embedder("hashing", dim=64))
    yield "hashing-64"
    del _registry._factories["hashing-64"]


def _failure_keys(url: str) -> list[str]:
    store = get_store(url)
    try:
        return [key for key, _ in store.iter_records(FAILURE_KIND)]
    finally:
        store.close()


def _write_a_failure(memory: Memory) -> str:
    with memory:
        fid = memory.failures.store_failure("KeyError", "'close'")
    assert fid is not None
    return fid


def test_given_settings_rule_both_memories() -> None:
    settings = MemorySettings(pattern_threshold=-1.0, failure_threshold=-1.0, limit=1)
    with open_memory(":memory:", embedder="hashing", settings=settings) as memory:
        assert memory.patterns.settings is settings and memory.failures.settings is settings
        for code, what in (("x = 1\n", "add one"), ("y = 2\n", "bake a cake")):
            memory.patterns.store_pattern("misc", code, description=what)
        for err in ERROR_TYPES[:2]:
            fid = memory.failures.store_failure(err, "bad")
            assert fid is not None
            memory.failures.update_solution(fid, "fixed")
        # threshold -1 lets everything through; limit 1 keeps one of the two
        assert len(memory.patterns.search_patterns("zzz qqq")) == 1
        assert len(memory.failures.search_similar_failures("zzz qqq")) == 1


def test_without_arguments_the_settings_pick_the_store_and_the_embedder(
    tmp_path: Path, settings_env: Callable[..., Any], hashing_64: str
) -> None:
    top_url = f"sqlite:///{tmp_path / 'top.db'}"
    settings_env(STORE_URL=top_url, EMBEDDER=hashing_64)
    memory = open_memory()
    assert memory.patterns.embedder.id == "hashing@1:64"
    fid = _write_a_failure(memory)
    assert _failure_keys(top_url) == [fid]


def test_the_memory_settings_come_before_the_top_level_ones(
    tmp_path: Path, settings_env: Callable[..., Any], hashing_64: str
) -> None:
    top_url, mem_url = (f"sqlite:///{tmp_path / name}" for name in ("top.db", "memory.db"))
    settings_env(STORE_URL=top_url, EMBEDDER=hashing_64)
    own = MemorySettings(store_url=mem_url, embedder="hashing")
    memory = open_memory(settings=own)
    assert memory.patterns.embedder.id == memory.failures.embedder.id == "hashing@1:384"
    fid = _write_a_failure(memory)
    assert _failure_keys(mem_url) == [fid] and _failure_keys(top_url) == []
    # the same through the environment (COSTEER_LAB_MEMORY__*) instead of an object
    settings_env(MEMORY__STORE_URL=mem_url, MEMORY__EMBEDDER="hashing")
    memory = open_memory()
    assert memory.patterns.embedder.id == "hashing@1:384"
    second = _write_a_failure(memory)
    assert sorted(_failure_keys(mem_url)) == sorted([fid, second]) and _failure_keys(top_url) == []


def test_explicit_arguments_come_before_every_setting(
    tmp_path: Path, settings_env: Callable[..., Any], hashing_64: str
) -> None:
    top_url, mem_url, arg_url = (
        f"sqlite:///{tmp_path / name}" for name in ("top.db", "memory.db", "arg.db")
    )
    settings_env(STORE_URL=top_url, EMBEDDER=hashing_64)
    own = MemorySettings(store_url=mem_url, embedder=hashing_64)
    memory = open_memory(arg_url, embedder="hashing", settings=own)
    assert memory.patterns.embedder.id == "hashing@1:384"
    fid = _write_a_failure(memory)
    assert (_failure_keys(arg_url), _failure_keys(mem_url), _failure_keys(top_url)) == (
        [fid], [], []
    )  # fmt: skip


def test_both_memories_share_one_store_and_one_embedder_object() -> None:
    own = MemorySettings(embedder="hashing")
    for embedder in ("hashing", get_embedder("hashing", dim=32), None):
        with open_memory(":memory:", embedder=embedder, settings=own) as memory:
            assert memory.patterns.embedder is memory.failures.embedder
            assert memory.patterns.store is memory.failures.store is memory.store
            if embedder is not None and not isinstance(embedder, str):
                assert memory.patterns.embedder is embedder


def test_stats_lists_the_top_five_by_default_and_top_on_request() -> None:
    with open_memory(":memory:", embedder="hashing") as memory:
        for i, err in enumerate(ERROR_TYPES):
            for _ in range(len(ERROR_TYPES) - i):  # KeyError 6 times, ..., IndexError once
                memory.failures.store_failure(err, "bad")
        common = [f["fingerprint"] for f in memory.stats()["most_common_failures"]]
        assert common == [f"{err}: bad" for err in ERROR_TYPES[:5]]
        assert [f["count"] for f in memory.stats(top=2)["most_common_failures"]] == [6, 5]
        assert memory.stats()["failures"] == 21


def test_the_search_frame_lists_the_searches_of_both_memories_in_order() -> None:
    with open_memory(":memory:", embedder="hashing") as memory:
        assert memory.search_frame().empty
        memory.patterns.search_patterns("reverse a string", threshold=0.5)
        memory.failures.search_similar_failures("KeyError: 'a'", threshold=0.5)
        frame = memory.search_frame()
        assert frame["memory"].tolist() == ["pattern", "failure"]
        assert frame["hits"].tolist() == [0, 0] and frame["threshold"].tolist() == [0.5, 0.5]


def test_the_hit_rate_frame_has_blocks_of_ten_searches_by_default() -> None:
    with open_memory(":memory:", embedder="hashing") as memory:
        memory.patterns.store_pattern("strings", "def rev(s):\n    return s[::-1]\n",
                                      description="reverse a string")  # fmt: skip
        for i in range(11):
            memory.patterns.search_patterns("reverse a string" if i < 4 else "zz", threshold=0.9)
        frame = memory.hit_rate_frame()
        assert frame["searches"].tolist() == [10, 1] and frame["hits"].tolist() == [4, 0]
        assert frame["cumulative_hit_rate"].tolist() == pytest.approx([0.4, 4 / 11])
        assert memory.hit_rate_frame(every=4)["searches"].tolist() == [4, 4, 3]
