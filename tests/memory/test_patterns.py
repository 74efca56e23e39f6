"""PatternMemory: templates, thresholds, limits, usage and success accounting, refusals."""

from __future__ import annotations

import numpy as np
import pytest

from costeer_lab.embed import get_embedder
from costeer_lab.errors import InvalidInputError, MemoryRefusedError, NotFoundError
from costeer_lab.memory import (
    PatternMemory,
    calibrated_threshold,
    make_template,
    open_memory,
    pattern_text,
)

MEAN = (
    "rolling mean factor",
    "def factor(df):\n    # 20 days\n    return df['close'].rolling(20).mean()\n",
    "20-day moving average of the close price",
)
MOM = (
    "momentum factor",
    "def factor(df):\n    return df['close'] / df['close'].shift(10) - 1\n",
    "10-day price momentum: return over ten days",
)
REV = ("string reversal", "def rev(s):\n    return s[::-1]\n", "reverse a string")


def _fill(mem: PatternMemory) -> dict[str, str]:
    return {
        ptype: mem.store_pattern(ptype, code, description=desc)
        for ptype, code, desc in (MEAN, MOM, REV)
    }


def _exact_scores(query: str) -> dict[str, float]:
    """Cosine of ``query`` with each stored text, computed here from the embedder directly."""
    emb = get_embedder("hashing")
    texts = {p: pattern_text(p, d) for p, _, d in (MEAN, MOM, REV)}
    vecs = emb.embed([query, *texts.values()])
    return {p: float(vecs[0] @ v) for p, v in zip(texts, vecs[1:], strict=True)}


def test_template_strips_comments_docstrings_and_task_literals() -> None:
    a = 'def f(df):\n    """Doc."""\n    x = df["close"]  # p\n    return x.rolling(20).mean()\n'
    b = "def f(df):\n\n    x = df['volume']\n    return x.rolling( 5 ).mean()"
    assert make_template(a) == make_template(b)
    assert (
        make_template(a) == "def f(df):\n    x = df['<str>']\n    return x.rolling(<num>).mean()"
    )
    assert make_template("y = x[0] + 1 - 2.5 * True") == "y = x[0] + 1 - <num> * True"


def test_threshold_is_a_cosine_floor(store_url: str) -> None:
    with open_memory(store_url, embedder="hashing") as memory:
        ids = _fill(memory.patterns)
        query = "rolling mean of the close price over 20 days"
        exact = _exact_scores(query)
        ranked = sorted(exact, key=lambda p: -exact[p])
        for cut in (exact[ranked[0]], exact[ranked[1]], (exact[ranked[1]] + exact[ranked[2]]) / 2):
            got = memory.patterns.search_patterns(
                query, threshold=cut - 1e-5, limit=5, record=False
            )
            want = [ids[p] for p in ranked if exact[p] >= cut - 1e-5]
            assert [m.id for m in got] == want
            for m in got:
                assert m.similarity == pytest.approx(exact[m.problem_type], abs=1e-4)
        above = memory.patterns.search_patterns(query, threshold=exact[ranked[0]] + 1e-3)
        assert above == []


def test_default_threshold_drops_unrelated_tasks(store_url: str) -> None:
    with open_memory(store_url, embedder="hashing") as memory:
        ids = _fill(memory.patterns)
        cut = calibrated_threshold(memory.patterns.embedder.id)
        unrelated = "parse an XML configuration file and validate its schema"
        assert max(_exact_scores(unrelated).values()) < cut
        assert memory.patterns.search_patterns(unrelated) == []
        close = "moving average of the close price rolling mean factor"
        assert _exact_scores(close)["rolling mean factor"] >= cut
        assert [m.id for m in memory.patterns.search_patterns(close)] == [
            ids["rolling mean factor"]
        ]


def test_limit_and_problem_type_filter(sqlite_url: str) -> None:
    with open_memory(sqlite_url, embedder="hashing") as memory:
        ids = _fill(memory.patterns)
        got = memory.patterns.search_patterns("factor of the close price", threshold=-1, limit=2)
        assert len(got) == 2
        only = memory.patterns.search_patterns(
            "factor of the close price", threshold=-1, limit=5, problem_type="string reversal"
        )
        assert [m.id for m in only] == [ids["string reversal"]]


def test_usage_counted_on_retrieval_and_success_rate_from_outcomes(store_url: str) -> None:
    with open_memory(store_url, embedder="hashing") as memory:
        pm = memory.patterns
        pid = _fill(pm)["rolling mean factor"]
        query = "moving average of the close price rolling mean factor"
        assert pm.search_patterns(query, record=False)[0].usage_count == 0  # looking is free
        first = pm.search_patterns(query)[0]
        assert (first.id, first.usage_count, first.success_rate) == (pid, 1, None)
        assert pm.search_patterns(query)[0].usage_count == 2
        assert pm.record_outcome(pid, True).success_rate == 1.0
        assert pm.record_outcome(pid, False).success_rate == 0.5
        st = pm.record_outcome(pid, True)
        assert (st.usage_count, st.successes, st.failures) == (2, 2, 1)
        assert st.success_rate == pytest.approx(2 / 3)
        again = pm.search_patterns(query)[0]
        assert (again.usage_count, again.successes, again.failures) == (3, 2, 1)
        other = pm.stats(_fill(pm)["momentum factor"])  # storing again keeps the same ids
        assert (other.usage_count, other.successes, other.failures) == (0, 0, 0)
        assert len(pm) == 3


def test_same_template_is_one_pattern(sqlite_url: str) -> None:
    pm = PatternMemory(sqlite_url, embedder="hashing")
    a = pm.store_pattern("mean", "def f(df):\n    return df['a'].mean()  # a\n")
    b = pm.store_pattern("mean", 'def f(df):\n    return df["b"].mean()\n')
    c = pm.store_pattern("median", "def f(df):\n    return df['a'].median()\n")
    assert a == b != c and len(pm) == 2
    pm.close()


def test_refuses_failed_and_unparsable_code_storing_nothing(sqlite_url: str) -> None:
    pm = PatternMemory(sqlite_url, embedder="hashing")
    with pytest.raises(MemoryRefusedError, match="did not pass") as failed:
        pm.store_pattern("mean", "def f(x):\n    return x\n", passed=False)
    assert failed.value.kind == "failed"
    with pytest.raises(MemoryRefusedError, match="does not parse") as syntax:
        pm.store_pattern("mean", "def f(x) return x")
    assert syntax.value.kind == "syntax"
    with pytest.raises(MemoryRefusedError):  # one bad item in a batch stores none
        pm.store_patterns(
            [
                {"problem_type": "ok", "code": "x = 1"},
                {"problem_type": "bad", "code": "x = 'ghp_" + "a" * 36 + "'"},
            ]
        )
    assert len(pm) == 0 and pm.store.collection_info("memory.patterns") is None
    pm.close()


def test_bad_arguments_name_the_value(sqlite_url: str) -> None:
    pm = PatternMemory(sqlite_url, embedder="hashing")
    with pytest.raises(InvalidInputError, match=r"threshold must be in \[-1, 1\].*1.5"):
        pm.search_patterns("x", threshold=1.5)
    with pytest.raises(InvalidInputError, match="limit must be an int >= 1, got 0"):
        pm.search_patterns("x", limit=0)
    with pytest.raises(InvalidInputError, match="problem_type must be a non-empty str"):
        pm.store_pattern(" ", "x = 1")
    with pytest.raises(InvalidInputError, match="dependencies must be a str or a sequence"):
        pm.store_pattern("t", "x = 1", dependencies=[1])  # type: ignore[list-item]
    with pytest.raises(NotFoundError, match="no pattern 'pattern:nope'"):
        pm.record_outcome("pattern:nope", True)
    with pytest.raises(InvalidInputError, match="success must be a bool, got 1"):
        pm.record_outcome(pm.store_pattern("t", "x = 1"), 1)  # type: ignore[arg-type]
    pm.close()


def test_fields_round_trip(sqlite_url: str) -> None:
    pm = PatternMemory(sqlite_url, embedder="hashing")
    pid = pm.store_pattern(
        "sum", "def f(xs):\n    return sum(xs)\n", "assert f([1]) == 1", ["numpy"], description="d"
    )
    (m,) = pm.search_patterns("sum d", threshold=-1)
    assert (m.id, m.code, m.tests, m.dependencies, m.description) == (
        pid, "def f(xs):\n    return sum(xs)\n", ("assert f([1]) == 1",), ("numpy",), "d"
    )  # fmt: skip
    assert m.template == "def f(xs):\n    return sum(xs)"
    assert np.isfinite(m.similarity)
    pm.close()
