"""Read-only looks into a run's knowledge-base files, shared by the stage tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from costeer_lab.store import read_only_uri


def attempt_runs(db: Path) -> set[str]:
    """The run ids of the attempt records in the SQLite store ``db`` (opened read-only)."""
    con = sqlite3.connect(read_only_uri(db), uri=True)
    try:
        rows = con.execute(
            "SELECT DISTINCT json_extract(data, '$.run_id') FROM records WHERE kind='kg_attempt'"
        ).fetchall()
    finally:
        con.close()
    return {str(r[0]) for r in rows if r[0]}
