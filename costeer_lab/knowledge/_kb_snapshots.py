"""Snapshots of a knowledge base: the store's snapshots, plus keeping the KB's views in step.

A KB's state is its store's (attempt records, graph nodes and edges, vectors), so a snapshot of
the KB is a snapshot of its store (:mod:`costeer_lab.store._snapshots`: O(1) to take). What this
adds: a rollback also rebuilds the in-memory graph, lookups and vector indexes, and
``open_kb(..., snapshot=name)`` (see ``_factory``) opens a read-only KB as of a snapshot.

Example:
    >>> from costeer_lab.knowledge import open_kb
    >>> from costeer_lab.records import Knowledge, SingleFeedback, Task, Workspace
    >>> kb = open_kb(":memory:", embedder="hashing")
    >>> _ = kb.snapshot("empty")
    >>> t = Task("t1", "MA5", "mean close", formulation="Mean($close, 5)")
    >>> kb.add_seed_knowledge([Knowledge(t, Workspace({"main.py": "x"}), SingleFeedback())])
    >>> kb.diff("empty").records("kg_attempt").added
    (('\\x1ft1\\x1f0',),)
    >>> kb.rollback("empty"), kb.stats()["attempts"], kb.stats()["solved_task_descriptions"]
    ([], 0, 0)
"""

from __future__ import annotations

from pathlib import Path

from costeer_lab.store import BaseStore, Snapshot, StoreDiff

__all__ = ["KBSnapshotsMixin"]


class KBSnapshotsMixin:
    """Snapshot methods of a knowledge base holding ``store`` (mixed into the KB classes)."""

    store: BaseStore

    def reload(self) -> None:  # pragma: no cover - provided by the KB class
        raise NotImplementedError

    def sync_indexes(self) -> None:  # pragma: no cover - provided by the KB class
        raise NotImplementedError

    def snapshot(self, name: str) -> Snapshot:
        """Mark the KB's current state under ``name`` (O(1) in the KB's size).

        Raises:
            InvalidInputError: a snapshot of that name exists.
            StoreError: the KB is a read-only view of a snapshot.
        """
        return self.store.snapshot(name)

    def snapshots(self) -> list[Snapshot]:
        """The KB's snapshots, oldest first."""
        return self.store.snapshots()

    def diff(self, a: str, b: str | None = None) -> StoreDiff:
        """What was added, changed or removed from snapshot ``a`` to ``b`` (``None``: now).

        ``diff.records("kg_attempt")`` lists the attempts; ``diff.tables["nodes"]`` the graph
        nodes, ``diff.tables["vectors"]`` the embedded items.
        """
        return self.store.diff(a, b)

    def rollback(self, name: str) -> list[str]:
        """Return the KB to snapshot ``name`` (one transaction) and rebuild its graph, lookups
        and indexes; returns the names of the later snapshots it dropped."""
        dropped = self.store.rollback(name)
        self.reload()
        self.sync_indexes()
        return dropped

    def branch(self, snapshot: str, target: str | Path | BaseStore) -> BaseStore:
        """A new store at ``target`` (a URL, path or empty store) seeded with the KB as of
        ``snapshot``; open a KB on it with ``open_kb(store)``. The caller closes the returned
        store. Cost: O(rows at the snapshot) (``costeer_lab.store._snapshots``)."""
        from costeer_lab.store import get_store

        dest = get_store(target)
        try:
            return self.store.branch(snapshot, dest)
        except BaseException:
            if dest is not target:
                dest.close()
            raise
