"""Child process of the shared-store writer tests (run as a script, never imported by pytest).

Usage: python _shared_writer.py TARGET RUN_ID N GO_FILE

Waits for ``GO_FILE``, then writes N steps the way an arm's agent does: per step one store
transaction holding a V2 attempt (task ``<RUN_ID>/t<i>``; even steps succeed), a query-log row
and the step record; step N // 2 also records an attempt of the task every writer shares. Prints
``done`` when every step has returned.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from costeer_lab.knowledge import KnowledgeBaseV2, open_kb
from costeer_lab.knowledge._querylog import QueryLogger
from costeer_lab.records import SingleFeedback, Task, Workspace
from costeer_lab.store import get_store


def main(target: str, run_id: str, n: int, go_file: str) -> int:
    deadline = time.monotonic() + 120
    while not Path(go_file).exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{go_file} never appeared")
        time.sleep(0.005)
    with get_store(target) as store:
        kb = open_kb(store=store, version="v2", embedder="hashing")
        assert isinstance(kb, KnowledgeBaseV2)
        shared = Task("shared", "SHARED", "a task every writer attempts", "Mean($open, 3)")
        for i in range(n):
            t = Task(f"{run_id}/t{i}", f"T{i}", f"{run_id} factor {i} over {i + 2} days")
            fb = SingleFeedback(execution=f"step {i}", final_decision=i % 2 == 0)
            with store.transaction():
                kb.record(t, Workspace({"main.py": f"# {run_id} {i}"}), fb, run_id=run_id,
                          attempt=i + 1)  # fmt: skip
                if i == n // 2:
                    kb.record(shared, Workspace({"main.py": f"# {run_id}"}), fb, run_id=run_id,
                              attempt=i + 1)  # fmt: skip
                log = QueryLogger(store, run_id, i + 1, "v2")
                log.add(t.id, "similar", [])
                log.flush()
                store.put_record("evo_step", f"{run_id}/{i + 1:05d}", {"run_id": run_id,
                                 "step": i + 1})  # fmt: skip
        kb.close()
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]))
