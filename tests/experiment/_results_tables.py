"""A hand-made results table whose metrics are worked out by hand in test_metrics.py.

Arms (threshold 0.5 for "returned"; a hit is a relevant item, marked T/F below):

no_knowledge (no queries, kb 0)   seed 0: a@2 b@1 c never d@3      seed 1: a@1 b@3 c never d@1
kb                                seed 0: a@1 b@2 c@3 d@1          seed 1: a@1 b@1 c never d@2
solo (one seed, no successes)     seed 0: a, b failed at attempts 1 and 2

kb queries (kind: [(id, score, relevant)]; relevance depends on the target: k1 is relevant to
a and d, not to c; k3 to c, not to b):
  s0 a1 similar[k1 .9 T] used k1 | b1 similar[k2 .4 T, k3 .2 F] |
     b2 similar[k2 .6 T] error[e1 .7 T] used k2 | c1 similar[] | c2 similar[k1 .55 F] error[] |
     c3 error[e1 .8 T] used e1 | d1 similar[k4 .7 T] used k4
  s1 a1 similar[k1 .8 T] used k1 | b1 similar[k2 .5 T] used k9 | c1 similar[k3 .1 T] | c2 {} |
     c3 error[e2 .3 F] | d1 similar[k1 .6 T] used k1 | d2 similar[k1 .6 T] used k1
kb_nodes: s0 attempts 1/2/3 -> 10/14/16; s1 -> 10/12 (c2; d2 has 11)/13; solo -> 3/5.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from costeer_lab.testing import make_row

NK, KB, SOLO = "no_knowledge", "kb", "solo"


def _outcomes(
    arm: str, seed: int, plan: dict[str, int | None], last: int, kb: int = 0
) -> list[dict[str, Any]]:
    rows = []
    for task, solved_at in plan.items():
        stop = solved_at if solved_at is not None else last
        for attempt in range(1, stop + 1):
            rows.append(make_row(arm, seed, task, attempt, attempt == solved_at, kb_nodes=kb))
    return rows


def hand_table() -> pd.DataFrame:
    rows = []
    rows += _outcomes(NK, 0, {"a": 2, "b": 1, "c": None, "d": 3}, 3)
    rows += _outcomes(NK, 1, {"a": 1, "b": 3, "c": None, "d": 1}, 3)
    rows += _outcomes(SOLO, 0, {"a": None, "b": None}, 2)
    for row in rows:
        if row["arm"] == SOLO:
            row["kb_nodes"] = 3 if row["attempt"] == 1 else 5
    sim, err = "similar", "error"
    T, F = True, False
    kb = [
        # seed 0
        make_row(KB, 0, "a", 1, True, retrieved={sim: [("k1", 0.9, T)]}, used=["k1"], kb_nodes=10),
        make_row(
            KB, 0, "b", 1, False, retrieved={sim: [("k2", 0.4, T), ("k3", 0.2, F)]}, kb_nodes=10
        ),
        make_row(
            KB,
            0,
            "b",
            2,
            True,
            retrieved={sim: [("k2", 0.6, T)], err: [("e1", 0.7, T)]},
            used=["k2"],
            kb_nodes=14,
        ),
        make_row(KB, 0, "c", 1, False, retrieved={sim: []}, kb_nodes=10),
        make_row(KB, 0, "c", 2, False, retrieved={sim: [("k1", 0.55, F)], err: []}, kb_nodes=14),
        make_row(KB, 0, "c", 3, True, retrieved={err: [("e1", 0.8, T)]}, used=["e1"], kb_nodes=16),
        make_row(KB, 0, "d", 1, True, retrieved={sim: [("k4", 0.7, T)]}, used=["k4"], kb_nodes=10),
        # seed 1
        make_row(KB, 1, "a", 1, True, retrieved={sim: [("k1", 0.8, T)]}, used=["k1"], kb_nodes=10),
        make_row(KB, 1, "b", 1, True, retrieved={sim: [("k2", 0.5, T)]}, used=["k9"], kb_nodes=10),
        make_row(KB, 1, "c", 1, False, retrieved={sim: [("k3", 0.1, T)]}, kb_nodes=10),
        make_row(KB, 1, "c", 2, False, kb_nodes=12),
        make_row(KB, 1, "c", 3, False, retrieved={err: [("e2", 0.3, F)]}, kb_nodes=13),
        make_row(
            KB, 1, "d", 1, False, retrieved={sim: [("k1", 0.6, T)]}, used=["k1"], kb_nodes=10
        ),
        make_row(KB, 1, "d", 2, True, retrieved={sim: [("k1", 0.6, T)]}, used=["k1"], kb_nodes=11),
    ]
    # shuffle the row order: metrics must not depend on it
    return pd.DataFrame(rows + kb).sample(frac=1.0, random_state=7).reset_index(drop=True)
