"""The query log: what each query returned, keyed by run, attempt, task and query kind."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from costeer_lab.store import BaseStore

__all__ = ["QUERY_LOG_KIND", "QueryLogger", "iter_query_log"]

#: Record kind of query-log rows.
QUERY_LOG_KIND = "query_log"


class QueryLogger:
    """Collects the rows of one ``query()`` call and writes them in one transaction.

    Each row (record key ``run|attempt|task|kind``) holds ``run_id``, ``task_id``, ``attempt``,
    ``query_kind``, ``strategy``, ``ids`` and ``scores`` (same order) and ``ts``, and with
    ``index`` given, ``index``: the kind of vector index the query searched (``exact`` /
    ``hnsw``: with ``index_kind="auto"`` it changes as the knowledge base grows, and an HNSW
    answer is approximate).

    Example:
        >>> from costeer_lab.store import get_store
        >>> store = get_store(":memory:")
        >>> log = QueryLogger(store, "run", 1, "v2"); log.add("t1", "similar", [("k1", 0.9)])
        >>> log.flush(); [r["ids"] for r in iter_query_log(store, run_id="run")]
        [['k1']]
    """

    def __init__(
        self,
        store: BaseStore,
        run_id: str,
        attempt: int,
        strategy: str,
        *,
        enabled: bool = True,
        index: str | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.attempt = attempt
        self.strategy = strategy
        self.enabled = enabled
        self.index = index
        self.rows: list[tuple[str, dict[str, Any]]] = []

    def add(self, task_id: str, kind: str, hits: Sequence[tuple[str, float]]) -> None:
        """Remember what one query returned for one task."""
        if not self.enabled:
            return
        key = f"{self.run_id}|{self.attempt}|{task_id}|{kind}"
        row: dict[str, Any] = {
            "run_id": self.run_id,
            "task_id": task_id,
            "attempt": self.attempt,
            "query_kind": kind,
            "strategy": self.strategy,
            "ids": [h[0] for h in hits],
            "scores": [float(h[1]) for h in hits],
            "ts": time.time(),
        }
        if self.index is not None:
            row["index"] = self.index
        self.rows.append((key, row))

    def flush(self) -> None:
        """Write the collected rows (one transaction)."""
        if self.rows:
            self.store.put_records(QUERY_LOG_KIND, self.rows)
            self.rows = []


def iter_query_log(
    store: BaseStore, *, run_id: str | None = None, task_id: str | None = None
) -> list[dict[str, Any]]:
    """Logged query rows (filtered in the store), in insertion order."""
    where: dict[str, str] = {}
    if run_id is not None:
        where["run_id"] = run_id
    if task_id is not None:
        where["task_id"] = task_id
    return [dict(d) for _, d in store.iter_records(QUERY_LOG_KIND, where or None)]
