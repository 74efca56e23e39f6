"""The writer process's own side (``python -m costeer_lab.store._writer_main PATH SYNCHRONOUS
BUSY_TIMEOUT_S``): see :mod:`costeer_lab.store._writer`."""

from __future__ import annotations

import json
import queue
import sys
import threading
from typing import Any

from costeer_lab.errors import InvalidInputError
from costeer_lab.store._batch import BatchWrite
from costeer_lab.store._sqlite import SQLiteStore
from costeer_lab.store._writer import BATCH, RESUME, receive, send

__all__ = ["main"]

#: The child's page cache (KiB): it only writes, and keeps a batch's dirty pages in memory.
WRITER_CACHE_KIB = 262_144


def main(argv: list[str]) -> int:
    """The child: write each batch read from stdin, reply on stdout, until stdin closes.

    A thread reads the requests as they come (the parent hands over the next batch while
    one is written). After a failed batch every batch is skipped until an ``R`` request.
    """
    path, synchronous, timeout = argv[0], argv[1], float(argv[2])
    store = SQLiteStore(path, synchronous=synchronous, busy_timeout_s=timeout)  # type: ignore[arg-type]
    requests: queue.Queue[bytearray | None] = queue.Queue()

    def read() -> None:
        try:
            while (body := receive(sys.stdin.buffer)) is not None:
                requests.put(body)
        finally:
            requests.put(None)

    threading.Thread(target=read, name="requests", daemon=True).start()
    stdout = sys.stdout.buffer
    skipping = False
    reply: dict[str, Any]
    with store, store.bulk_writes():
        store._connection().execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")
        while (body := requests.get()) is not None:
            if body[:1] == RESUME:
                skipping = False
                continue
            if skipping:
                reply = {"skipped": True}
            else:
                try:
                    if body[:1] != BATCH:
                        raise InvalidInputError(f"unknown request {body[:1]!r}")
                    states = store.write_batch(BatchWrite.from_bytes(memoryview(body)[1:]))
                    reply = {"states": [[list(b), list(a)] for b, a in states]}
                except Exception as exc:  # reported to the parent, which raises it
                    reply = {"error": type(exc).__name__, "message": str(exc)}
                    skipping = True
            send(stdout, json.dumps(reply).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
