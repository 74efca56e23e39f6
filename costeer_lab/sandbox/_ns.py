"""Linux isolation primitives of the sandbox: namespaces, mounts, capabilities, uid sweeps.

Thin wrappers over the system calls (through libc with ``ctypes``: ``os.unshare`` and
``os.setns`` only exist from Python 3.12). Each raises ``OSError`` naming the call that failed;
the callers (``_bootstrap.py``, ``_view.py``, ``_child.py``, ``_worker.py``) decide what a
failure means. Stdlib only: the worker imports this before anything else.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal

__all__ = [
    "CLONE_NEWIPC",
    "CLONE_NEWNET",
    "CLONE_NEWNS",
    "CLONE_NEWPID",
    "CLONE_NEWUSER",
    "bind",
    "chroot",
    "count_uid_processes",
    "detach",
    "drop_capabilities",
    "mount_fs",
    "prctl",
    "remount_read_only",
    "setns",
    "sweep_uid",
    "unshare",
]

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 0x4000, 1 << 18
_MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
#: ``statvfs`` flags that a bind remount must keep (the kernel refuses to clear them when they
#: were set by a more privileged mount namespace): nosuid, nodev, noexec, noatime, nodiratime,
#: relatime — each mapped to its ``MS_*`` flag.
_KEEP_FLAGS = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: 1024, 2048: 2048, 4096: 1 << 21}

_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        _libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
        _libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
        _libc.syscall.argtypes = [ctypes.c_long] * 4
        _libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        _libc.chroot.argtypes = [ctypes.c_char_p]
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


def _enc(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def mount_fs(
    src: str | None, target: str, fstype: str | None, flags: int = 0, data: str | None = None
) -> None:
    """``mount(2)``."""
    ret: int = _lib().mount(_enc(src), _enc(target), _enc(fstype), flags, _enc(data))
    _check(ret, f"mount {fstype or src} on {target}")


def remount_read_only(target: str) -> None:
    """Make the bind mount at ``target`` read-only (and nosuid, nodev), keeping the flags the
    kernel does not let a user namespace clear."""
    keep = 0
    with contextlib.suppress(OSError):
        f_flag = os.statvfs(target).f_flag
        keep = sum(ms for st, ms in _KEEP_FLAGS.items() if f_flag & st)
    flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | keep
    try:
        mount_fs(None, target, None, flags | MS_NODEV)
    except OSError:  # device files (``/dev/null``) live on mounts that must keep working
        mount_fs(None, target, None, flags)


def bind(src: str, target: str, *, read_only: bool = True) -> None:
    """Bind ``src`` (file or directory, recursively) onto the existing ``target``."""
    mount_fs(src, target, None, MS_BIND | MS_REC)
    if read_only:
        remount_read_only(target)


def detach(target: str) -> None:
    """Lazily unmount ``target`` (``umount2`` with ``MNT_DETACH``)."""
    _check(_lib().umount2(_enc(target), _MNT_DETACH), f"umount {target}")


def chroot(path: str) -> None:
    """``chroot(2)`` followed by ``chdir("/")``."""
    _check(_lib().chroot(_enc(path)), f"chroot {path}")
    os.chdir("/")


#: ``capset`` header version 3 (two 32-bit words per capability set).
_CAP_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint32) for n in ("effective", "permitted", "inheritable")]


def drop_capabilities() -> None:
    """Clear the effective, permitted and inheritable capability sets of the calling thread
    (``capset(2)`` with empty sets): what a process in a user namespace of its own must do
    before running untrusted code, since it holds every capability inside that namespace."""
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_lib().capset(ctypes.byref(header), data), "capset")


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
