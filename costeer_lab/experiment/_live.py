"""Results of a run that may still be going: rebuilt from the step records of its knowledge
bases (``OUT/kb/<arm>-seed<s>.db``), which the runner commits after every evolution step.

The stores are opened with :func:`~costeer_lab.store.open_existing_store` (never created) and
only read; SQLite's WAL mode lets this run beside the writer.

Example:
    >>> import tempfile
    >>> len(live_results(tempfile.mkdtemp()))
    0
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from costeer_lab.evolve._agent import STEP_KIND
from costeer_lab.experiment._runner import OUTPUT_COLUMNS, attempt_rows

__all__ = ["live_results"]

_DB_NAME = re.compile(r"^(?P<arm>[A-Za-z0-9_.-]+)-seed(?P<seed>-?\d+)\.db$")


def live_results(out_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """Every attempt committed so far in ``out_dir``, as results rows (the columns of
    ``results.parquet``; a task's ``category`` and ``difficulty`` stay empty until the run ends).

    Rows come in (stage, arm, seed) file order and step order; once the run has finished they
    are the rows of ``results.parquet``.
    """
    from costeer_lab.errors import StoreError
    from costeer_lab.store import open_existing_store

    rows: list[dict[str, Any]] = []
    kb_dir = Path(out_dir) / "kb"
    files = sorted(kb_dir.glob("*.db")) if kb_dir.is_dir() else []
    stage_dirs = sorted(p for p in kb_dir.iterdir() if p.is_dir()) if kb_dir.is_dir() else []
    files += [f for d in stage_dirs for f in sorted(d.glob("*.db"))]
    for file in files:
        m = _DB_NAME.match(file.name)
        if m is None:
            continue
        try:
            store = open_existing_store(file)
        except StoreError:  # created this instant, schema not committed yet: next poll
            continue
        try:
            steps = sorted(store.iter_records(STEP_KIND), key=lambda kv: kv[0])
        finally:
            store.close()
        attempts = [a for _, rec in steps if isinstance(rec, dict) for a in rec["attempts"]]
        stage = "" if file.parent == kb_dir else file.parent.name
        rows += attempt_rows(attempts, m["arm"], int(m["seed"]), stage)
    return pd.DataFrame(rows, columns=OUTPUT_COLUMNS)
