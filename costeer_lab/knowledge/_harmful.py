"""Harmful-memory detection: knowledge whose *use* turns attempts into failures.

Evidence is an *attempt*: its task, the knowledge ids the coder **used** (``used_knowledge_ids``;
an item that was retrieved but not used is never evidence about it) and whether it succeeded.
Task difficulty is controlled by comparing, task by task, the attempts that used an item with
the attempts of the same task that did not:

- per task ``t`` (a stratum): ``N`` attempts, ``K`` successes, ``n`` of them used the item and
  ``k`` of those succeeded. If the item made no difference, ``k`` is hypergeometric
  (``n`` draws from ``N`` attempts holding ``K`` successes);
- summed over the tasks the item was used for, ``k_total`` has the convolution of those
  hypergeometrics as its null distribution. The p-value is the exact one-sided tail
  ``P(X <= k_total)`` (a stratified exact test; :func:`binomial_tail` is its binomial
  special case).

So a task that fails with and without the item (intrinsically hard), or that has no attempt
without it, carries no evidence (its stratum has a single possible ``k``); an item flagged
harmful is one whose users failed on tasks that other attempts solved. Items used fewer than
``min_uses`` times, or whose tail is not below ``alpha``, are not flagged. Former traces (the
task's own failed attempts) are never candidates.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from costeer_lab.errors import InvalidInputError
from costeer_lab.records import SingleFeedback
from costeer_lab.settings import RAGSettings
from costeer_lab.store import BaseStore

__all__ = [
    "STEP_RECORD_KIND",
    "HarmfulItem",
    "binomial_tail",
    "find_harmful",
    "harmful_items",
    "stratified_tail",
]

#: Record kind of the evolution loop's step records (``costeer_lab.evolve._agent.STEP_KIND``;
#: the knowledge layer must not import evolve, a test keeps the two equal).
STEP_RECORD_KIND = "evo_step"

#: One attempt: ``(task id, ids of the knowledge its coder used, it succeeded)``.
AttemptUse = tuple[str, Collection[str], bool]


@dataclass(frozen=True)
class HarmfulItem:
    """A flagged item: used by ``n`` attempts, ``k`` of them succeeded; ``base_rate`` is the
    success rate those attempts were expected to reach from their tasks' other attempts
    (``E[k] / n`` under "no effect"); ``p_value`` the one-sided stratified exact tail."""

    item_id: str
    n: int
    k: int
    base_rate: float
    p_value: float


def binomial_tail(k: int, n: int, p: float) -> float:
    """``P(X <= k)`` for ``X ~ Binomial(n, p)``.

    Example:
        >>> round(binomial_tail(0, 3, 0.5), 3)
        0.125
    """
    if not 0 <= k <= n or not 0.0 <= p <= 1.0:
        raise InvalidInputError(f"need 0 <= k <= n and 0 <= p <= 1, got k={k}, n={n}, p={p}")
    return min(1.0, sum(math.comb(n, i) * p**i * (1.0 - p) ** (n - i) for i in range(k + 1)))


def _hypergeometric(total: int, successes: int, draws: int) -> dict[int, float]:
    """pmf of the successes among ``draws`` of ``total`` attempts holding ``successes``."""
    lo, hi = max(0, draws - (total - successes)), min(draws, successes)
    denom = math.comb(total, draws)
    return {
        i: math.comb(successes, i) * math.comb(total - successes, draws - i) / denom
        for i in range(lo, hi + 1)
    }


def stratified_tail(strata: Iterable[tuple[int, int, int, int]]) -> tuple[float, float]:
    """``(P(X <= k_total), E[X])`` where ``X`` sums independent hypergeometrics.

    Args:
        strata: per task ``(N attempts, K successes, n used the item, k of those succeeded)``.

    Example:
        >>> # three tasks, each: 1 attempt with the item failed, 2 without it succeeded
        >>> p, expected = stratified_tail([(3, 2, 1, 0)] * 3)
        >>> round(p, 4), round(expected, 2)
        (0.037, 2.0)
    """
    dist = {0: 1.0}
    observed, expected = 0, 0.0
    for total, successes, draws, k in strata:
        if not 0 <= k <= draws <= total or not 0 <= successes <= total or k > successes:
            raise InvalidInputError(
                f"bad stratum (N={total}, K={successes}, n={draws}, k={k}): need "
                "0 <= k <= n <= N, 0 <= K <= N and k <= K"
            )
        pmf = _hypergeometric(total, successes, draws)
        nxt: dict[int, float] = {}
        for a, pa in dist.items():
            for b, pb in pmf.items():
                nxt[a + b] = nxt.get(a + b, 0.0) + pa * pb
        dist, observed = nxt, observed + k
        expected += draws * successes / total
    tail = sum(p for x, p in dist.items() if x <= observed)
    return min(1.0, tail), expected


def find_harmful(
    attempts: Iterable[AttemptUse], *, min_uses: int = 3, alpha: float = 0.05
) -> list[HarmfulItem]:
    """Items whose use was followed by success less often than their tasks' other attempts.

    Args:
        attempts: ``(task id, used knowledge ids, succeeded)`` per attempt.
        min_uses: items used by fewer attempts are never flagged.
        alpha: significance level of the one-sided stratified exact test (module docstring).

    Returns:
        Flagged items, smallest p-value first (ties by id).

    Example:
        >>> easy = [(f"t{i}", ["bad"], False) for i in range(4)]
        >>> easy += [(f"t{i}", [], True) for i in range(4)]
        >>> hard = [(f"h{i}", ["meh"], False) for i in range(4)]
        >>> hard += [(f"h{i}", [], False) for i in range(4)]
        >>> [h.item_id for h in find_harmful(easy + hard, alpha=0.1)]
        ['bad']
    """
    per_task: dict[str, list[tuple[frozenset[str], bool]]] = {}
    for task, used, ok in attempts:
        per_task.setdefault(str(task), []).append((frozenset(map(str, used)), bool(ok)))
    users: dict[str, set[str]] = {}
    for task, rows in per_task.items():
        for used, _ in rows:
            for item in used:
                users.setdefault(item, set()).add(task)
    out = []
    for item, tasks in users.items():
        strata = []
        for task in sorted(tasks):
            rows = per_task[task]
            with_item = [ok for used, ok in rows if item in used]
            strata.append((len(rows), sum(ok for _, ok in rows), len(with_item), sum(with_item)))
        n = sum(s[2] for s in strata)
        if n < min_uses:
            continue
        tail, expected = stratified_tail(strata)
        if tail < alpha:
            out.append(HarmfulItem(item, n, sum(s[3] for s in strata), expected / n, tail))
    return sorted(out, key=lambda h: (h.p_value, h.item_id))


def step_attempts(records: Iterable[Mapping[str, Any]]) -> list[AttemptUse]:
    """Attempts of evolution step records: task, used ids (former traces left out), success.

    An attempt recorded with an ``infra_error`` says nothing about the code and is skipped.
    """
    out: list[AttemptUse] = []
    for rec in records:
        for a in rec.get("attempts", ()):
            if a.get("infra_error"):
                continue
            own = {str(x["id"]) for x in a.get("retrieved", {}).get("former_trace", ())}
            used = [str(i) for i in a["outcome"].get("used_knowledge_ids", ()) if i not in own]
            ok = SingleFeedback.from_dict(a["feedback"]).succeeded
            out.append((str(a["task_id"]), used, ok))
    return out


def harmful_items(store: BaseStore, settings: RAGSettings) -> dict[str, HarmfulItem]:
    """Harmful items of a store, from the step records the evolution loop wrote into it.

    Every run in the store counts (a later stage's store carries the earlier stages' steps).
    A store without step records (a RAG strategy used outside :class:`EvoAgent`) flags nothing.
    """
    attempts = step_attempts(d for _, d in store.iter_records(STEP_RECORD_KIND))
    found = find_harmful(
        attempts, min_uses=settings.harmful_min_retrievals, alpha=settings.harmful_alpha
    )
    return {h.item_id: h for h in found}
