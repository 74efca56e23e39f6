"""Report labels for hashed knowledge ids, read from a run's knowledge-base files (both the
interned layout of schema 6 and the text-keyed one of older files a report may meet)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from costeer_lab.store import NodeRecord, SQLiteStore
from costeer_lab.store._migrations import MIGRATIONS, migrate
from costeer_lab.viz._item_labels import item_label, knowledge_item_labels

TRACE = "task_trace:" + "ab" * 32
COMPONENT = "component:" + "cd" * 32
MISSING = "error:" + "ef" * 32


def _nodes() -> list[NodeRecord]:
    return [
        NodeRecord(TRACE, "task_trace", "code", {"task_id": "alpha158/MA5"}),
        NodeRecord(COMPONENT, "component", "rolling mean over a window"),
    ]


def test_labels_come_from_a_current_knowledge_base(tmp_path: Path) -> None:
    (tmp_path / "kb" / "arm").mkdir(parents=True)
    with SQLiteStore(tmp_path / "kb" / "arm" / "kb.db") as store:
        store.put_nodes(_nodes())
    labels = knowledge_item_labels(tmp_path, [TRACE, COMPONENT, MISSING, "seed:x"])
    assert labels == {TRACE: "alpha158/MA5", COMPONENT: "rolling mean over a window"}
    assert item_label(TRACE, labels) == "trace of alpha158/MA5 (task_trace:ababab…)"


def test_labels_come_from_an_old_layout_file_without_migrating_it(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    path = tmp_path / "kb" / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, str(path), MIGRATIONS[:5])  # text node ids, no ``ids`` table
    for n in _nodes():
        conn.execute(
            "INSERT INTO nodes (id, kind, content, attrs, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, 0, 0)",
            (n.id, n.kind, n.content, json.dumps(n.attrs)),
        )
    conn.close()
    labels = knowledge_item_labels(tmp_path, [TRACE, COMPONENT])
    assert labels == {TRACE: "alpha158/MA5", COMPONENT: "rolling mean over a window"}
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("5",)
    conn.close()
