"""Stages that start from a named snapshot, and the ``stage:<name>`` snapshots a run takes.

A stage with ``start_from: {snapshot, store}`` (:class:`~costeer_lab.experiment.StartSnapshot`)
starts each (arm, seed) from a branch of that snapshot (:meth:`BaseStore.branch`: the rows as
of the snapshot copied into the arm's new SQLite file, written beside it and renamed into place,
so a crash leaves no half-filled store). The source is only read: a SQLite source is opened
read-only (no migration, no file created beside it), so its bytes never change. Without
``store`` the source is the (arm, seed)'s own store of the previous stage, or for the first
stage the top-level ``start_from`` run's ``kb/<arm>-seed<s>.db``.

After each stage of a staged spec the runner takes the snapshot ``stage:<name>`` in every
(arm, seed)'s SQLite store (O(1): one row), so a later stage or experiment can start from the end
of any stage. A store carried over by copy keeps its snapshots; a branch starts with the one it
came from.

``<out>/start_snapshots.json`` records what each (stage, arm, seed) started from: the snapshot's
name, its store (password scrubbed), its epoch and when it was taken; the report shows it.

Example:
    >>> stage_snapshot("learn")
    'stage:learn'
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from costeer_lab._fs import atomic_write_bytes, replace_durably
from costeer_lab._redact import redact_url
from costeer_lab.errors import ConfigurationError, CosteerLabError, did_you_mean
from costeer_lab.experiment._names import store_path
from costeer_lab.experiment._spec import ExperimentSpec, StageSpec, StartSnapshot
from costeer_lab.store import BaseStore, SQLiteStore, get_store

__all__ = [
    "START_SNAPSHOTS_FILE",
    "check_start_snapshots",
    "open_source",
    "read_start_snapshots",
    "record_start",
    "stage_snapshot",
    "start_from_snapshot",
    "take_stage_snapshot",
]

#: The record of what each (stage, arm, seed) started from, in the run folder.
START_SNAPSHOTS_FILE = "start_snapshots.json"


def stage_snapshot(stage: str) -> str:
    """The name of the snapshot the runner takes at the end of ``stage``."""
    return f"stage:{stage}"


def _sqlite_file(target: str | Path) -> Path | None:
    """The file of a SQLite target (a path or ``sqlite:///`` URL); ``None`` for other URLs."""
    if isinstance(target, Path):
        return target
    text = target.strip()
    if "://" not in text:
        return Path(text).expanduser()
    if urlsplit(text).scheme.lower() != "sqlite":
        return None
    return Path(text[len("sqlite:///") :].partition("?")[0])


def open_source(target: str | Path) -> BaseStore:
    """Open the store a stage starts from for reading: a SQLite file read-only (nothing is
    written into or beside it), any other URL with :func:`~costeer_lab.store.get_store`.

    Raises:
        ConfigurationError: the SQLite file does not exist or is not a store.
    """
    file = _sqlite_file(target)
    if file is None:
        return get_store(str(target))
    shown = redact_url(str(target))
    if not file.is_file():
        raise ConfigurationError(f"no store file at {shown!r}")
    try:
        return SQLiteStore(file, read_only=True)
    except CosteerLabError as exc:
        raise ConfigurationError(f"cannot read store {shown!r}: {exc}") from None


def _snapshot_names(target: str | Path) -> list[str]:
    store = open_source(target)
    try:
        return [s.name for s in store.snapshots()]
    finally:
        store.close()


def _require(field: str, name: str, known: Sequence[str], where: str) -> None:
    if name in known:
        return
    listed = did_you_mean(name, sorted(known)) if known else "it holds no snapshots"
    raise ConfigurationError(f"{field}: no snapshot named {name!r} in {where}; {listed}")


def check_start_snapshots(spec: ExperimentSpec, out_dir: Path, *, resume: bool) -> None:
    """Refuse a stage ``start_from`` whose snapshot its store will not hold, before anything
    is written. A named ``store`` is opened (read-only) and its snapshots listed; without one,
    the names the previous stage's store will hold are worked out: those of the top-level
    ``start_from`` files, carried over stage by stage, plus ``stage:<name>`` of every stage
    run before. Stores of a resumed run that already exist need no source.

    Raises:
        ConfigurationError: naming the field (``stages.1.start_from.snapshot``), the store and
            the snapshots it holds, with a "did you mean".
    """
    held: set[str] = set()
    if spec.start_from is not None:
        run = Path(spec.start_from)
        files = [store_path(run, a.name, s) for a in spec.arms for s in spec.seeds]
        names = [set(_snapshot_names(f)) for f in files if f.is_file()]
        held = set.intersection(*names) if names else set()
    for i, stage in enumerate(spec.stages):
        start, field = stage.start_from, f"stages.{i}.start_from"
        if start is not None and not (resume and _started(spec, out_dir, stage)):
            if start.store is not None:
                try:
                    known = _snapshot_names(start.store)
                except ConfigurationError as exc:
                    raise ConfigurationError(f"{field}.store: {exc}") from None
                where = f"store {redact_url(start.store)!r}"
            else:
                known = sorted(held)
                where = (
                    f"the store of stage {spec.stages[i - 1].name!r}"
                    if i
                    else f"the stores of start_from {spec.start_from!r}"
                )
            _require(f"{field}.snapshot", start.snapshot, known, where)
        if start is not None:
            held = {start.snapshot}
        elif not stage.carry_knowledge:
            held = set()
        held.add(stage_snapshot(stage.name))


def _started(spec: ExperimentSpec, out_dir: Path, stage: StageSpec) -> bool:
    return all(
        store_path(out_dir, a.name, s, stage.name).exists() for a in spec.arms for s in spec.seeds
    )


def start_from_snapshot(source: str | Path, start: StartSnapshot, dest: Path) -> dict[str, Any]:
    """Make ``dest`` (a new SQLite file) a branch of snapshot ``start.snapshot`` of ``source``;
    returns what it started from (``snapshot``, ``store``, ``epoch``, ``taken_at``).

    The branch is written to ``<dest>.tmp`` and renamed into place; ``source`` is only read.
    """
    src = open_source(source)
    try:
        snap = next((s for s in src.snapshots() if s.name == start.snapshot), None)
        tmp = dest.with_name(dest.name + ".tmp")
        tmp.unlink(missing_ok=True)
        target = SQLiteStore(tmp)
        try:
            src.branch(start.snapshot, target)  # UnknownNameError names the known snapshots
        finally:
            target.close()
    finally:
        src.close()
    replace_durably(tmp, dest)
    assert snap is not None  # branch raised otherwise
    return {
        "snapshot": snap.name,
        "store": redact_url(str(source)),
        "epoch": snap.epoch,
        "taken_at": dt.datetime.fromtimestamp(snap.created_at, dt.UTC).isoformat(
            timespec="seconds"
        ),
    }


def take_stage_snapshot(path: Path, stage: str) -> None:
    """Take ``stage:<stage>`` in the SQLite store at ``path`` (kept when it exists: a resumed
    stage that had finished)."""
    name = stage_snapshot(stage)
    store = get_store(path)
    try:
        if not any(s.name == name for s in store.snapshots()):
            store.snapshot(name)
    finally:
        store.close()


def read_start_snapshots(run_dir: Path) -> list[dict[str, Any]]:
    """The entries of ``<run_dir>/start_snapshots.json`` (none: missing or unreadable)."""
    try:
        data = json.loads((run_dir / START_SNAPSHOTS_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return []
    rows = data.get("starts") if isinstance(data, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def record_start(run_dir: Path, entry: dict[str, Any]) -> None:
    """Add (or replace) the entry of one (stage, arm, seed) in ``start_snapshots.json``."""
    key = (entry["stage"], entry["arm"], entry["seed"])
    rows = [
        r
        for r in read_start_snapshots(run_dir)
        if (r.get("stage"), r.get("arm"), r.get("seed")) != key
    ]
    rows.append(entry)
    rows.sort(key=lambda r: (str(r.get("stage")), str(r.get("arm")), int(r.get("seed", 0))))
    body = json.dumps({"starts": rows}, indent=2).encode("utf-8")
    atomic_write_bytes(run_dir / START_SNAPSHOTS_FILE, body)
