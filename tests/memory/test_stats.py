"""Learning metrics: hit rate over a window, success rates, most used, common failures."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from costeer_lab.memory import hit_rate, open_memory
from costeer_lab.memory._base import SEARCH_KIND


def test_memory_stats_and_frames(sqlite_url: str) -> None:
    with open_memory(sqlite_url, embedder="hashing") as memory:
        pm, fm = memory.patterns, memory.failures
        a = pm.store_pattern(
            "reverse", "def rev(s):\n    return s[::-1]\n", description="reverse a string"
        )
        b = pm.store_pattern(
            "sum", "def total(xs):\n    return sum(xs)\n", description="sum a list"
        )
        for _ in range(3):
            assert pm.search_patterns("reverse a string reverse", threshold=0.3)[0].id == a
        assert pm.search_patterns("matrix inverse with numpy linalg") == []  # a miss
        pm.record_outcome(a, True)
        pm.record_outcome(a, False)
        pm.record_outcome(a, True)
        f1 = fm.store_failure("KeyError", "'x'", task_id="t1")
        f2 = fm.store_failure("KeyError", "'y'", task_id="t2")
        fm.store_failure("TypeError", "unsupported operand", task_id="t3")
        assert f1 is not None and f2 is not None
        fm.update_solution(f1, "use .get")
        stats = memory.stats()
        assert stats["patterns"] == 2 and stats["failures"] == 3 and stats["solved_failures"] == 1
        assert stats["pattern_searches"] == 4 and stats["pattern_hit_rate"] == 0.75
        assert stats["failure_hit_rate"] is None
        assert stats["pattern_uses"] == 3 and stats["outcomes"] == 3
        assert stats["success_when_used"] == pytest.approx(2 / 3)
        assert stats["most_used_patterns"][0] == {
            "pattern_id": a, "problem_type": "reverse", "usage_count": 3,
            "success_rate": pytest.approx(2 / 3),
        }  # fmt: skip
        assert stats["most_used_patterns"][1]["pattern_id"] == b
        assert stats["most_common_failures"] == [
            {"fingerprint": "KeyError: <str>", "count": 2, "solved": 1},
            {"fingerprint": "TypeError: unsupported operand", "count": 1, "solved": 0},
        ]
        assert stats["failures_with_solutions"] == [
            {"fingerprint": "KeyError: <str>", "task_id": "t1", "solution": "use .get"}
        ]
        frame = memory.pattern_frame()
        assert isinstance(frame, pd.DataFrame)
        assert frame[["pattern_id", "usage_count", "successes", "failures"]].values.tolist() == [
            [a, 3, 2, 1],
            [b, 0, 0, 0],
        ]
        assert memory.failure_frame()["solved"].tolist() == [True, False, False]
        assert memory.hit_rate_frame(every=2)[
            ["searches", "hits", "hit_rate"]
        ].values.tolist() == [
            [2, 2, 1.0],
            [2, 1, 0.5],
        ]
        assert memory.hit_rate_frame(every=2)["cumulative_hit_rate"].tolist() == [1.0, 0.75]


def test_hit_rate_window(sqlite_url: str) -> None:
    with open_memory(sqlite_url, embedder="hashing") as memory:
        now = time.time()
        rows = [(now - 3600, 1), (now - 3500, 0), (now - 30, 1), (now - 20, 1), (now - 10, 0)]
        memory.store.put_records(
            SEARCH_KIND,
            [(f"s{i}", {"memory": "pattern", "t": t, "hits": h}) for i, (t, h) in enumerate(rows)],
        )
        assert hit_rate(memory.store, now=now) == pytest.approx(3 / 5)
        assert hit_rate(memory.store, window_s=60, now=now) == pytest.approx(2 / 3)
        assert hit_rate(memory.store, window_s=5, now=now) is None
        assert memory.stats(window_s=60)["pattern_hit_rate"] == pytest.approx(2 / 3)
