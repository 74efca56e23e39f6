"""Child-process entry point of the memory stress tests (run as a script, never imported).

Usage: python _worker.py MODE URL [ARGS...]
  patterns URL WORKER N GO_FILE   wait for GO_FILE, then N store_pattern calls (one each)
  outcomes URL PATTERN N GO_FILE  wait for GO_FILE, then N (search, record_outcome) pairs
  forever URL                     store_pattern one by one, printing each id once it returned
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from costeer_lab.memory import open_memory


def code_of(worker: int, i: int) -> str:
    """A distinct small function per (worker, i)."""
    return f"def task_{worker}_{i}(values):\n    return [v * {i + 3} for v in values]\n"


def _wait_for(go_file: str) -> None:
    deadline = time.monotonic() + 60
    while not Path(go_file).exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{go_file} never appeared")
        time.sleep(0.005)


def main(argv: list[str]) -> int:
    mode, url = argv[0], argv[1]
    if mode == "patterns":
        worker, n, go_file = int(argv[2]), int(argv[3]), argv[4]
        _wait_for(go_file)
        with open_memory(url, embedder="hashing") as memory:
            for i in range(n):
                memory.patterns.store_pattern(
                    f"worker {worker}", code_of(worker, i), description=f"scale item {i}"
                )
        print(f"worker {worker} done", flush=True)
        return 0
    if mode == "outcomes":
        pid, n, go_file = argv[2], int(argv[3]), argv[4]
        _wait_for(go_file)
        with open_memory(url, embedder="hashing") as memory:
            for i in range(n):
                hits = memory.patterns.search_patterns("shared counter pattern", threshold=0.5)
                assert [m.id for m in hits] == [pid], hits
                memory.patterns.record_outcome(pid, i % 3 != 0)
        print("done", flush=True)
        return 0
    if mode == "forever":
        with open_memory(url, embedder="hashing") as memory:
            i = 0
            while True:
                pid = memory.patterns.store_pattern("durable", code_of(0, i))
                sys.stdout.write(pid + "\n")
                sys.stdout.flush()
                i += 1
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
