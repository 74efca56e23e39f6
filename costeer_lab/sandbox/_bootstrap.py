"""First steps of a sandbox worker process, taken before anything else is imported.

The worker moves into new mount, PID, IPC and network namespaces. As root that is one
``unshare``; as an ordinary user a *user* namespace comes first (mapping only the user's own
ids), which the kernel allows only while the process has a single thread — hence this module
runs before numpy or pyarrow start theirs. The process then forks: the child becomes the worker,
process 1 of its PID namespace, so every process a run leaves behind dies with it; the parent
only waits and passes on the worker's exit status.

Stdlib only (it runs before the pre-imports, from the placeholder packages of ``_proc.py``).
"""

from __future__ import annotations

import os
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

__all__ = ["enter_namespaces"]


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


def enter_namespaces() -> dict[str, Any]:
    """Enter the worker's namespaces and fork; returns (in the child only) what was achieved:
    ``{"namespaces": bool, "user_namespace": bool, "host_netns_fd": int | None,
    "notes": [str]}``. When namespaces are not available it returns without forking."""
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
        kind = "namespaces" if root else "unprivileged user namespaces"
        info["notes"].append(f"{kind} unavailable: {exc}")
        return info
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:  # pragma: no cover - the waiting parent
        os.close(0)  # the worker alone holds the protocol pipes: EOF reaches it
        os.close(1)
        signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGKILL))
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # killing the visible pid kills the worker
    info.update(namespaces=True, user_namespace=not root, host_netns_fd=host_net)
    return info
