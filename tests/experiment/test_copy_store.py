"""``copy_store``: a consistent copy of a SQLite store, replaced atomically and durably."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from costeer_lab.errors import ConfigurationError
from costeer_lab.experiment._runner import copy_store
from costeer_lab.store import SQLiteStore


def _store_with_a_record(path: Path) -> None:
    with SQLiteStore(path) as store:
        store.put_record("note", "a", {"text": "carried over"})


def test_the_copy_holds_the_source_and_replaces_the_target(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "out" / "dst.db"
    _store_with_a_record(src)
    dst.parent.mkdir()
    dst.write_bytes(b"an older file")
    copy_store(src, dst)
    with SQLiteStore(dst) as copy:
        assert copy.get_record("note", "a") == {"text": "carried over"}
    assert sorted(p.name for p in dst.parent.iterdir()) == ["dst.db"]  # no temporary file left


def test_a_missing_source_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no store at"):
        copy_store(tmp_path / "absent.db", tmp_path / "dst.db")


def test_the_copy_is_synced_before_the_rename_and_the_directory_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real fsync and rename run; the test records what they were called on, in order."""
    src, dst = tmp_path / "src.db", tmp_path / "out" / "dst.db"
    _store_with_a_record(src)
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> None:
        events.append(("replace", str(b)))
        real_replace(a, b)

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to name the synced files")
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    copy_store(src, dst)
    assert events == [
        ("fsync", str(dst.with_name("dst.db.tmp"))),
        ("replace", str(dst)),
        ("fsync", str(dst.parent)),
    ]
