"""The stale-cgroup sweep removes only dead workers' directories.

A live worker's run cgroup is empty from its creation until the worker moves the run's process
into it; a second worker starting then must not remove it (that failed the first worker's run
with ``FileNotFoundError`` on ``cgroup.procs`` when two test processes ran side by side).
Plain directories stand in for cgroup directories: ``rmdir`` of an empty one behaves alike.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from costeer_lab.sandbox._cgroup import _make_own


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_live_workers_empty_run_cgroup_survives_another_workers_start(tmp_path: Path) -> None:
    alive = tmp_path / f"costeer-sbx-{os.getpid()}"
    (alive / "run-1").mkdir(parents=True)  # created, its process not moved in yet
    dead = tmp_path / f"costeer-sbx-{_dead_pid()}"
    (dead / "run-7").mkdir(parents=True)
    other = tmp_path / "costeer-sbx-notapid"
    other.mkdir()
    unrelated = tmp_path / "someone-else"
    (unrelated / "run-1").mkdir(parents=True)

    own = _make_own(str(tmp_path), "costeer-sbx-999999999")

    assert (alive / "run-1").is_dir()  # the live worker's run keeps its cgroup
    assert not dead.exists()  # a dead worker's leftovers are swept
    assert other.is_dir() and (unrelated / "run-1").is_dir()  # not a worker's: left alone
    assert Path(own).is_dir() and Path(own).name == "costeer-sbx-999999999"


def test_a_dead_workers_busy_run_cgroup_is_left_for_later(tmp_path: Path) -> None:
    dead = tmp_path / f"costeer-sbx-{_dead_pid()}"
    (dead / "run-1" / "still-here").mkdir(parents=True)  # rmdir fails: not empty (busy)
    _make_own(str(tmp_path), "costeer-sbx-999999998")
    assert (dead / "run-1" / "still-here").is_dir()
