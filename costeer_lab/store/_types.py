"""Plain records the store reads and writes (layer 1; no I/O here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["EdgeRecord", "JSONValue", "NodeRecord", "Snapshot", "StoreDiff", "TableDiff"]

JSONValue = Any  # a value json.dumps accepts: dict/list/str/int/float/bool/None


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """A knowledge-graph node as stored.

    Attributes:
        id: stable string id (for example ``"task_description:3f2a…"``).
        kind: node kind (``component``, ``task_description``, ``task_trace``,
            ``task_success_implement``, ``error``, or a subsystem's own kind).
        content: the node's text; what embedders see.
        attrs: JSON-serializable attributes.
        created_at / updated_at: UNIX seconds, filled in by the store (0.0 on input means "now").
    """

    id: str
    kind: str
    content: str
    attrs: dict[str, JSONValue] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass(frozen=True, slots=True)
class EdgeRecord:
    """A directed, typed edge ``src -> dst``. ``(src, dst, kind)`` is unique."""

    src: str
    dst: str
    kind: str
    attrs: dict[str, JSONValue] = field(default_factory=dict)
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A named mark of a store's state (see :meth:`BaseStore.snapshot`).

    Attributes:
        name: the snapshot's name (unique in its store).
        epoch: its position on the store's line (larger is newer; never reused).
        parent: the newest snapshot that existed when this one was taken, or ``None``.
        created_at: UNIX seconds.
    """

    name: str
    epoch: int
    parent: str | None
    created_at: float


@dataclass(frozen=True, slots=True)
class TableDiff:
    """Keys of one table added, changed or removed between two states (sorted)."""

    added: tuple[tuple[str, ...], ...] = ()
    changed: tuple[tuple[str, ...], ...] = ()
    removed: tuple[tuple[str, ...], ...] = ()

    def __len__(self) -> int:
        return len(self.added) + len(self.changed) + len(self.removed)


@dataclass(frozen=True, slots=True)
class StoreDiff:
    """What changed from snapshot ``a`` to snapshot ``b`` (``None``: the store now).

    ``tables`` maps ``nodes``, ``edges``, ``vectors`` and ``records`` to a :class:`TableDiff`
    whose keys are tuples: ``(id,)``, ``(src, dst, kind)``, ``(collection, item_id)`` and
    ``(kind, key)``. A row rewritten with the same content is not a change (timestamps and
    insertion order are not compared).

    Example:
        >>> d = StoreDiff("a", None, {"records": TableDiff(added=(("note", "k"),))})
        >>> d.records("note").added, d.summary()["records"]
        ((('k',),), {'added': 1, 'changed': 0, 'removed': 0})
    """

    a: str
    b: str | None
    tables: dict[str, TableDiff]

    def records(self, kind: str) -> TableDiff:
        """The diff of the records of one kind, keyed by ``(key,)``."""
        got = self.tables.get("records", TableDiff())

        def keep(keys: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
            return tuple(k[1:] for k in keys if k[0] == kind)

        return TableDiff(keep(got.added), keep(got.changed), keep(got.removed))

    def summary(self) -> dict[str, dict[str, int]]:
        """``{table: {"added": n, "changed": n, "removed": n}}``."""
        return {
            name: {"added": len(t.added), "changed": len(t.changed), "removed": len(t.removed)}
            for name, t in self.tables.items()
        }
