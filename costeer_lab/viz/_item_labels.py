"""Readable labels for knowledge ids: the task a graph node belongs to instead of its hash.

The V2 knowledge graph names nodes by kind and content hash (``task_trace:9c47d1…``). The node's
attributes say which task it belongs to; :func:`knowledge_item_labels` reads them from a run's
knowledge bases (``kb/**/*.db``, opened read-only: a report never writes into a run) and
:func:`item_label` words one id, e.g. ``success of alpha158/STD10
(task_success_implement:2b2dc5…)``.
Ids that are not hashes (``seed:alpha158/MA5``, V1's ``kb1:…``) stay as they are.

Example:
    >>> item_label("task_trace:" + "ab" * 32, {"task_trace:" + "ab" * 32: "alpha158/MA5"})
    'trace of alpha158/MA5 (task_trace:ababab…)'
    >>> item_label("seed:alpha158/MA5", {})
    'seed:alpha158/MA5'
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

from costeer_lab.store import read_only_uri

__all__ = ["item_label", "knowledge_item_labels"]

_HASHED = re.compile(r"^(?P<kind>[a-z_]+):(?P<hash>[0-9a-f]{64})$")
_WORDS = {
    "task_success_implement": "success of",
    "task_trace": "trace of",
    "task_description": "task",
    "component": "component",
    "error": "error",
}
_TASK = "coalesce(json_extract(attrs, '$.task_id'), json_extract(attrs, '$.task.id'), '')"
#: Since schema 6 node ids are interned in ``ids`` (``store/_interned.py``); before, a column.
_QUERY = {
    True: f"SELECT i.id, kind, content, {_TASK} FROM ids i JOIN nodes n ON n.seq = i.seq "
    "WHERE i.id IN ({})",
    False: f"SELECT id, kind, content, {_TASK} FROM nodes WHERE id IN ({{}})",
}


def _read(db: Path, ids: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    try:
        conn = sqlite3.connect(read_only_uri(db.resolve()), uri=True, timeout=1.0)
    except sqlite3.Error:
        return found
    try:
        interned = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ids'"
        ).fetchone()
        query = _QUERY[interned is not None]
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            rows = conn.execute(query.format(",".join("?" * len(chunk))), chunk).fetchall()
            for node, kind, content, task in rows:
                if task:
                    found[str(node)] = str(task)
                elif kind in ("component", "error"):
                    found[str(node)] = str(content)[:60]
    except sqlite3.Error:
        pass  # not a knowledge base, or locked: labels are a convenience
    finally:
        conn.close()
    return found


def knowledge_item_labels(run_dir: str | Path | None, ids: Iterable[str]) -> dict[str, str]:
    """Hashed knowledge id -> the task id (or component / error text) it stands for, read
    from the run's knowledge bases; ids not found are left out."""
    wanted = sorted({i for i in ids if _HASHED.match(i)})
    if run_dir is None or not wanted:
        return {}
    labels: dict[str, str] = {}
    for db in sorted(Path(run_dir).glob("kb/**/*.db")):
        labels.update(_read(db, [i for i in wanted if i not in labels]))
        if len(labels) == len(wanted):
            break
    return labels


def item_label(item_id: str, labels: Mapping[str, str]) -> str:
    """A knowledge id for a reader: what it stands for and a short id (hash ids only)."""
    m = _HASHED.match(item_id)
    if not m:
        return item_id
    short = f"{m['kind']}:{m['hash'][:6]}…"
    what = labels.get(item_id)
    if what is None:
        return short
    return f"{_WORDS.get(m['kind'], m['kind'])} {what} ({short})"
