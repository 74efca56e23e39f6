"""Harmful-memory detection: knowledge whose retrieval precedes failure more often than chance.

An *event* is one retrieval of a knowledge item for an attempt, with that attempt's outcome.
For an item retrieved ``n`` times and followed by ``k`` successes, against the base success
rate ``p`` of all attempts that retrieved anything, the one-sided binomial tail
``P(X <= k | n, p)`` is the chance of doing that badly by luck alone. Items with
``n >= min_retrievals`` and a tail below ``alpha`` are flagged harmful. Former traces are not
events (they are the task's own failures by construction).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from costeer_lab.errors import InvalidInputError
from costeer_lab.settings import RAGSettings
from costeer_lab.store import BaseStore

__all__ = ["HarmfulItem", "binomial_tail", "find_harmful", "harmful_items"]

#: Query kinds whose retrievals count as events (their ids are successful implementations).
EVENT_KINDS = ("similar", "component", "error")


@dataclass(frozen=True)
class HarmfulItem:
    """A flagged item: ``n`` retrievals, ``k`` followed by success, base rate, tail p-value."""

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


def find_harmful(
    events: Iterable[tuple[str, bool]], *, min_retrievals: int = 3, alpha: float = 0.05
) -> list[HarmfulItem]:
    """Items whose retrievals were followed by success less often than chance.

    Args:
        events: ``(item id, the attempt succeeded)`` per retrieval (one per item and attempt).
        min_retrievals: items retrieved fewer times are never flagged.
        alpha: significance level of the one-sided binomial test.

    Returns:
        Flagged items, smallest p-value first (ties by id).

    Example:
        >>> ev = [("bad", False)] * 4 + [("good", True)] * 4
        >>> [h.item_id for h in find_harmful(ev, alpha=0.1)]
        ['bad']
    """
    counts: dict[str, list[int]] = {}
    for item, ok in events:
        c = counts.setdefault(item, [0, 0])
        c[0] += 1
        c[1] += int(bool(ok))
    total = sum(c[0] for c in counts.values())
    if total == 0:
        return []
    base = sum(c[1] for c in counts.values()) / total
    out = []
    for item, (n, k) in counts.items():
        if n < min_retrievals:
            continue
        tail = binomial_tail(k, n, base)
        if tail < alpha:
            out.append(HarmfulItem(item, n, k, base, tail))
    return sorted(out, key=lambda h: (h.p_value, h.item_id))


def harmful_items(store: BaseStore, settings: RAGSettings) -> dict[str, HarmfulItem]:
    """Harmful items of a graph-KB store, from its query log and attempt records.

    Each logged retrieval (kinds :data:`EVENT_KINDS`) is joined to the attempt it served
    (same run, task and attempt number); retrievals whose attempt is not recorded are skipped.
    """
    from costeer_lab.knowledge._kb_records import ATTEMPT_KIND
    from costeer_lab.knowledge._querylog import QUERY_LOG_KIND

    outcome: dict[tuple[str, str, int], bool] = {}
    for _, d in store.iter_records(ATTEMPT_KIND):
        rec: Any = d
        if rec.get("run_id"):
            outcome[(rec["run_id"], rec["task_id"], int(rec["attempt"]))] = bool(rec["succeeded"])
    retrieved: dict[tuple[str, str, int], set[str]] = {}
    for _, d in store.iter_records(QUERY_LOG_KIND):
        row: Any = d
        key = (row["run_id"], row["task_id"], int(row["attempt"]))
        if row.get("query_kind") in EVENT_KINDS and key in outcome:
            retrieved.setdefault(key, set()).update(str(i) for i in row["ids"])
    events = [(i, outcome[key]) for key, ids in retrieved.items() for i in sorted(ids)]
    found = find_harmful(
        events, min_retrievals=settings.harmful_min_retrievals, alpha=settings.harmful_alpha
    )
    return {h.item_id: h for h in found}
