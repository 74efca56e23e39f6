"""Run by ``test_kb_pipeline.py`` in its own process: wait for the go file, then record a
stream of attempts (run ``RUN``) into the store file ``PATH`` through the pipeline."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from costeer_lab.embed import HashingEmbedder
from costeer_lab.knowledge import KnowledgeBaseV2
from costeer_lab.knowledge._kb_records import AttemptInput
from costeer_lab.store import SQLiteStore
from tests.knowledge.test_kb_bulk import _attempts


def main(path: str, run: str, go: str) -> None:
    items = [
        AttemptInput(e.task, e.workspace, e.feedback, run, e.attempt, e.provenance, e.with_trace)
        for e in _attempts(60, seed=13)
    ]
    kb = KnowledgeBaseV2(SQLiteStore(path), HashingEmbedder())
    deadline = time.monotonic() + 60
    while not Path(go).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    print(kb.record_stream(iter(items), batch_size=7))


if __name__ == "__main__":
    main(*sys.argv[1:4])
