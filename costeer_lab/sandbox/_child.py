"""The forked child of the sandbox worker: lock itself down, then run the candidate.

:func:`run_child` never returns; it ends the process with ``os._exit``. The child runs in a PID
namespace of its own, beside that namespace's init (process 1). Order matters: all the steps
that need privileges (joining the host network for runs that ask for it, opening the capture
files in the run directory, handing the work directory to the run user, new mount, IPC and —
unless the run asked for the network — network namespaces, the filesystem view and ``chroot``,
limits) happen before privileges are dropped — to the run's uid as root, by clearing every
capability in a user namespace. Then ``PR_SET_NO_NEW_PRIVS``, the seccomp filter that refuses
the kernel keyring calls (``_seccomp.py``), and last the checks of ``_verify.py``: the child
verifies from inside what its isolation rests on and, when the worker promised full isolation,
refuses to run the code if any of it does not hold. The status pipe carries set-up errors (a
refusal is one) or the ready line with the verified facts, and is closed with every other
inherited descriptor before the candidate's code runs: from then on the worker learns the
outcome from the kernel only.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import json
import math
import os
import resource
import runpy
import signal
import sys
import traceback
from collections.abc import Mapping
from typing import Any, NoReturn

from costeer_lab.sandbox._ns import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    count_uid_processes,
    drop_capabilities,
    prctl,
    setns,
    unshare,
)
from costeer_lab.sandbox._seccomp import SeccompUnavailable, deny_keyrings, deny_new_processes
from costeer_lab.sandbox._verify import IsolationCheckFailed, netns_id, shortfalls, verify
from costeer_lab.sandbox._view import WORK_DIR, enter
from costeer_lab.sandbox._warm import idle_warm_up

__all__ = ["READY_MARK", "SETUP_FAILED_EXIT", "run_child", "wait_and_run", "wipe_cmdline"]

#: Exit code of a child whose set-up failed (the reason is written to the status pipe).
SETUP_FAILED_EXIT = 126
#: Starts the line ``READY_MARK cpu_s facts`` the child writes to its status pipe when set-up
#: is done, just before it closes the pipe and runs the candidate (``cpu_s``: CPU seconds it
#: used before, while waiting, which are not the run's; ``facts``: the JSON object of what
#: ``_verify.verify`` found).
READY_MARK = "ready "
_MB = 1024 * 1024


def _reset_signals() -> None:
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _redirect(run_dir: str) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
    for fd, name in ((1, "stdout"), (2, "stderr")):
        new = os.open(os.path.join(run_dir, name), flags, 0o600)
        os.dup2(new, fd)
        os.close(new)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


def _give_tree(work_dir: str, uid: int, read_only: set[str]) -> None:
    """Hand ``work_dir`` and everything in it except the read-only input copies to ``uid``."""
    os.chown(work_dir, uid, uid)
    os.chmod(work_dir, 0o700)
    for root, dirs, files in os.walk(work_dir):
        for name in dirs + files:
            path = os.path.join(root, name)
            if os.path.relpath(path, work_dir) in read_only:
                continue
            os.chown(path, uid, uid, follow_symlinks=False)


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _set_limits(limits: Mapping[str, Any], uid: int | None, cpu_before: float) -> None:
    """Per-process limits: CPU time, file size and core dumps always. Memory and processes:

    * with a cgroup (``limits["budget"]`` names it), the kernel bounds them for the run as a
      whole and counts each hit, so those are what a run must reach first: no
      ``RLIMIT_NPROC``, and ``RLIMIT_AS`` only as a backstop against absurd address-space
      reservations, ``memory_mb`` *above* what this process has mapped now (the pre-imported
      libraries' mappings cost the run nothing);
    * otherwise (the fallback), ``RLIMIT_AS`` of ``memory_mb`` per process and
      ``RLIMIT_NPROC``.
    """

    def cap(kind: int, soft: int, hard: int | None = None) -> None:
        _, old_hard = resource.getrlimit(kind)
        hard = soft if hard is None else hard
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        resource.setrlimit(kind, (soft, hard))

    # RLIMIT_CPU counts whole seconds of the process's whole life, the warm-up before the run
    # included: the run gets its limit rounded to the nearest second (at least one)
    cpu = max(1, math.floor(float(limits["cpu_time_s"]) + cpu_before + 0.5))
    cap(resource.RLIMIT_CPU, cpu, cpu + 1)
    cap(resource.RLIMIT_FSIZE, int(limits["max_file_mb"]) * _MB)
    cap(resource.RLIMIT_CORE, 0)
    if str(limits.get("budget", "rlimit")).startswith("cgroup"):
        cap(resource.RLIMIT_AS, _mapped_bytes() + int(limits["memory_mb"]) * _MB)
        return
    cap(resource.RLIMIT_AS, int(limits["memory_mb"]) * _MB)
    nproc = int(limits["max_processes"])
    if uid is None:  # unprivileged: the limit counts every process of our own user
        nproc += count_uid_processes(os.getuid())
    cap(resource.RLIMIT_NPROC, nproc)


def _mapped_bytes() -> int:
    """This process's address-space size now (``VmSize``), 0 when unknown."""
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def wipe_cmdline(title: str) -> None:
    """Replace the command line inherited from the worker (the bootstrap code, the package
    path and its configuration) in this process's memory, so ``/proc/<pid>/cmdline`` shows
    only ``title``. Best effort."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (fields 48, 49)
        text = f"{title}\0".encode()
        if end - start <= len(text):
            return
        ctypes.memset(start, 0, end - start)
        ctypes.memmove(start, text, len(text))
        # A last byte that is not NUL tells the kernel the title was rewritten (as
        # setproctitle does): /proc then shows the area up to its first NUL only.
        ctypes.memset(end - 1, 0x20, 1)
    except (OSError, ValueError, IndexError):
        pass


def _drop_privileges(uid: int) -> None:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def _prepare_python(main: str, work_dir: str, env: Mapping[str, str]) -> None:
    os.environ.clear()
    os.environ.update(env)
    os.umask(0o022)
    sys.argv = [main]
    sys.path.insert(0, work_dir)
    for name in [n for n in sys.modules if n == "costeer_lab" or n.startswith("costeer_lab.")]:
        del sys.modules[name]  # the worker's own modules and placeholders: not the run's world
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    out = io.FileIO(1, "w", closefd=False)
    err = io.FileIO(2, "w", closefd=False)
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(out), encoding="utf-8")
    sys.stderr = io.TextIOWrapper(
        io.BufferedWriter(err), encoding="utf-8", errors="backslashreplace", line_buffering=True
    )
    for name in ("stdin", "stdout", "stderr"):  # what a fresh interpreter would have
        setattr(sys, f"__{name}__", getattr(sys, name))


def _netns_outside(host_netns_fd: int | None) -> set[int | None]:
    """The network namespaces a run without network must have left: the one it was forked in
    (the worker's) and the host's."""
    host = None
    if host_netns_fd is not None:
        with contextlib.suppress(OSError):
            host = os.fstat(host_netns_fd).st_ino
    return {netns_id(), host}


def _lock_and_verify(
    limits: Mapping[str, Any], outside: set[int | None], view: bool, strict: bool
) -> dict[str, bool | None]:
    """The last steps before candidate code: the keyring filter, then the checks of
    ``_verify.py``. Raises :class:`IsolationCheckFailed` when ``strict`` and a check failed."""
    problem = ""
    try:
        deny_keyrings()
        if limits.get("single_process"):
            deny_new_processes()
    except SeccompUnavailable as exc:
        problem = f" ({exc})"
    facts = verify(network=bool(limits["network"]), outside_netns=outside, view=view)
    missing = shortfalls(facts)
    if strict and missing:
        raise IsolationCheckFailed("; ".join(missing) + problem)
    return facts


def _setup(
    req: Mapping[str, Any],
    host_netns_fd: int | None,
    view_root: str | None,
    cpu_before: float,
    strict: bool,
) -> tuple[str, dict[str, bool | None]]:
    """Lock the process down for request ``req``; return the main file's path as the run sees
    it and the verified facts of its isolation (``strict``: refuse when one does not hold)."""
    _reset_signals()
    os.setsid()
    outside = _netns_outside(host_netns_fd)
    limits = req["limits"]
    if limits["network"]:
        if host_netns_fd is None:
            raise RuntimeError("Limits(network=True) needs a root sandbox (host network handle)")
        setns(host_netns_fd, CLONE_NEWNET)
    _redirect(req["run_dir"])
    uid: int | None = req.get("uid")
    work_dir: str = req["work_dir"]
    if uid is not None:
        _give_tree(work_dir, uid, set(req.get("read_only", ())))
    env = dict(req["env"])
    main = str(req["main"])
    _set_limits(limits, uid, cpu_before)  # counts the user's processes while /proc is the host's
    if view_root is not None:  # a network namespace of its own: no network, no abstract sockets
        unshare(CLONE_NEWNS | CLONE_NEWIPC | (0 if limits["network"] else CLONE_NEWNET))
        enter(view_root, work_dir, int(limits.get("tmp_mb", 256)))
        main = os.path.join(WORK_DIR, os.path.relpath(main, work_dir))
        work_dir = WORK_DIR
        env.update(HOME=WORK_DIR, TMPDIR="/tmp")
    else:
        os.chdir(work_dir)
    if uid is not None:
        _drop_privileges(uid)
    elif view_root is not None:  # a user namespace of our own: every capability to give up
        drop_capabilities()
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    with contextlib.suppress(OSError):  # after the uid change, which clears it
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    wipe_cmdline(f"python {os.path.basename(main)}")
    _prepare_python(main, work_dir, env)
    return main, _lock_and_verify(limits, outside, view_root is not None, strict)


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _print_candidate_traceback(exc: BaseException) -> None:
    """Print the traceback without the frames of this runner and of ``runpy``."""
    tb = exc.__traceback__
    while tb is not None and (
        tb.tb_frame.f_code.co_filename == __file__
        or tb.tb_frame.f_code.co_filename.startswith("<frozen runpy")
    ):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def _shut_down_like_python() -> None:
    """What a normal interpreter exit does before ``os._exit``: wait for non-daemon threads,
    then run ``atexit`` handlers."""
    import atexit
    import threading

    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()


def _setup_failure(exc: BaseException) -> bytes:
    if isinstance(exc, IsolationCheckFailed):
        return f"sandbox refused to run the code: isolation check failed: {exc}".encode()
    return f"sandbox set-up failed: {exc!r}".encode()


def run_child(
    req: Mapping[str, Any],
    status_fd: int,
    host_netns_fd: int | None,
    view_root: str | None,
    *,
    strict: bool = False,
) -> NoReturn:
    """Set up isolation for request ``req`` and execute its main file as ``__main__``
    (``strict``: full isolation was promised, refuse to run when a check fails)."""
    code = 1
    cpu_before = _cpu_used()  # the spare's warm-up is not the run's
    try:
        try:
            main, facts = _setup(req, host_netns_fd, view_root, cpu_before, strict)
            ready = f"{READY_MARK}{cpu_before:.6f} {json.dumps(facts)}\n"
            os.write(status_fd, ready.encode())
        except BaseException as exc:
            os.write(status_fd, _setup_failure(exc)[:4000])
            os._exit(SETUP_FAILED_EXIT)
        # Nothing but the candidate's own stdio stays open: the status pipe closes here.
        os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        code = 0
        try:
            runpy.run_path(main, run_name="__main__")
        except SystemExit as exc:
            code = _exit_code(exc.code)
        except BaseException as exc:
            code = 1
            try:
                _print_candidate_traceback(exc)
            except BaseException:
                os.write(2, b"\nuncaught exception (the traceback could not be printed)\n")
        with contextlib.suppress(BaseException):
            _shut_down_like_python()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
    finally:
        os._exit(code)


def wait_and_run(
    req_fd: int,
    status_fd: int,
    host_netns_fd: int | None,
    view_root: str | None,
    keep: set[int | None],
    *,
    warm: bool = True,
    warm_rounds: int = 2,
    strict: bool = False,
) -> NoReturn:
    """Body of a pre-forked spare child: drop the worker's descriptors, warm up while idle
    (``warm``, see :mod:`._warm`), wait for the request (read to EOF), then :func:`run_child`
    it (``strict``, see :func:`run_child`); exit quietly when the worker closes the pipe."""
    try:
        with contextlib.suppress(OSError):
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd > 2 and fd not in keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if warm:
            idle_warm_up(req_fd, rounds=warm_rounds)
        chunks = []
        while chunk := os.read(req_fd, 1 << 16):
            chunks.append(chunk)
        if not chunks:
            os._exit(0)
        req = json.loads(b"".join(chunks))
        os.close(req_fd)
    except BaseException:
        os._exit(SETUP_FAILED_EXIT)
    run_child(req, status_fd, host_netns_fd, view_root, strict=strict)
