"""Exact behaviour of the query building blocks: the error query (same fingerprint, then the
similarity fallback and its threshold), the filtered similarity search and the sampler.

Written against surviving mutants (``make mutation``; docs/testing.md): each test pins a
boundary or a branch that the end-to-end RAG tests do not reach.
"""

from __future__ import annotations

import numpy as np
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.graph import ERROR, TASK_DESCRIPTION
from costeer_lab.index import SearchResult
from costeer_lab.knowledge import KnowledgeBaseV2, make_rag_strategy
from costeer_lab.knowledge._error_query import error_fix_candidates, similar_error_fixes
from costeer_lab.knowledge._retrieve import (
    NEAR_K,
    OVERFETCH,
    SMALL_FILTER,
    nearest,
    search_successful,
)
from costeer_lab.knowledge._sampler import KnowledgeSampler
from costeer_lab.records import Task

from ._kb_helpers import code, crash, factor, ok, seed

A = factor("A", "Mean($close, 5)", "average close")
B = factor("B", "Std($close, 5)", "deviation of close")
C = factor("C", "Max($high, 5)", "highest high")
Q = factor("Q", "Min($low, 5)", "lowest low")


def _fix(kb: KnowledgeBaseV2, task: Task, error: str, run: str = "r") -> None:
    """``task`` crashes with ``error``, then succeeds: one fix of that error."""
    rag = make_rag_strategy("v2", log_queries=False)
    rag.generate_knowledge(kb, [(task, code(f"bad {error}"), crash(error))], run_id=run)
    rag.generate_knowledge(kb, [(task, code(f"good {task.id}"), ok())], run_id=run)


# -- error query ----------------------------------------------------------------------------
def test_no_fixes_at_all_gives_nothing(kb: KnowledgeBaseV2) -> None:
    assert error_fix_candidates(kb, "td", crash("KeyError: 'close'"), 5, 0.0) == []


def test_same_fingerprint_fixes_newest_first_own_task_skipped_and_limited(
    kb: KnowledgeBaseV2,
) -> None:
    for task in (A, B, C):
        _fix(kb, task, "KeyError: 'close'")
    fb = crash("KeyError: 'open'")  # same fingerprint: KeyError: <str>
    got = error_fix_candidates(kb, kb.td_of(Q), fb, 5, 1.0)
    assert [f.td for f, _ in got] == [kb.td_of(C), kb.td_of(B), kb.td_of(A)]
    assert {s for _, s in got} == {1.0}
    assert got[0][0].fingerprint == "KeyError: <str>"
    own = error_fix_candidates(kb, kb.td_of(C), fb, 5, 1.0)
    assert [f.td for f, _ in own] == [kb.td_of(B), kb.td_of(A)]
    assert [f.td for f, _ in error_fix_candidates(kb, kb.td_of(Q), fb, 2, 1.0)] == [
        kb.td_of(C),
        kb.td_of(B),
    ]
    assert error_fix_candidates(kb, kb.td_of(Q), fb, 0, 1.0) == []


def test_one_fix_per_success_node(kb: KnowledgeBaseV2) -> None:
    """Two error lines fixed by the same success count once."""
    rag = make_rag_strategy("v2", log_queries=False)
    tb = "KeyError: 'close'\nValueError: window 5 too long"
    rag.generate_knowledge(kb, [(A, code("bad"), crash(tb))], run_id="r")
    rag.generate_knowledge(kb, [(A, code("good"), ok())], run_id="r")
    fb = crash("KeyError: 'x'\nValueError: window 9 too long")
    got = error_fix_candidates(kb, kb.td_of(Q), fb, 5, 1.0)
    assert len(got) == 1 and got[0][0].td == kb.td_of(A)


def _stored_score(kb: KnowledgeBaseV2, fp: str) -> tuple[str, float]:
    res = kb.graph.collections[ERROR].index.search(kb.query_vector(fp), 1)
    return res.ids[0], float(res.scores[0])


def test_similarity_fallback_threshold_is_inclusive(kb: KnowledgeBaseV2) -> None:
    """An unseen fingerprint uses the most similar stored error when cosine >= threshold."""
    _fix(kb, A, "FloatingPointError: float overflow in rolling window")
    fb = crash("FloatingPointError: float overflow in expanding window")
    fp = fb.error_fingerprints[0]
    assert kb.error_fixes.get(kb._error_id(fp)) is None  # a different fingerprint
    _, sc = _stored_score(kb, fp)
    assert 0.5 < sc < 1.0
    got = error_fix_candidates(kb, kb.td_of(Q), fb, 5, sc)
    assert [(f.td, s) for f, s in got] == [(kb.td_of(A), sc)]
    assert error_fix_candidates(kb, kb.td_of(Q), fb, 5, float(np.nextafter(sc, 2.0))) == []
    assert error_fix_candidates(kb, kb.td_of(Q), fb, 5, 1.0) == []  # fallback off
    fixes, score = similar_error_fixes(kb, fp, sc)
    assert [f.td for f in fixes] == [kb.td_of(A)] and score == sc


def test_similarity_fallback_skips_errors_without_fixes(kb: KnowledgeBaseV2) -> None:
    """The nearest stored error may have no fix (never solved); the next one above the
    threshold that has fixes is used, with its own score."""
    rag = make_rag_strategy("v2", log_queries=False)
    never = "FloatingPointError: float overflow in expanding window now"
    rag.generate_knowledge(kb, [(B, code("bad"), crash(never))], run_id="r")  # no success
    _fix(kb, A, "FloatingPointError: float overflow in rolling window")
    fb = crash("FloatingPointError: float overflow in expanding window")
    fp = fb.error_fingerprints[0]
    res = kb.graph.collections[ERROR].index.search(kb.query_vector(fp), 5)
    first, second = (res.ids[0], float(res.scores[0])), (res.ids[1], float(res.scores[1]))
    assert not kb.error_fixes.get(first[0]) and kb.error_fixes.get(second[0])
    fixes, score = similar_error_fixes(kb, fp, second[1])
    assert [f.td for f in fixes] == [kb.td_of(A)] and score == second[1]
    assert similar_error_fixes(kb, fp, float(np.nextafter(second[1], 2.0))) == ([], 0.0)


def test_similar_error_fixes_on_an_empty_collection(kb: KnowledgeBaseV2) -> None:
    assert similar_error_fixes(kb, "KeyError: <str>", -1.0) == ([], 0.0)


# -- filtered similarity search ----------------------------------------------------------------
WORDS = [
    "close",
    "open",
    "high",
    "low",
    "volume",
    "mean",
    "std",
    "max",
    "min",
    "rank",
    "corr",
    "slope",
    "delta",
    "sum",
    "log",
    "abs",
]


@pytest.fixture
def filled(kb: KnowledgeBaseV2) -> KnowledgeBaseV2:
    """12 successful tasks with distinct descriptions (no tied similarity scores)."""
    tasks = [
        factor(
            f"T{i}",
            f"Mean($close, {i + 2})",
            " ".join(WORDS[(i * 5 + j) % 16] for j in range(i % 4 + 2)),
        )
        for i in range(12)
    ]
    kb.add_seed_knowledge([seed(t, f"code {t.name}") for t in tasks])
    return kb


def _oracle(kb: KnowledgeBaseV2, vec: np.ndarray, allowed: set[str], k: int) -> list[str]:
    index = kb.graph.collections[TASK_DESCRIPTION].index
    res = index.search(vec, len(index))
    return [i for i in res.ids if i in allowed][:k]


def test_search_successful_matches_the_filtered_oracle(filled: KnowledgeBaseV2) -> None:
    kb = filled
    index = kb.graph.collections[TASK_DESCRIPTION].index
    ids = index.ids()
    vec = kb.query_vector("close mean volume rank")
    for allowed in (set(ids[:3]), set(ids[5:]), {ids[-1]}, set(ids)):
        for k in (1, 2, 5, 20):
            want = _oracle(kb, vec, allowed, k)
            as_set = [i for i, _ in search_successful(kb, vec, k, allowed)]
            # a predicate with its allowed ids as the pre-filter of the fallback search
            pred, pre = allowed.__contains__, sorted(allowed)
            as_pred = [i for i, _ in search_successful(kb, vec, k, pred, pre)]
            near = nearest(kb, vec)
            with_near = [i for i, _ in search_successful(kb, vec, k, pred, pre, near)]
            assert as_set == want and as_pred == want and with_near == want, (allowed, k)
    scores = [s for _, s in search_successful(kb, vec, 3, set(ids))]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1.0 + 1e-6 for s in scores)


def test_search_successful_edge_cases(filled: KnowledgeBaseV2, kb: KnowledgeBaseV2) -> None:
    vec = filled.query_vector("x")
    assert search_successful(filled, vec, 0, {"a"}) == []
    assert search_successful(filled, vec, 3, set()) == []
    assert search_successful(filled, vec, 3, lambda i: False, None) == []
    big = {f"missing{i}" for i in range(3000)}  # a large allowed set goes through the over-fetch
    assert search_successful(filled, vec, 3, big) == []


def test_search_successful_large_allowed_set_uses_overfetch_then_filter(
    filled: KnowledgeBaseV2,
) -> None:
    kb = filled
    ids = kb.graph.collections[TASK_DESCRIPTION].index.ids()
    vec = kb.query_vector("average close over 3 days")
    far = _oracle(kb, vec, set(ids), len(ids))[-2:]  # only the two least similar are allowed
    allowed = set(far) | {f"missing{i}" for i in range(3000)}
    got = [i for i, _ in search_successful(kb, vec, 2, allowed)]
    assert got == _oracle(kb, vec, set(far), 2)
    near = nearest(kb, vec)
    assert near is not None and len(near.ids) == min(NEAR_K, len(ids))
    assert [i for i, _ in search_successful(kb, vec, 2, allowed, near=near)] == got
    assert len(ids) > OVERFETCH * 2  # the first, unfiltered try cannot have found them


def test_nearest_on_an_empty_index(kb: KnowledgeBaseV2) -> None:
    assert nearest(kb, kb.query_vector("x")) is None
    assert search_successful(kb, kb.query_vector("x"), 3, {"a"}) == []


# -- sampler ----------------------------------------------------------------------------------
def test_sampler_modes_and_validation() -> None:
    items = list("abcdefgh")
    assert KnowledgeSampler("top").sample(items, 3) == ["a", "b", "c"]
    assert KnowledgeSampler("random").sample(items, 0) == []
    assert KnowledgeSampler("random").sample([], 3) == []
    assert KnowledgeSampler("random").sample(items, 20) == items
    assert KnowledgeSampler("weighted").sample(items, 8, scores=[1.0] * 8) == items
    with pytest.raises(InvalidInputError, match="mode"):
        KnowledgeSampler("best")
    with pytest.raises(InvalidInputError, match="temperature"):
        KnowledgeSampler("weighted", temperature=0.0)
    with pytest.raises(InvalidInputError, match="one score per item"):
        KnowledgeSampler("weighted").sample(items, 2)
    with pytest.raises(InvalidInputError, match="one score per item"):
        KnowledgeSampler("weighted").sample(items, 2, scores=[1.0])


def test_random_sampler_is_keyed_and_keeps_rank_order() -> None:
    s = KnowledgeSampler("random", seed=3)
    items = list(range(50))
    a = s.sample(items, 5, key=("r", "t", 1))
    assert a == sorted(a) and len(set(a)) == 5
    assert a == KnowledgeSampler("random", seed=3).sample(items, 5, key=("r", "t", 1))
    assert a != s.sample(items, 5, key=("r", "t", 2))
    assert a != KnowledgeSampler("random", seed=4).sample(items, 5, key=("r", "t", 1))
    assert s.rng(("k",)).random() == KnowledgeSampler("top", seed=3).rng(("k",)).random()


def test_weighted_sampler_follows_the_softmax() -> None:
    """With temperature 1, a candidate 5 points above the others is picked ~e^5 times as often;
    a high temperature flattens the choice; the draw is reproducible."""
    items = ["hi", "lo1", "lo2", "lo3"]
    scores = [5.0, 0.0, 0.0, 0.0]
    sharp = KnowledgeSampler("weighted", seed=0, temperature=1.0)
    flat = KnowledgeSampler("weighted", seed=0, temperature=100.0)
    n = 2000
    hi_sharp = sum(sharp.sample(items, 1, scores=scores, key=(i,)) == ["hi"] for i in range(n))
    hi_flat = sum(flat.sample(items, 1, scores=scores, key=(i,)) == ["hi"] for i in range(n))
    p = np.exp(5) / (np.exp(5) + 3)  # 0.980
    assert abs(hi_sharp / n - p) < 0.02
    assert abs(hi_flat / n - 0.25) < 0.05
    two = sharp.sample(items, 2, scores=scores, key=("x",))
    assert two[0] == "hi" and len(set(two)) == 2
    assert two == sharp.sample(items, 2, scores=scores, key=("x",))
    # without replacement: picking 3 of 4 always leaves exactly one out, in rank order
    three = sharp.sample(items, 3, scores=[0.0, 0.0, 0.0, 0.0], key=("y",))
    assert len(three) == 3 and three == [i for i in items if i in three]


# -- the search plan (how many index scans, with which filter): the performance contract ------
class _Spy:
    """Records the ``(k, filter)`` of every search of a KB's task-description index."""

    def __init__(self, kb: KnowledgeBaseV2, monkeypatch: pytest.MonkeyPatch) -> None:
        index = kb.graph.collections[TASK_DESCRIPTION].index
        self.calls: list[tuple[int, object]] = []
        real = index.search

        def search(vector: object, k: int, **kw: object) -> SearchResult:
            self.calls.append((k, kw.get("filter")))
            return real(vector, k, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(index, "search", search)


def test_search_plan(filled: KnowledgeBaseV2, monkeypatch: pytest.MonkeyPatch) -> None:
    kb = filled
    ids = kb.graph.collections[TASK_DESCRIPTION].index.ids()
    vec = kb.query_vector("close mean volume rank")
    ranked = _oracle(kb, vec, set(ids), len(ids))
    near = nearest(kb, vec)
    assert near is not None and len(near.ids) == len(ids) == 12
    spy = _Spy(kb, monkeypatch)

    # a small allowed set (up to SMALL_FILTER ids) is one pre-filtered search of k
    small = set(ranked[-2:]) | {f"missing{i}" for i in range(SMALL_FILTER - 2)}
    assert len(small) == SMALL_FILTER
    assert [i for i, _ in search_successful(kb, vec, 2, small)] == ranked[-2:]
    assert spy.calls == [(2, small)]

    # larger sets and predicates: the shared unfiltered neighbours when they cover k*OVERFETCH
    spy.calls.clear()
    big = set(ranked[:5]) | {f"missing{i}" for i in range(SMALL_FILTER)}
    assert [i for i, _ in search_successful(kb, vec, 3, big, near=near)] == ranked[:3]
    assert spy.calls == []  # 12 neighbours >= min(3 * 4, 12): no search at all
    assert [i for i, _ in search_successful(kb, vec, 3, big)] == ranked[:3]
    assert spy.calls == [(3 * OVERFETCH, None)]  # one unfiltered over-fetch, enough hits

    # exactly k hits in the over-fetch is enough (no second search)
    spy.calls.clear()
    pred = set(ranked[:2]).__contains__
    assert [i for i, _ in search_successful(kb, vec, 2, pred, list(ids))] == ranked[:2]
    assert spy.calls == [(2 * OVERFETCH, None)]

    # a too-short neighbour list is not used; too few hits -> a pre-filtered second search
    spy.calls.clear()
    short = SearchResult(ids=near.ids[:2], scores=near.scores[:2], k=2, n_candidates=2)
    far = set(ranked[-2:]) | {f"missing{i}" for i in range(SMALL_FILTER)}
    assert [i for i, _ in search_successful(kb, vec, 2, far, near=short)] == ranked[-2:]
    assert spy.calls == [(2 * OVERFETCH, None), (2, far)]  # a set: k from the filtered index

    spy.calls.clear()
    fallback = sorted(ranked[-3:])
    pred = set(ranked[-2:]).__contains__
    assert [i for i, _ in search_successful(kb, vec, 2, pred, fallback)] == ranked[-2:]
    assert spy.calls == [(2 * OVERFETCH, None), (2 * OVERFETCH, fallback)]  # predicate: over-fetch


def test_a_single_task_index_is_searched(kb: KnowledgeBaseV2) -> None:
    kb.add_seed_knowledge([seed(A, "a")])
    vec = kb.query_vector("anything")
    assert [i for i, _ in search_successful(kb, vec, 3, {kb.td_of(A)})] == [kb.td_of(A)]
    near = nearest(kb, vec)
    assert near is not None and near.ids == (kb.td_of(A),)


def test_error_similarity_search_looks_at_five_neighbours(kb: KnowledgeBaseV2) -> None:
    """Only the 5 errors most similar to the query are considered for the fallback."""
    rag = make_rag_strategy("v2", log_queries=False)
    base = "FloatingPointError: overflow in the rolling window of"
    for i, word in enumerate(["alpha", "beta", "gamma", "delta", "omega"]):
        never = factor(f"N{i}", f"Mean($close, {i + 2})")
        rag.generate_knowledge(kb, [(never, code("x"), crash(f"{base} {word}"))], run_id="r")
    _fix(kb, A, "FloatingPointError: float failure")  # the least similar, but the only fixed one
    fp = crash(f"{base} kappa").error_fingerprints[0]
    res = kb.graph.collections[ERROR].index.search(kb.query_vector(fp), 6)
    assert kb.error_fixes.get(res.ids[5]) and not any(kb.error_fixes.get(i) for i in res.ids[:5])
    assert similar_error_fixes(kb, fp, -1.0) == ([], 0.0)


def test_an_exact_fingerprint_scores_one_even_with_the_fallback_on(kb: KnowledgeBaseV2) -> None:
    _fix(kb, A, "KeyError: 'close'")
    got = error_fix_candidates(kb, kb.td_of(Q), crash("KeyError: 'open'"), 5, 0.5)
    assert [(f.td, s) for f, s in got] == [(kb.td_of(A), 1.0)]


def test_sampler_defaults_and_pinned_draws() -> None:
    """Draws are pinned: a change of the seeding (hash, byte order, key layout) changes them,
    which would silently change every recorded experiment."""
    s = KnowledgeSampler()
    assert (s.mode, s.seed, s.temperature) == ("top", 0, 1.0)
    items = list("abcdefgh")
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]
    assert KnowledgeSampler("random", seed=1).sample(items, 3, key=("run", "t1")) == [
        "d",
        "e",
        "h",
    ]
    weighted = KnowledgeSampler("weighted", seed=1)
    assert weighted.sample(items, 3, scores=scores, key=("run", "t1")) == ["b", "d", "e"]
    sharp = KnowledgeSampler("weighted", seed=1, temperature=0.05)
    assert sharp.sample(items, 3, scores=scores, key=("run", "t1")) == ["a", "b", "c"]
    assert KnowledgeSampler("random", seed=2).rng(("k",)).random() == 0.4715595045407609


def test_keep_probability_sampler_keeps_each_item_when_uniform_is_at_most_p() -> None:
    items = list(range(400))
    s = KnowledgeSampler("keep", seed=5, keep_probability=0.3)
    kept = s.sample(items, 400, key=("r", "t", 1))
    rng = s.rng(("r", "t", 1))
    assert kept == [i for i in items if rng.random() <= 0.3]  # the rule, item by item
    assert 80 <= len(kept) <= 160 and kept == sorted(kept)
    assert kept == KnowledgeSampler("keep", seed=5, keep_probability=0.3).sample(
        items, 400, key=("r", "t", 1)
    )
    assert s.sample(items, 10, key=("r", "t", 1)) == kept[:10]  # ranked order, at most n
    assert KnowledgeSampler("keep", keep_probability=1.0).sample(items, 3) == [0, 1, 2]
    assert KnowledgeSampler("keep", keep_probability=0.0).sample(items, 3) == []
    with pytest.raises(InvalidInputError, match="keep_probability"):
        KnowledgeSampler("keep", keep_probability=1.5)
