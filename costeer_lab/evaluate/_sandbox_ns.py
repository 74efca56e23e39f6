"""Linux isolation primitives of the sandbox worker: namespaces, mounts, privilege sweeps.

Used only inside the worker process (``_worker.py``). Everything is best effort: each function
reports what it achieved instead of raising, so the sandbox can say when isolation was not
available (no root, no namespaces, not Linux).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import stat
import sys
from collections.abc import Iterable

__all__ = [
    "CLONE_NEWNET",
    "CLONE_NEWNS",
    "count_uid_processes",
    "isolate_worker",
    "prctl",
    "setns",
    "sweep_uid",
]

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 4096, 0x4000, 1 << 18
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38

_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        _libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
        _libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
        _libc.syscall.argtypes = [ctypes.c_long] * 4
    return _libc


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    """``unshare(2)`` (``os.unshare`` only exists from Python 3.12)."""
    _check(_lib().unshare(flags), f"unshare({flags:#x})")


def setns(fd: int, nstype: int) -> None:
    """``setns(2)``: join the namespace open at ``fd``."""
    _check(_lib().setns(fd, nstype), "setns")


def prctl(option: int, arg: int) -> None:
    _check(_lib().prctl(option, arg, 0, 0, 0), f"prctl({option})")


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    def enc(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    ret: int = _lib().mount(enc(src), enc(target), enc(fstype), flags, enc(data))
    _check(ret, f"mount {target}")


def _others_can_enter(path: str) -> bool:
    st = os.stat(path)
    return bool(st.st_mode & stat.S_IXOTH)


def _hidden_ancestor(path: str) -> str | None:
    """The topmost ancestor of ``path`` that other users cannot traverse, if any."""
    parts = os.path.realpath(path).split(os.sep)[1:]
    current = ""
    for part in parts:
        current = f"{current}/{part}"
        try:
            if os.path.isdir(current) and not _others_can_enter(current):
                return current
        except OSError:
            return None
    return None


def _expose_paths(needed: Iterable[str]) -> list[str]:
    """In a private mount namespace, cover each closed ancestor (e.g. ``/root`` mode 0700) of a
    needed path with an empty tmpfs and bind the needed paths back into it.

    The unprivileged run user then reaches the Python installation while everything else in the
    closed directory (dotfiles, credentials) stays invisible. Returns the masked directories.
    """
    plan: dict[str, set[str]] = {}
    for path in needed:
        real = os.path.realpath(path)
        if not os.path.isdir(real):
            continue
        top = _hidden_ancestor(real)
        if top is not None and top != real:
            plan.setdefault(top, set()).add(real)
    for top, targets in plan.items():
        keep = sorted(t for t in targets if not any(t.startswith(o + "/") for o in targets))
        fds = [os.open(t, os.O_PATH | os.O_DIRECTORY) for t in keep]
        try:
            _mount("tmpfs", top, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=1m")
            for target, fd in zip(keep, fds, strict=True):
                os.makedirs(target, mode=0o755, exist_ok=True)
                _mount(f"/proc/self/fd/{fd}", target, None, _MS_BIND | _MS_REC, None)
        finally:
            for fd in fds:
                os.close(fd)
    return sorted(plan)


def isolate_worker(needed_paths: Iterable[str], *, network: bool) -> dict[str, object]:
    """Move the worker into its own network (unless ``network``) and mount namespaces.

    Children forked afterwards inherit them, so no per-run namespace cost is paid. Returns
    ``{"network_isolated": bool, "host_netns_fd": int | None, "masked": [...], "notes": [...]}``;
    ``host_netns_fd`` lets a child that asks for network rejoin the original namespace.
    """
    info: dict[str, object] = {"network_isolated": False, "host_netns_fd": None, "masked": []}
    notes: list[str] = []
    info["notes"] = notes
    if not sys.platform.startswith("linux"):
        notes.append(f"no namespaces on {sys.platform}")
        return info
    if os.geteuid() == 0:
        host = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            unshare(CLONE_NEWNS | (0 if network else CLONE_NEWNET))
        except OSError as exc:
            os.close(host)
            notes.append(f"namespaces unavailable: {exc}")
            return info
        info["host_netns_fd"] = host
        info["network_isolated"] = not network
        try:
            _mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
            info["masked"] = _expose_paths(needed_paths)
        except OSError as exc:
            notes.append(f"mount setup failed: {exc}")
        return info
    if not network:  # unprivileged: a user namespace mapping our own ids makes netns possible
        uid, gid = os.getuid(), os.getgid()
        try:
            unshare(CLONE_NEWUSER | CLONE_NEWNET)
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                               ("gid_map", f"{gid} {gid} 1")):  # fmt: skip
                with open(f"/proc/self/{name}", "w") as fh:
                    fh.write(text)
            info["network_isolated"] = True
        except OSError as exc:
            notes.append(f"network namespace unavailable: {exc}")
    return info


def count_uid_processes(uid: int) -> int:
    """Number of tasks (processes and threads) owned by ``uid``, read from ``/proc``."""
    total = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0
    for name in names:
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid == uid:
                total += max(1, len(os.listdir(f"/proc/{name}/task")))
        except OSError:
            continue
    return total


#: ``SYS_setresuid`` per machine: the raw system call changes the credentials of the calling
#: thread only, where glibc's ``setresuid`` signals every thread of the process to follow.
_SYS_SETRESUID = {"x86_64": 117, "aarch64": 147}


def _thread_setresuid(ruid: int, euid: int, suid: int) -> None:
    """Set the calling thread's uids (the raw system call; glibc's wrapper as the fallback).

    The worker holds threads it never asked for (pyarrow's pools, jemalloc's background
    thread). glibc's ``setresuid`` makes all of them change uid too, a signal round trip per
    thread that took 2-3 ms per sweep on a busy 2-core machine; the raw call takes
    microseconds. Only the calling thread sends the signal, and the kernel checks the
    permission of ``kill`` against that thread's credentials, so this is enough.
    """
    number = _SYS_SETRESUID.get(os.uname().machine)
    if number is not None and _lib().syscall(number, ruid, euid, suid) == 0:
        return
    os.setresuid(ruid, euid, suid)


def sweep_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` (root only).

    The calling thread briefly takes ``uid`` as its real and effective uid (keeping root as the
    saved uid to come back) and calls ``kill(-1)``, which reaches exactly the processes of
    ``uid`` (never the caller) and which the kernel applies atomically with respect to new
    forks. This costs microseconds, where forking a helper from a worker holding pandas costs
    milliseconds. Only for callers that run no other Python code meanwhile (the worker).
    """
    _thread_setresuid(uid, uid, 0)
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass  # no process left
    finally:
        _thread_setresuid(0, 0, 0)
