"""Child process of the shared-KB test (run as a script, never imported by pytest).

Usage: python _kb_worker.py URL WORKER N SYNC_DIR

Waits for ``SYNC_DIR/go``, records N attempts of its own tasks (even ones succeed, odd ones
crash) plus one attempt of a task both workers share, signals ``SYNC_DIR/done-WORKER``, waits
for the other worker's ``done`` file, reloads its KB and prints, as JSON, what it sees of both
workers' knowledge.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from costeer_lab.graph import TASK_DESCRIPTION
from costeer_lab.knowledge import KnowledgeBaseV2, error_fingerprint, open_kb
from costeer_lab.records import SingleFeedback, Task, Workspace

FORMULAS = [
    "Mean($close, {n})",
    "Std($volume, {n})",
    "Corr($close, $volume, {n})",
    "Max($high, {n})",
]


def task(worker: int, i: int) -> Task:
    formula = FORMULAS[i % len(FORMULAS)].format(n=i + 2)
    text = f"worker {worker} factor {i}: rolling statistic number {i} over {i + 2} days"
    return Task(f"w{worker}/t{i}", f"W{worker}T{i}", text, formula, category="stat")


def shared_task() -> Task:
    return Task("shared", "SHARED", "a task both workers attempt", "Mean($open, 3)")


def feedback(i: int) -> SingleFeedback:
    if i % 2 == 0:
        return SingleFeedback(execution="ok", final_decision=True)
    tb = f"Traceback (most recent call last):\n  File \"main.py\", line 2\nKeyError: 'col{i % 3}'"
    return SingleFeedback(
        execution=tb, final_decision=False, error_fingerprints=(error_fingerprint(tb),)
    )


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 240
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{path} never appeared")
        time.sleep(0.01)


def main(url: str, worker: int, n: int, sync: Path) -> int:
    _wait_for(sync / "go")
    kb = open_kb(store=url, version="v2", embedder="hashing")
    assert isinstance(kb, KnowledgeBaseV2)
    run = f"run{worker}"
    for i in range(n):
        kb.record(task(worker, i), Workspace({"main.py": f"# w{worker} t{i}"}), feedback(i),
                  run_id=run, attempt=1)  # fmt: skip
        if i == n // 2:
            kb.record(shared_task(), Workspace({"main.py": f"# shared by {worker}"}),
                      feedback(0), run_id=run, attempt=1)  # fmt: skip
    (sync / f"done-{worker}").touch()
    _wait_for(sync / f"done-{1 - worker}")
    kb.reload()
    kb.sync_indexes()
    other = 1 - worker
    index = kb.graph.collections[TASK_DESCRIPTION]
    found = [
        index.search_text(task(other, i).get_task_information(), 1).ids[0]
        == kb.td_of(task(other, i))
        for i in range(n)
    ]
    print(json.dumps({
        "attempts_of_other": sum(len(kb.task_attempts(f"run{other}", task(other, i).id))
                                 for i in range(n)),
        "other_solved": sum(kb.is_solved(task(other, i).id, run_id=f"run{other}")
                            for i in range(n)),
        "other_found_by_search": sum(found),
        "shared_runs": sorted(kb.success[kb.td_of(shared_task())].runs),
        "stats": kb.stats(),
    }))  # fmt: skip
    kb.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])))
