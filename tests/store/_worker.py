"""Child-process entry point for the store stress tests (run as a script, never imported).

Usage: python _worker.py MODE TARGET [ARGS...]   (TARGET: a SQLite file path or a store URL)
  records PATH WORKER N GO_FILE   wait for GO_FILE, then N put_record calls (one transaction each)
  vectors PATH WORKER N GO_FILE   wait for GO_FILE, then N put_vectors calls into one collection
  forever PATH                    put_record one by one, printing each key after the call returned
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from costeer_lab.store import get_store


def _wait_for(go_file: str) -> None:
    deadline = time.monotonic() + 60
    while not Path(go_file).exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{go_file} never appeared")
        time.sleep(0.005)


def main(argv: list[str]) -> int:
    mode, path = argv[0], argv[1]
    if mode in ("records", "vectors"):
        worker, n, go_file = int(argv[2]), int(argv[3]), argv[4]
        _wait_for(go_file)
        with get_store(path) as store:
            for i in range(n):
                if mode == "records":
                    store.put_record("stress", f"w{worker}-{i}", {"worker": worker, "i": i})
                else:
                    vec = np.full((1, 4), worker + i / n, dtype=np.float32)
                    store.put_vectors("shared", "e@1:4", [f"w{worker}-{i}"], vec)
        print(f"worker {worker} done", flush=True)
        return 0
    if mode == "forever":
        with get_store(path) as store:
            i = 0
            while True:
                key = f"k{i}"
                store.put_record("durable", key, {"i": i, "pad": "x" * 200})
                sys.stdout.write(key + "\n")
                sys.stdout.flush()
                i += 1
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
