"""Small results tables for examples, demos and tests of the metrics, plots and report.

``example_results()`` is a fixed six-row table whose metrics are easy to check by hand;
``synthetic_results(...)`` draws a larger seeded table (not the output of any real experiment).

Example:
    >>> from costeer_lab.testing import synthetic_results
    >>> sorted(synthetic_results(n_seeds=2, n_tasks=3)["arm"].unique())
    ['no_knowledge', 'rag']
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment._results import RESULT_COLUMNS

__all__ = ["example_results", "make_row", "synthetic_results"]


def make_row(
    arm: str,
    seed: int,
    task_id: str,
    attempt: int,
    success: bool,
    *,
    retrieved: Mapping[str, Sequence[tuple[str, float] | tuple[str, float, bool]]] | None = None,
    used: list[str] | None = None,
    kb_nodes: int = 0,
    **overrides: Any,
) -> dict[str, Any]:
    """One results row with neutral defaults; ``retrieved`` maps kind -> [(id, score), ...] or
    [(id, score, relevant), ...] (the ground-truth relevance recorded when the query ran).

    Example:
        >>> make_row("rag", 0, "t1", 1, True, retrieved={"similar": [("k1", 0.9)]})["retrieved"]
        '{"similar": [{"id": "k1", "score": 0.9}]}'
        >>> make_row("rag", 0, "t1", 1, True, retrieved={"error": [("e", 1.0, True)]})["retrieved"]
        '{"error": [{"id": "e", "score": 1.0, "relevant": true}]}'
    """
    row: dict[str, Any] = {
        "run_id": f"run-{arm}-{seed}",
        "arm": arm,
        "seed": seed,
        "task_id": task_id,
        "attempt": attempt,
        "success": success,
        "execution": "ok" if success else "failed",
        "return_checking": "",
        "code_feedback": "",
        "error_fingerprints": "[]" if success else json.dumps(["ValueError: <msg>"]),
        "retrieved": json.dumps(
            {k: [_entry(*e) for e in v] for k, v in (retrieved or {}).items()}
        ),
        "duration_s": 1.0,
        "coder_s": 0.5,
        "evaluate_s": 0.5,
        "prompt_tokens": 100,
        "completion_tokens": 50,
        "cost_usd": 0.001,
        "kb_nodes": kb_nodes,
        "used_knowledge_ids": json.dumps(used or []),
        "isolation": "full",
        "feedback_detail": "diagnostics",
        "infra_error": "",
        "memory_queried": False,
        "memory_patterns": "[]",
        "memory_used": False,
    }
    unknown = set(overrides) - set(RESULT_COLUMNS)
    if unknown:
        raise InvalidInputError(f"unknown result column(s) {sorted(unknown)}")
    row.update(overrides)
    return row


def _entry(item: str, score: float, relevant: bool | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": item, "score": score}
    if relevant is not None:
        out["relevant"] = relevant
    return out


def example_results() -> pd.DataFrame:
    """Six rows, arms ``no_knowledge`` and ``rag``, one seed, tasks ``t1`` and ``t2``.

    ``no_knowledge`` solves t2 at attempt 1 and t1 at attempt 2; ``rag`` solves t1 at attempt 1
    (its similar query returned the relevant ``k1`` with score 0.9, a hit, and used it) and never
    solves t2 (a similar query returning the irrelevant ``k2`` scoring 0.3, then an error query
    returning nothing). ``rag``'s knowledge base holds 4 then 6 nodes.
    """
    sim = "similar"
    return pd.DataFrame(
        [
            make_row("no_knowledge", 0, "t1", 1, False),
            make_row("no_knowledge", 0, "t1", 2, True),
            make_row("no_knowledge", 0, "t2", 1, True),
            make_row(
                "rag",
                0,
                "t1",
                1,
                True,
                retrieved={sim: [("k1", 0.9, True)]},
                used=["k1"],
                kb_nodes=4,
            ),
            make_row("rag", 0, "t2", 1, False, retrieved={sim: [("k2", 0.3, False)]}, kb_nodes=4),
            make_row("rag", 0, "t2", 2, False, retrieved={"error": []}, kb_nodes=6),
        ]
    )


def synthetic_results(
    *,
    arms: Mapping[str, float] | None = None,
    n_seeds: int = 3,
    n_tasks: int = 8,
    max_attempts: int = 4,
    seed: int = 0,
) -> pd.DataFrame:
    """A seeded random results table: ``arms`` maps arm name -> per-attempt success probability.

    Arms other than ``no_knowledge`` run a ``similar`` query every attempt and, after a failure,
    an ``error`` query; their knowledge base grows by 2 nodes per attempted task. A similar item
    is marked relevant when it scores ``>= 0.5``, an error fix when its id is ``e0`` or ``e1``.
    """
    arms = dict(arms or {"no_knowledge": 0.3, "rag": 0.5})
    rng = np.random.default_rng(seed)
    rows = []
    for arm, p in arms.items():
        for s in range(n_seeds):
            kb = 0 if arm == "no_knowledge" else 5
            open_tasks = [f"task{i:02d}" for i in range(n_tasks)]
            for attempt in range(1, max_attempts + 1):
                if not open_tasks:
                    break
                kb += 0 if arm == "no_knowledge" else 2 * len(open_tasks)
                still_open = []
                for task in open_tasks:
                    ok = bool(rng.random() < p)
                    retrieved: dict[str, list[tuple[str, float, bool]]] = {}
                    used: list[str] = []
                    if arm != "no_knowledge":
                        item, score = f"k{rng.integers(0, 12)}", round(float(rng.random()), 3)
                        retrieved["similar"] = [(item, score, score >= 0.5)]
                        used = [item] if score >= 0.5 else []
                        if attempt > 1:
                            fix = f"e{rng.integers(0, 4)}"
                            retrieved["error"] = [(fix, 0.8, fix in ("e0", "e1"))]
                    rows.append(
                        make_row(
                            arm,
                            s,
                            task,
                            attempt,
                            ok,
                            retrieved=retrieved,
                            used=used,
                            kb_nodes=kb,
                            duration_s=float(rng.uniform(0.5, 2.0)),
                        )
                    )
                    if not ok:
                        still_open.append(task)
                open_tasks = still_open
    return pd.DataFrame(rows)
