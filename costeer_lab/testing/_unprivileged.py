"""Run a command as a real unprivileged user, started by root, in a minimal view of root's paths.

The red team runs its attacks a second time as an ordinary user, because the sandbox isolates
differently without root (user namespaces, no per-run uids). An ordinary user cannot start this
interpreter when it lives under ``/root`` (mode 0700), nor reach a checkout cloned there.

:func:`run_as_unprivileged` (root only):

1. makes sure the system user exists (``useradd --system --no-create-home``, idempotent) and gives
   the command its own ``HOME`` and ``TMPDIR`` (a fresh directory owned by that user);
2. starts this file as a script in a private mount namespace (``unshare --mount --propagation
   private``). There, still root, each directory on the way to a needed path (the interpreter's
   ``sys.base_prefix``, the venv's ``sys.prefix``, the checkout, ``paths``) that others may not
   traverse is covered by a small tmpfs holding bind mounts of only the needed paths below it —
   the user sees those and nothing else of ``/root``; the host's mounts are unchanged;
3. drops to the user's uid and gid (no supplementary groups: the kernel clears every capability
   on that ``setuid``) and executes the command.

It needs only the standard library (it runs as a script before anything is importable).

Example:
    >>> done = run_as_unprivileged([sys.executable, "-c", "import os; print(os.getuid())"])
    ... # doctest: +SKIP
    >>> int(done.stdout) != 0                                            # doctest: +SKIP
    True
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["DEFAULT_USER", "blocked_ancestors", "ensure_user", "run_as_unprivileged"]

#: The system user the red team's unprivileged pass runs as.
DEFAULT_USER = "costeer-redteam"
#: Environment variables passed through to the command (besides ``extra_env``).
_PASSED_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "TERM")


def ensure_user(name: str = DEFAULT_USER) -> tuple[int, int]:
    """``(uid, gid)`` of the system user ``name``, created first when missing (root only)."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        cmd = ["useradd", "--system", "--no-create-home", "--user-group"]
        cmd += ["--shell", "/usr/sbin/nologin", name]
        subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=60)
        entry = pwd.getpwnam(name)  # KeyError when useradd failed: nothing else to try
    if entry.pw_uid == 0:
        raise ValueError(f"user {name!r} is root")
    return entry.pw_uid, entry.pw_gid


def _traversable(path: Path, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` (no supplementary groups) may search directory ``path``."""
    st = path.stat()
    if st.st_uid == uid:
        return bool(st.st_mode & stat.S_IXUSR)
    if st.st_gid == gid:
        return bool(st.st_mode & stat.S_IXGRP)
    return bool(st.st_mode & stat.S_IXOTH)


def blocked_ancestors(paths: Sequence[str | os.PathLike[str]], uid: int, gid: int) -> list[str]:
    """The topmost directory on the way to each of ``paths`` that the user cannot traverse
    (deduplicated, nested ones dropped: the tmpfs over the outer one recreates the way).

    Example:
        >>> blocked_ancestors(["/usr/bin"], 65534, 65534)
        []
    """
    found: list[str] = []
    for raw in paths:
        path = Path(os.path.realpath(raw))
        for ancestor in [*reversed(path.parents), path][:-1]:
            if not _traversable(ancestor, uid, gid):
                found.append(str(ancestor))
                break
    tops = sorted(set(found), key=len)
    return [p for p in tops if not any(p.startswith(t.rstrip("/") + "/") for t in tops if t != p)]


def _plan(
    needed: Sequence[str], uid: int, gid: int, home: str, argv: Sequence[str], cwd: str
) -> dict[str, object]:
    """What the script does inside the namespace (JSON-able)."""
    real = sorted({os.path.realpath(p) for p in needed if os.path.exists(p)}, key=len)
    real = [p for i, p in enumerate(real) if not any(p.startswith(q + "/") for q in real[:i])]
    blocked = blocked_ancestors(real, uid, gid)
    covers = {
        b: sorted(p for p in set(real) if p.startswith(b.rstrip("/") + "/")) for b in blocked
    }
    return {"uid": uid, "gid": gid, "covers": covers, "stage": os.path.join(home, ".stage")}


def run_as_unprivileged(
    argv: Sequence[str],
    *,
    user: str = DEFAULT_USER,
    paths: Sequence[str | os.PathLike[str]] = (),
    cwd: str | os.PathLike[str] | None = None,
    extra_env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    home: str | os.PathLike[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` as ``user`` (created if missing) and return its completed process.

    Args:
        argv: the command; ``argv[0]`` may be this interpreter (it will be reachable).
        user: the system user to run as (never root).
        paths: more paths the command needs to read (the interpreter, the venv and ``cwd`` are
            always made reachable).
        cwd: working directory of the command (default: the current one).
        extra_env: environment variables on top of ``PATH``/``LANG``, ``HOME`` and ``TMPDIR``.
        timeout_s: kill the command after this many seconds (``subprocess.TimeoutExpired``).
        home: directory owned by the user for ``HOME``/``TMPDIR`` (default: a new one in the
            system temporary directory, removed afterwards).

    Raises:
        PermissionError: not running as root.
        FileNotFoundError: ``unshare`` is missing.
    """
    if os.geteuid() != 0:
        raise PermissionError("run_as_unprivileged must be started by root")
    unshare = shutil.which("unshare")
    if unshare is None:
        raise FileNotFoundError("util-linux unshare is needed")
    uid, gid = ensure_user(user)
    workdir = os.path.realpath(cwd or os.getcwd())
    own_home = home is None
    home_dir = tempfile.mkdtemp(prefix="costeer-unpriv-") if home is None else os.fspath(home)
    try:
        tmp = os.path.join(home_dir, "tmp")
        os.makedirs(tmp, exist_ok=True)
        for d in (home_dir, tmp):
            os.chown(d, uid, gid)
            os.chmod(d, 0o700)
        needed = [sys.base_prefix, sys.prefix, os.path.realpath(sys.executable), workdir]
        needed += [os.fspath(p) for p in paths]
        plan = _plan(needed, uid, gid, home_dir, argv, workdir)
        env = {k: os.environ[k] for k in _PASSED_ENV if k in os.environ}
        env.update({"HOME": home_dir, "TMPDIR": tmp, "PYTHONDONTWRITEBYTECODE": "1"})
        env.update(extra_env or {})
        script = os.path.abspath(__file__)
        cmd = [unshare, "--mount", "--propagation", "private", sys.executable, "-I", script]
        cmd += [json.dumps(plan), workdir, *argv]
        return subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    finally:
        if own_home:
            shutil.rmtree(home_dir, ignore_errors=True)


# -- inside the private mount namespace (this file run as a script, still root) -----------------
def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, timeout=30)


def _cover(blocked: str, needed: Sequence[str], stage: str) -> None:
    """Replace ``blocked`` with a tmpfs that holds bind mounts of only ``needed``."""
    staged = []
    for i, path in enumerate(needed):
        target = os.path.join(stage, f"{len(os.listdir(stage))}-{i}")
        if os.path.isdir(path):
            os.mkdir(target)
        else:
            Path(target).touch()
        _mount("--rbind", path, target)
        staged.append((path, target))
    _mount("-t", "tmpfs", "-o", "mode=0755,size=1m", "tmpfs", blocked)
    for path, target in staged:
        if os.path.isdir(target):
            os.makedirs(path, mode=0o755, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            Path(path).touch()
        _mount("--rbind", target, path)


def _inner(args: Sequence[str]) -> int:
    """Set up the view, drop to the user, execute the command."""
    plan = json.loads(args[0])
    workdir, argv = args[1], list(args[2:])
    stage = str(plan["stage"])
    os.makedirs(stage, mode=0o700, exist_ok=True)
    for blocked, needed in dict(plan["covers"]).items():
        _cover(blocked, needed, stage)
    os.setgroups([])
    os.setgid(int(plan["gid"]))
    os.setuid(int(plan["uid"]))
    if os.getuid() == 0 or os.geteuid() == 0:
        raise SystemExit("still root after setuid")
    os.chdir(workdir)
    os.execvpe(argv[0], argv, dict(os.environ))
    return 127  # not reached


if __name__ == "__main__":
    raise SystemExit(_inner(sys.argv[1:]))
