"""Run-wide budgets from the kernel: one memory + pids cgroup per sandboxed run.

Per-process rlimits do not bound a run: 64 processes may each hold ``RLIMIT_AS``. A cgroup
does, for the run as a whole, and its event counters say what happened, with no help from the
candidate's own output:

==================  ==================================  =====================================
                    cgroup v2 (one unified hierarchy)   cgroup v1 (``memory`` and ``pids``)
==================  ==================================  =====================================
memory limit        ``memory.max`` (+ ``swap.max`` 0)   ``memory.limit_in_bytes`` (+ memsw)
memory killed       ``memory.events`` ``oom_kill``      ``memory.oom_control`` ``oom_kill``
limit reached       ``memory.events`` ``max``           ``memory.failcnt``
peak                ``memory.peak``                     ``memory.max_usage_in_bytes``
process limit       ``pids.max``                        ``pids.max``
fork refused        ``pids.events`` ``max``             ``pids.events`` ``max``
==================  ==================================  =====================================

:func:`discover` finds what the worker may use: the hierarchies that hold its own cgroup (read
from ``/proc/self/cgroup`` and ``/proc/self/mountinfo``), with both controllers, where it can
create a directory (root, or a delegated subtree). It creates one directory of its own there
(``costeer-sbx-<pid>``); each run gets a child of it (:meth:`Budget.create`). Rootless workers
usually find nothing delegated: runs then fall back to per-process rlimits (``_child.py``).

The worker moves a spare child into the run's cgroup *before* it writes the request the spare
waits for, so no candidate code runs outside it. Process ids written to ``cgroup.procs`` are
read in the writer's PID namespace: the worker writes the id ``fork`` returned to it. Stdlib
only (a worker module).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from dataclasses import dataclass

__all__ = ["Budget", "RunCgroup", "discover"]

_ROOT = "/sys/fs/cgroup"
_MB = 1024 * 1024


def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as fh:
        return fh.read()


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _counters(path: str) -> dict[str, int]:
    """``key value`` lines of an events file; missing or unreadable files give ``{}``."""
    out: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in _read(path).splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                out[key] = int(value)
    return out


def _number(path: str) -> int:
    with contextlib.suppress(OSError, ValueError):
        return int(_read(path).strip())
    return 0


def _mounts() -> list[tuple[str, str, set[str]]]:
    """``(mount point, fs type, super options)`` of the cgroup mounts this process sees."""
    found: list[tuple[str, str, set[str]]] = []
    with contextlib.suppress(OSError):
        for line in _read("/proc/self/mountinfo").splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((fields[4], tail[0], set(tail[2].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under ``""`` its v2 path."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in _read("/proc/self/cgroup").splitlines():
            parts = line.split(":", 2)
            if len(parts) == 3:
                for name in parts[1].split(",") if parts[1] else [""]:
                    paths[name] = parts[2]
    return paths


@dataclass
class RunCgroup:
    """The cgroup(s) of one run: ``dirs`` holds one directory (v2) or the memory and the pids
    directory (v1)."""

    mode: str
    dirs: list[str]

    @property
    def _memory(self) -> str:
        return self.dirs[0]

    @property
    def _pids(self) -> str:
        return self.dirs[-1]

    def add(self, pid: int) -> None:
        """Move process ``pid`` (an id in the caller's PID namespace) into the run's cgroup."""
        for directory in self.dirs:
            _write(os.path.join(directory, "cgroup.procs"), str(pid))

    def events(self) -> dict[str, int]:
        """What the kernel recorded: ``oom_kill`` (processes killed for memory),
        ``memory_max`` (times the limit was reached), ``pids_max`` (forks refused at the
        process limit) and ``memory_peak`` (bytes)."""
        pids_max = _counters(os.path.join(self._pids, "pids.events")).get("max", 0)
        if self.mode == "cgroup-v2":
            mem = _counters(os.path.join(self._memory, "memory.events"))
            return {
                "oom_kill": mem.get("oom_kill", 0) + mem.get("oom_group_kill", 0),
                "memory_max": mem.get("max", 0),
                "pids_max": pids_max,
                "memory_peak": _number(os.path.join(self._memory, "memory.peak")),
            }
        oom = _counters(os.path.join(self._memory, "memory.oom_control"))
        return {
            "oom_kill": oom.get("oom_kill", 0),
            "memory_max": _number(os.path.join(self._memory, "memory.failcnt")),
            "pids_max": pids_max,
            "memory_peak": _number(os.path.join(self._memory, "memory.max_usage_in_bytes")),
        }

    def _pids_left(self) -> list[int]:
        left: set[int] = set()
        for directory in self.dirs:
            with contextlib.suppress(OSError):
                left.update(int(p) for p in _read(os.path.join(directory, "cgroup.procs")).split())
        return sorted(left)

    def kill(self) -> None:
        """SIGKILL everything still in the cgroup (``cgroup.kill`` where v2 has it)."""
        if self.mode == "cgroup-v2":
            with contextlib.suppress(OSError):
                _write(os.path.join(self._memory, "cgroup.kill"), "1")
                return
        for pid in self._pids_left():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def remove(self, wait_s: float = 0.5) -> bool:
        """Kill what is left, then remove the directories; ``False`` when one is still busy
        (its processes are still exiting: try again later)."""
        deadline = time.monotonic() + wait_s
        while True:
            self.kill()
            busy = False
            for directory in self.dirs:
                try:
                    os.rmdir(directory)
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    busy = busy or exc.errno == errno.EBUSY
            if not busy or time.monotonic() >= deadline:
                return not busy
            time.sleep(0.005)


@dataclass
class Budget:
    """The worker's cgroup directory (or directories, v1) under which runs get theirs."""

    mode: str
    parents: list[str]
    _count: int = 0

    def create(self, memory_mb: int, max_processes: int) -> RunCgroup:
        """A new cgroup for one run with its memory and process limits. Raises ``OSError``."""
        self._count += 1
        name = f"run-{self._count}"
        dirs = [os.path.join(parent, name) for parent in self.parents]
        for directory in dirs:
            os.mkdir(directory, 0o700)
        run = RunCgroup(self.mode, dirs)
        try:
            self._limit(run, memory_mb * _MB, max_processes)
        except OSError:
            run.remove(wait_s=0)
            raise
        return run

    def _limit(self, run: RunCgroup, memory: int, max_processes: int) -> None:
        mem, pids = run.dirs[0], run.dirs[-1]
        if self.mode == "cgroup-v2":
            _write(os.path.join(mem, "memory.max"), str(memory))
            with contextlib.suppress(OSError):  # no swap accounting: nothing to bound
                _write(os.path.join(mem, "memory.swap.max"), "0")
        else:
            _write(os.path.join(mem, "memory.limit_in_bytes"), str(memory))
            with contextlib.suppress(OSError):  # swap accounting off: no memsw files
                _write(os.path.join(mem, "memory.memsw.limit_in_bytes"), str(memory))
        _write(os.path.join(pids, "pids.max"), str(max_processes))

    def close(self) -> None:
        """Remove the worker's own directories (after its runs' cgroups are gone)."""
        for parent in self.parents:
            with contextlib.suppress(OSError):
                os.rmdir(parent)


def _sweep_stale(parent: str) -> None:
    """Remove the empty cgroup directories that killed workers left behind.

    Only a dead worker's: a live worker's run cgroup is empty between its creation and the
    moment the worker moves the run's process into it, so sweeping it would fail that run
    (``FileNotFoundError`` on ``cgroup.procs``) whenever two workers start side by side. The
    owner is the host process id in the name (``/proc`` is the host's, also inside a worker's
    PID namespace).
    """
    with contextlib.suppress(OSError):
        for name in os.listdir(parent):
            if not name.startswith("costeer-sbx-"):
                continue
            owner = name.removeprefix("costeer-sbx-")
            if not owner.isdigit() or os.path.exists(f"/proc/{owner}"):
                continue  # not a worker's directory, or its worker is alive
            stale = os.path.join(parent, name)
            with contextlib.suppress(OSError):
                for run in os.listdir(stale):
                    if run.startswith("run-"):
                        with contextlib.suppress(OSError):
                            os.rmdir(os.path.join(stale, run))
                os.rmdir(stale)


def _make_own(parent: str, tag: str) -> str:
    _sweep_stale(parent)
    own = os.path.join(parent, tag)
    os.mkdir(own, 0o700)
    return own


def _v2(mounts: list[tuple[str, str, set[str]]], paths: dict[str, str], tag: str) -> Budget:
    """The v2 budget: the worker's cgroup must offer memory and pids to its children (already,
    or once enabled: impossible when the cgroup holds processes, as a non-root cgroup of a
    container usually does; the worker never moves other processes to make room)."""
    point = next((m for m, kind, _ in mounts if kind == "cgroup2"), None)
    if point is None or "" not in paths:
        raise OSError(errno.ENOENT, "no cgroup2 mount holds this process")
    parent = os.path.join(point, paths[""].lstrip("/"))
    wanted = {"memory", "pids"}
    if not wanted <= set(_read(os.path.join(parent, "cgroup.controllers")).split()):
        raise OSError(errno.ENOTSUP, f"{parent} offers no memory and pids controllers")
    control = os.path.join(parent, "cgroup.subtree_control")
    if not wanted <= set(_read(control).split()):
        _write(control, "+memory +pids")
    own = _make_own(parent, tag)
    try:
        _write(os.path.join(own, "cgroup.subtree_control"), "+memory +pids")
    except OSError:
        os.rmdir(own)
        raise
    return Budget("cgroup-v2", [own])


def _v1(mounts: list[tuple[str, str, set[str]]], paths: dict[str, str], tag: str) -> Budget:
    """The v1 budget: a directory of the worker's own in the ``memory`` and the ``pids``
    hierarchy, each under the worker's cgroup there."""
    parents: list[str] = []
    for controller in ("memory", "pids"):
        point = next((m for m, kind, o in mounts if kind == "cgroup" and controller in o), None)
        if point is None or controller not in paths:
            raise OSError(errno.ENOENT, f"no cgroup v1 {controller} hierarchy holds this process")
        parents.append(os.path.join(point, paths[controller].lstrip("/")))
    made: list[str] = []
    try:
        for parent in parents:
            made.append(_make_own(parent, tag))
    except OSError:
        for own in made:
            os.rmdir(own)
        raise
    return Budget("cgroup-v1", made)


def discover(tag: str) -> tuple[Budget | None, list[str]]:
    """The budget runs get on this machine (v2 first, then v1) and notes on what was not
    usable; ``None`` when the worker may not create cgroups (not root and nothing delegated,
    no memory or pids controller, no cgroupfs)."""
    notes: list[str] = []
    if not os.path.isdir(_ROOT):
        return None, [f"no {_ROOT}"]
    mounts, paths = _mounts(), _own_paths()
    for name, make in (("cgroup v2", _v2), ("cgroup v1", _v1)):
        try:
            return make(mounts, paths, tag), notes
        except OSError as exc:
            notes.append(f"{name}: {exc}")
    return None, notes
