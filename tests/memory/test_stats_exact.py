"""Exact learning metrics a user reads (``memory/_stats.py``), on a real SQLite store.

Every count, rate, order and column is pinned: the defaults of older records that lack a
counter, the window edges of the hit rate, the tie orders of the "most used" / "most common"
lists, the ``top`` default, the columns of every frame and the block size of the hit-rate frame.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.memory import (
    failure_frame,
    hit_rate,
    hit_rate_frame,
    memory_stats,
    open_memory,
    pattern_frame,
    search_frame,
)
from costeer_lab.memory._base import SEARCH_KIND
from costeer_lab.memory._failure import FAILURE_KIND
from costeer_lab.memory._pattern import PATTERN_KIND
from costeer_lab.store import BaseStore, get_store

PATTERN_COLS = [
    "pattern_id", "problem_type", "description", "usage_count", "successes", "failures",
    "success_rate", "created_at",
]  # fmt: skip
FAILURE_COLS = [
    "failure_id", "error_type", "fingerprint", "task_id", "iteration", "solved", "solution",
    "t", "solved_at",
]  # fmt: skip
SEARCH_COLS = ["search_id", "memory", "t", "hits", "hit", "best", "threshold"]
BLOCK_COLS = ["block", "first_t", "searches", "hits", "hit_rate", "cumulative_hit_rate"]


@pytest.fixture
def store(sqlite_url: str) -> Iterator[BaseStore]:
    st = get_store(sqlite_url)
    yield st
    st.close()


def _search(memory: str, t: float, hits: int, **extra: Any) -> dict[str, Any]:
    return {"memory": memory, "t": t, "hits": hits, **extra}


def _failure(fp: str, task_id: str, *, solved: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "error_type": fp.split(":")[0],
        "fingerprint": fp,
        "task_id": task_id,
        "iteration": 0,
        "t": 1.0,
        "solved": solved,
        "solution": f"fix {task_id}" if solved else None,
        "solved_at": 2.0 if solved else None,
        **extra,
    }


# -- pattern rows --------------------------------------------------------------------------------
def test_an_older_pattern_record_without_counters_reads_as_never_used(store: BaseStore) -> None:
    store.put_records(PATTERN_KIND, [("p:old", {"problem_type": "sort"})])
    frame = pattern_frame(store)
    assert frame.columns.tolist() == PATTERN_COLS
    assert frame.values.tolist() == [["p:old", "sort", "", 0, 0, 0, None, 0.0]]
    stats = memory_stats(store)
    assert stats["pattern_uses"] == 0 and stats["outcomes"] == 0
    assert stats["success_when_used"] is None
    assert stats["most_used_patterns"] == [
        {"pattern_id": "p:old", "problem_type": "sort", "usage_count": 0, "success_rate": None}
    ]


def test_pattern_rows_read_every_stored_field(store: BaseStore) -> None:
    store.put_records(
        PATTERN_KIND,
        [
            ("p:a", {"problem_type": "parse", "description": "parse a date", "usage_count": 4,
                     "successes": 1, "failures": 1, "created_at": 123.5}),
            ("p:b", {"problem_type": "sum", "description": "add up", "usage_count": 2,
                     "successes": 2, "failures": 1, "created_at": 77.25}),
            ("p:c", {"problem_type": "io", "successes": 3, "created_at": 5}),
            ("p:d", {"problem_type": "io", "failures": 2}),
        ],
    )  # fmt: skip
    assert pattern_frame(store).values.tolist() == [
        ["p:a", "parse", "parse a date", 4, 1, 1, 0.5, 123.5],
        ["p:b", "sum", "add up", 2, 2, 1, pytest.approx(2 / 3), 77.25],
        ["p:c", "io", "", 0, 3, 0, 1.0, 5.0],
        ["p:d", "io", "", 0, 0, 2, 0.0, 0.0],
    ]
    stats = memory_stats(store)
    assert (stats["pattern_uses"], stats["outcomes"]) == (6, 10)
    assert stats["success_when_used"] == pytest.approx(6 / 10)
    assert [p["success_rate"] for p in stats["most_used_patterns"]] == [
        0.5, pytest.approx(2 / 3), 1.0, 0.0,
    ]  # fmt: skip


def test_pattern_frame_most_used_first_ties_by_id(store: BaseStore) -> None:
    store.put_records(
        PATTERN_KIND,
        [
            ("p:b", {"problem_type": "x", "usage_count": 1}),
            ("p:c", {"problem_type": "x", "usage_count": 3}),
            ("p:a", {"problem_type": "x", "usage_count": 1}),
            ("p:d", {"problem_type": "x", "usage_count": 3}),
        ],
    )
    frame = pattern_frame(store)
    assert frame["pattern_id"].tolist() == ["p:c", "p:d", "p:a", "p:b"]
    assert frame.index.tolist() == [0, 1, 2, 3]
    assert [p["pattern_id"] for p in memory_stats(store)["most_used_patterns"]] == [
        "p:c", "p:d", "p:a", "p:b",
    ]  # fmt: skip


def test_pattern_frame_of_an_empty_store_has_the_columns(store: BaseStore) -> None:
    frame = pattern_frame(store)
    assert frame.columns.tolist() == PATTERN_COLS and len(frame) == 0


def test_real_pattern_and_search_rows(sqlite_url: str) -> None:
    with open_memory(sqlite_url, embedder="hashing") as memory:
        before = time.time()
        pid = memory.patterns.store_pattern(
            "reverse", "def rev(s):\n    return s[::-1]\n", description="reverse a string"
        )
        after = time.time()
        found = memory.patterns.search_patterns("reverse a string reverse", threshold=0.3)
        assert [f.id for f in found] == [pid]
        assert memory.patterns.search_patterns("matrix inverse numpy", threshold=0.99) == []
        row = memory.pattern_frame().iloc[0].to_dict()
        assert row["description"] == "reverse a string" and row["problem_type"] == "reverse"
        assert before <= row["created_at"] <= after
        searches = memory.search_frame()
        assert searches.columns.tolist() == SEARCH_COLS
        assert searches["memory"].tolist() == ["pattern", "pattern"]
        assert searches["hits"].tolist() == [1, 0] and searches["hit"].tolist() == [True, False]
        assert searches["threshold"].tolist() == [0.3, 0.99]
        assert searches["best"].iloc[0] == pytest.approx(found[0].score)
        assert pd.isna(searches["best"].iloc[1])  # a miss has no best score
        keys = [k for k, _ in memory.store.iter_records(SEARCH_KIND)]
        assert searches["search_id"].tolist() == keys and len(set(keys)) == 2


# -- search rows and hit rate --------------------------------------------------------------------
def test_search_frame_rows_and_stable_time_order(store: BaseStore) -> None:
    rows = [
        (f"s{i:02d}", _search("pattern" if i % 3 else "failure", float(i % 2), i % 4, best=i / 10,
                              threshold=0.5))
        for i in range(40)
    ]  # fmt: skip
    store.put_records(SEARCH_KIND, rows)
    frame = search_frame(store)
    assert frame.columns.tolist() == SEARCH_COLS
    assert frame.index.tolist() == list(range(40))
    evens = [f"s{i:02d}" for i in range(0, 40, 2)]
    odds = [f"s{i:02d}" for i in range(1, 40, 2)]
    assert frame["search_id"].tolist() == evens + odds
    first = frame.iloc[0].to_dict()
    assert first == {
        "search_id": "s00", "memory": "failure", "t": 0.0, "hits": 0, "hit": False,
        "best": 0.0, "threshold": 0.5,
    }  # fmt: skip
    assert frame.iloc[20].to_dict() == {
        "search_id": "s01", "memory": "pattern", "t": 1.0, "hits": 1, "hit": True,
        "best": 0.1, "threshold": 0.5,
    }  # fmt: skip


def test_a_search_hits_with_one_result_or_more(store: BaseStore) -> None:
    store.put_records(
        SEARCH_KIND,
        [("a", _search("pattern", 1.0, 0)), ("b", _search("pattern", 2.0, 1)),
         ("c", _search("pattern", 3.0, 2)), ("d", _search("failure", 4.0, 1))],
    )  # fmt: skip
    assert search_frame(store)["hit"].tolist() == [False, True, True, True]
    assert search_frame(store)["best"].tolist() == [None, None, None, None]
    assert hit_rate(store, now=10.0) == pytest.approx(2 / 3)
    assert hit_rate(store, memory="failure", now=10.0) == 1.0
    assert hit_rate(store) == pytest.approx(2 / 3)


def test_hit_rate_window_edges_and_memories(store: BaseStore) -> None:
    store.put_records(
        SEARCH_KIND,
        [
            ("early", _search("pattern", 899.0, 0)),
            ("edge_lo", _search("pattern", 900.0, 1)),
            ("mid", _search("pattern", 950.0, 0)),
            ("edge_hi", _search("pattern", 1000.0, 1)),
            ("late", _search("pattern", 1001.0, 0)),
            ("f1", _search("failure", 990.0, 0)),
            ("f2", _search("failure", 500.0, 1)),
            ("f3", _search("failure", 995.0, 1)),
            ("f4", _search("failure", 996.0, 1)),
        ],
    )
    assert hit_rate(store, window_s=100.0, now=1000.0) == pytest.approx(2 / 3)
    assert hit_rate(store, now=1000.0) == pytest.approx(2 / 5)
    assert hit_rate(store, window_s=100.0, memory="failure", now=1000.0) == pytest.approx(2 / 3)
    assert hit_rate(store, memory="failure", now=1000.0) == pytest.approx(3 / 4)
    assert hit_rate(store, window_s=1.0, now=2000.0) is None
    assert hit_rate(store, window_s=100.0, memory="none", now=1000.0) is None
    # without ``now`` the window ends at the current time: these old searches lie outside it
    assert hit_rate(store, window_s=3600.0) is None
    stats = memory_stats(store, window_s=100.0, now=1000.0)
    assert stats["pattern_hit_rate"] == pytest.approx(2 / 3)
    assert stats["failure_hit_rate"] == pytest.approx(2 / 3)
    assert stats["pattern_searches"] == 5
    assert memory_stats(store, now=1000.0)["failure_hit_rate"] == pytest.approx(3 / 4)
    assert memory_stats(store, window_s=100.0)["failure_hit_rate"] is None
    assert memory_stats(store, window_s=100.0)["pattern_hit_rate"] is None


def test_hit_rate_of_recent_searches_without_now(store: BaseStore) -> None:
    t = time.time()
    store.put_records(
        SEARCH_KIND, [("a", _search("pattern", t - 5, 1)), ("b", _search("pattern", t - 4, 0))]
    )
    assert hit_rate(store, window_s=3600.0) == 0.5
    assert hit_rate(store, window_s=3600.0, now=t - 4.5) == 1.0


def test_hit_rate_without_searches_is_none(store: BaseStore) -> None:
    assert hit_rate(store) is None
    assert hit_rate(store, window_s=10.0, now=5.0) is None
    stats = memory_stats(store)
    assert stats["pattern_hit_rate"] is None and stats["failure_hit_rate"] is None
    assert stats["pattern_searches"] == 0


# -- hit rate over time --------------------------------------------------------------------------
def test_hit_rate_frame_blocks_of_ten_by_default(store: BaseStore) -> None:
    rows = [(f"p{i:02d}", _search("pattern", 100.0 + i, int(i % 2 == 0))) for i in range(12)]
    rows += [(f"f{i:02d}", _search("failure", 50.0 + i, 1)) for i in range(4)]
    store.put_records(SEARCH_KIND, rows)
    frame = hit_rate_frame(store)
    assert frame.columns.tolist() == BLOCK_COLS
    assert frame.values.tolist() == [[0, 100.0, 10, 5, 0.5, 0.5], [1, 110.0, 2, 1, 0.5, 0.5]]
    assert hit_rate_frame(store, memory="failure").values.tolist() == [[0, 50.0, 4, 4, 1.0, 1.0]]
    assert hit_rate_frame(store, every=1).values.tolist()[:3] == [
        [0, 100.0, 1, 1, 1.0, 1.0], [1, 101.0, 1, 0, 0.0, 0.5],
        [2, 102.0, 1, 1, 1.0, pytest.approx(2 / 3)],
    ]  # fmt: skip
    assert len(hit_rate_frame(store, every=1)) == 12
    assert hit_rate_frame(store, every=5).values.tolist() == [
        [0, 100.0, 5, 3, 0.6, 0.6], [1, 105.0, 5, 2, 0.4, 0.5],
        [2, 110.0, 2, 1, 0.5, 0.5],
    ]  # fmt: skip


def test_hit_rate_frame_of_no_searches_has_the_columns(store: BaseStore) -> None:
    frame = hit_rate_frame(store)
    assert frame.columns.tolist() == BLOCK_COLS and len(frame) == 0


@pytest.mark.parametrize("every", [0, -3, True, 2.0, "10"])
def test_hit_rate_frame_refuses_a_bad_block_size(store: BaseStore, every: Any) -> None:
    with pytest.raises(InvalidInputError, match=r"^every must be an int >= 1, got ") as info:
        hit_rate_frame(store, every=every)
    assert str(info.value).endswith(repr(every))


# -- failures ------------------------------------------------------------------------------------
def test_failure_frame_rows(store: BaseStore) -> None:
    store.put_records(
        FAILURE_KIND,
        [("failure:1", _failure("KeyError: <str>", "t1", solved=True)),
         ("failure:2", _failure("TypeError: bad operand", "t2", iteration=3))],
    )  # fmt: skip
    frame = failure_frame(store)
    assert frame.columns.tolist() == FAILURE_COLS
    assert frame.astype(object).where(frame.notna(), None).values.tolist() == [
        ["failure:1", "KeyError", "KeyError: <str>", "t1", 0, True, "fix t1", 1.0, 2.0],
        ["failure:2", "TypeError", "TypeError: bad operand", "t2", 3, False, None, 1.0, None],
    ]
    empty = failure_frame(get_store("sqlite:///:memory:"))
    assert empty.columns.tolist() == FAILURE_COLS and len(empty) == 0


def test_most_common_failures_ties_by_fingerprint(store: BaseStore) -> None:
    store.put_records(
        FAILURE_KIND,
        [("f1", _failure("ZeroDivisionError: x", "t1")), ("f2", _failure("TypeError: y", "t2")),
         ("f3", _failure("ValueError: z", "t3", solved=True)),
         ("f4", _failure("TypeError: y", "t4", solved=True)),
         ("f5", _failure("AttributeError: w", "t5"))],
    )  # fmt: skip
    stats = memory_stats(store)
    assert stats["failures"] == 5 and stats["solved_failures"] == 2
    assert stats["most_common_failures"] == [
        {"fingerprint": "TypeError: y", "count": 2, "solved": 1},
        {"fingerprint": "AttributeError: w", "count": 1, "solved": 0},
        {"fingerprint": "ValueError: z", "count": 1, "solved": 1},
        {"fingerprint": "ZeroDivisionError: x", "count": 1, "solved": 0},
    ]
    assert stats["failures_with_solutions"] == [
        {"fingerprint": "ValueError: z", "task_id": "t3", "solution": "fix t3"},
        {"fingerprint": "TypeError: y", "task_id": "t4", "solution": "fix t4"},
    ]
    assert memory_stats(store, top=2)["most_common_failures"] == stats["most_common_failures"][:2]


def test_lists_keep_the_top_five_by_default(store: BaseStore) -> None:
    store.put_records(
        PATTERN_KIND, [(f"p:{i}", {"problem_type": f"t{i}", "usage_count": i}) for i in range(7)]
    )
    store.put_records(
        FAILURE_KIND,
        [(f"f{i}", _failure(f"E{i}: m", f"t{i}", solved=True)) for i in range(7)],
    )
    stats = memory_stats(store)
    assert [p["pattern_id"] for p in stats["most_used_patterns"]] == [
        "p:6", "p:5", "p:4", "p:3", "p:2",
    ]  # fmt: skip
    assert [p["usage_count"] for p in stats["most_used_patterns"]] == [6, 5, 4, 3, 2]
    assert [f["fingerprint"] for f in stats["most_common_failures"]] == [
        "E0: m", "E1: m", "E2: m", "E3: m", "E4: m",
    ]  # fmt: skip
    assert [f["task_id"] for f in stats["failures_with_solutions"]] == [
        "t0", "t1", "t2", "t3", "t4",
    ]  # fmt: skip
    assert stats["solved_failures"] == 7 and stats["patterns"] == 7
    top2 = memory_stats(store, top=2)
    assert len(top2["most_used_patterns"]) == 2 and len(top2["failures_with_solutions"]) == 2


def test_stats_keys_of_an_empty_store(store: BaseStore) -> None:
    assert memory_stats(store) == {
        "patterns": 0, "failures": 0, "solved_failures": 0, "pattern_searches": 0,
        "pattern_hit_rate": None, "failure_hit_rate": None, "pattern_uses": 0, "outcomes": 0,
        "success_when_used": None, "most_used_patterns": [], "most_common_failures": [],
        "failures_with_solutions": [],
    }  # fmt: skip
