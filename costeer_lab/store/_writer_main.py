"""The writer process's own side (``python -m costeer_lab.store._writer_main PATH SYNCHRONOUS
BUSY_TIMEOUT_S``): see :mod:`costeer_lab.store._writer`."""

from __future__ import annotations

import json
import sys
from typing import Any

from costeer_lab.store._batch import BatchWrite
from costeer_lab.store._sqlite import SQLiteStore
from costeer_lab.store._writer import receive, send

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """The child: write each batch read from stdin, reply on stdout, until stdin closes."""
    path, synchronous, timeout = argv[0], argv[1], float(argv[2])
    store = SQLiteStore(path, synchronous=synchronous, busy_timeout_s=timeout)  # type: ignore[arg-type]
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    reply: dict[str, Any]
    with store, store.bulk_writes():
        while (body := receive(stdin)) is not None:
            try:
                states = store.write_batch(BatchWrite.from_bytes(body))
                reply = {"states": [[list(b), list(a)] for b, a in states]}
            except Exception as exc:  # reported to the parent, which raises it
                reply = {"error": type(exc).__name__, "message": str(exc)}
            send(stdout, json.dumps(reply).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
