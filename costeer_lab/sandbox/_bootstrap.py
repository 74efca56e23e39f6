"""First steps of a sandbox worker process, taken before anything else is imported.

The worker moves into new mount, PID, IPC and network namespaces. As root that is one
``unshare``; as an ordinary user a *user* namespace comes first (mapping only the user's own
ids), which the kernel allows only while the process has a single thread — hence this module
runs before numpy or pyarrow start theirs. The process then forks: the child becomes the worker,
process 1 of its PID namespace, so every process a run leaves behind dies with it; the parent
only waits and passes on the worker's exit status.

Dying with the owner (the process that started the worker, :class:`~._proc.WorkerProcess`):
before anything else the bootstrap opens a *pidfd* of its parent and checks ``os.getppid()``
again (a parent that died before the pidfd was open may have had its pid reused). The waiting
parent polls that pidfd beside the worker's: when the owner exits, it SIGKILLs the worker, and
the kernel then kills every process of the worker's PID namespace and of the run namespaces
nested in it, whatever uid a run process took. The worker itself has ``PR_SET_PDEATHSIG`` towards
the bootstrap (a single-threaded process, so the signal's tie to the forking *thread* is the
process's); the worker's uid sweeps clear it, so :func:`rearm_parent_death` sets it again and
checks, with a pidfd of the bootstrap, that the bootstrap did not die meanwhile. The worker also
exits on end-of-file of its request pipe, whose only writer is the owner (the fallback where
pidfds are missing). No pidfd reaches a run: the worker's children close every inherited
descriptor and the bootstrap's pidfds stay outside the namespaces.

Stdlib only (it runs before the pre-imports, from the placeholder packages of ``_proc.py``).
"""

from __future__ import annotations

import os
import select
import signal
import sys
from typing import Any

from costeer_lab.sandbox._ns import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    MS_PRIVATE,
    MS_REC,
    PR_SET_PDEATHSIG,
    mount_fs,
    prctl,
    unshare,
)

__all__ = ["enter_namespaces", "rearm_parent_death"]

#: In the worker: a pidfd of the bootstrap (its parent), read by :func:`rearm_parent_death`.
_PARENT_FD: int | None = None


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:  # an old kernel, or a seccomp filter refusing the call
        return None


def _open_owner(owner_pid: int | None) -> int | None:
    """A pidfd of the owner (the parent), or ``None``; exits at once when the owner is gone."""
    if owner_pid is None:
        return None
    if os.getppid() != owner_pid:
        os._exit(1)
    fd = _pidfd(owner_pid)
    if os.getppid() != owner_pid:  # died before the pidfd was open: it may name another
        os._exit(1)
    return fd


def _gone(fd: int) -> bool:
    readable, _, _ = select.select([fd], [], [], 0)
    return bool(readable)


def rearm_parent_death() -> None:
    """Set ``PR_SET_PDEATHSIG`` again (a uid change clears it) and exit when the bootstrap died
    before it was set (its pidfd is readable)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if _PARENT_FD is not None and _gone(_PARENT_FD):
        os._exit(1)


def _wait_worker(pid: int, owner_fd: int | None) -> int:
    """Wait for the worker ``pid``; SIGKILL it when the owner's pidfd says the owner exited.
    Returns the wait status."""
    worker_fd = _pidfd(pid) if owner_fd is not None else None
    while True:
        if owner_fd is not None:
            watched = [owner_fd] if worker_fd is None else [owner_fd, worker_fd]
            readable, _, _ = select.select(watched, [], [], 0.5 if worker_fd is None else None)
            if owner_fd in readable:
                os.kill(pid, signal.SIGKILL)
                owner_fd = None  # now only the worker's end is awaited
            flags = os.WNOHANG if owner_fd is not None else 0
        else:
            flags = 0
        try:
            done, status = os.waitpid(pid, flags)
        except InterruptedError:
            continue
        if done:
            return status


def _map_own_ids(uid: int, gid: int) -> None:
    """Map the user's own ids into the new user namespace (read before ``unshare``: until the
    map is written, the process's ids show as the overflow id)."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):  # fmt: skip
        fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        except OSError as exc:
            what = f"writing {text!r} to /proc/self/{name}: {exc.strerror}"
            raise OSError(exc.errno, what) from exc
        finally:
            os.close(fd)


def enter_namespaces(owner_pid: int | None = None) -> dict[str, Any]:
    """Enter the worker's namespaces and fork; returns (in the child only) what was achieved:
    ``{"namespaces": bool, "user_namespace": bool, "host_netns_fd": int | None,
    "notes": [str]}``. When namespaces are not available it returns without forking.
    ``owner_pid``: the parent; the worker is killed when it exits (module docstring)."""
    global _PARENT_FD
    owner_fd = _open_owner(owner_pid)
    info: dict[str, Any] = {
        "namespaces": False,
        "user_namespace": False,
        "host_netns_fd": None,
        "notes": [],
    }
    if not sys.platform.startswith("linux"):
        info["notes"].append(f"no namespaces on {sys.platform}")
        return info
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET
    root = os.geteuid() == 0
    host_net = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC) if root else None
    try:
        if root:
            unshare(flags)
        else:
            uid, gid = os.getuid(), os.getgid()
            unshare(CLONE_NEWUSER | flags)
            _map_own_ids(uid, gid)
        mount_fs(None, "/", None, MS_REC | MS_PRIVATE)
    except OSError as exc:
        if host_net is not None:
            os.close(host_net)
        if owner_fd is not None:  # the worker is this process: its pipe's end-of-file remains
            os.close(owner_fd)
        kind = "namespaces" if root else "unprivileged user namespaces"
        info["notes"].append(f"{kind} unavailable: {exc}")
        return info
    sys.stdout.flush()
    sys.stderr.flush()
    self_fd = _pidfd(os.getpid())  # inherited by the worker: a pidfd of its parent
    pid = os.fork()
    if pid:  # pragma: no cover - the waiting parent
        os.close(0)  # the worker alone holds the protocol pipes: EOF reaches it
        os.close(1)
        if self_fd is not None:
            os.close(self_fd)
        signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGKILL))
        status = _wait_worker(pid, owner_fd)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    if owner_fd is not None:
        os.close(owner_fd)  # the worker never holds a pidfd of the trusted owner
    _PARENT_FD = self_fd
    rearm_parent_death()  # killing the visible pid kills the worker
    info.update(namespaces=True, user_namespace=not root, host_netns_fd=host_net)
    return info
