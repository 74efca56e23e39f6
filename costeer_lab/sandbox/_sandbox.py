"""The sandbox: run untrusted generated code in an isolated, resource-limited child process.

A long-lived worker (started once, the allowlisted libraries pre-imported) forks one child per
run. The child sees only a private filesystem view (``_view.py``: its work directory with
read-only copies of its inputs, the interpreter, the allowlisted libraries, private ``/tmp``),
is process 1 of its own PID namespace, has its own IPC and mount namespaces and no network,
runs under an unprivileged uid (as root) or without capabilities (in a user namespace), with
rlimits on CPU time, memory, processes and file size, a whitelisted environment, and the kernel
keyring calls refused (seccomp). Before the code runs, the child verifies that isolation from
inside and refuses to run the code when it does not hold (``_verify.py``); each result records
the verified level. Its outcome comes from the kernel. Where this isolation cannot be set up
the sandbox refuses to start, unless ``SandboxSettings.allow_weak_isolation`` says otherwise.
See ``_bootstrap.py``, ``_worker.py``, ``_child.py`` and ``_verify.py`` for the mechanics.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from costeer_lab._records import Workspace
from costeer_lab.errors import IsolationError, SandboxError
from costeer_lab.sandbox._allowlist import resolve
from costeer_lab.sandbox._fs import (
    WorkspaceWriteError,
    collect_outputs,
    mask_run_dirs,
    prepare_run_dir,
    read_capped,
    safe_relpath,
)
from costeer_lab.sandbox._limits import Limits, SandboxResult
from costeer_lab.sandbox._proc import WorkerProcess, minimal_env
from costeer_lab.sandbox._view import WORK_DIR, plan
from costeer_lab.settings import SandboxSettings, get_settings

__all__ = ["Sandbox", "shared_sandbox"]

_MEMORY_RE = re.compile(
    r"^(\w+\.)*_?\w*MemoryError\b|Cannot allocate memory|std::bad_alloc|out of memory", re.M
)
_NPROC_RE = re.compile(
    r"BlockingIOError|Resource temporarily unavailable|can't start new thread|fork: retry"
)


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


class Sandbox:
    """Run a :class:`~costeer_lab.Workspace` as ``__main__`` in an isolated child process.

    ``packages`` are the import names of the libraries a run may import besides the standard
    library (default: the ``packages`` setting, numpy, pandas and pyarrow); everything they
    require comes along, every other installed package stays invisible. ``preimport`` names
    the modules the worker imports once so that runs do not pay for them (pandas' Parquet
    engine included); only those of allowlisted packages are used.

    Thread-safe: several threads may call :meth:`run` at once (each run is its own child). In a
    process pool, create one sandbox per process (see :func:`shared_sandbox`). A killed worker
    is restarted on the next run; only the runs it was executing report the failure.

    Example:
        >>> with Sandbox(Limits(wall_time_s=10)) as sb:
        ...     r = sb.run(Workspace({"main.py": "open('o.txt','w').write('hi'); print(1)"}),
        ...                collect=["o.txt"])
        >>> r.ok, r.stdout, r.outputs["o.txt"]
        (True, '1\\n', b'hi')
    """

    def __init__(
        self,
        limits: Limits = Limits(),  # noqa: B008 - frozen, safe as a default
        *,
        preimport: Sequence[str] = ("numpy", "pandas", "pyarrow.parquet"),
        packages: Sequence[str] | None = None,
        settings: SandboxSettings | None = None,
    ) -> None:
        self.limits = limits
        self.settings = settings or get_settings().sandbox
        self.packages = tuple(self.settings.packages if packages is None else packages)
        allowed = set(self.packages)
        self.preimport = tuple(m for m in preimport if m.split(".")[0] in allowed)
        self._lock = threading.Lock()
        self._worker: WorkerProcess | None = None
        self._closed = False
        self._holder: list[WorkerProcess] = []  # the finalizer stops the worker if close() is
        weakref.finalize(self, _stop_workers, self._holder)  # never called

    # -- worker management -------------------------------------------------------------------
    def _config(self) -> dict[str, Any]:
        return {
            "preimport": list(self.preimport),
            "uid_base": self.settings.uid_base,
            "uid_slots": self.settings.uid_slots,
            "lock_dir": self.settings.lock_dir,
            "warm_spares": self.settings.warm_spares,
            "warm_up_rounds": self.settings.warm_up_rounds,
            "view": _planned_view(self.packages),
            "tmp_dir": self.settings.tmp_dir or tempfile.gettempdir(),
            "sleep_path": shutil.which("sleep"),
        }

    def _get_worker(self) -> WorkerProcess:
        with self._lock:
            if self._closed:
                raise SandboxError("this Sandbox is closed; create a new one")
            worker = self._worker
            if worker is not None and worker.owner_pid != os.getpid():
                worker = None  # inherited through fork: the parent process owns that worker
            elif worker is not None and not worker.alive:
                worker.kill()
                worker = None
            if worker is None:
                worker = WorkerProcess(self._config(), self.settings.start_timeout_s)
                iso = worker.info.get("isolation", {})
                if iso.get("level") != "full" and not self.settings.allow_weak_isolation:
                    worker.close()
                    notes = "; ".join(iso.get("notes", [])) or "unknown reason"
                    raise IsolationError(
                        f"the sandbox cannot isolate untrusted code here ({notes}); refusing "
                        "to run it. To accept weaker isolation (recorded with every result), "
                        "set COSTEER_LAB_SANDBOX__ALLOW_WEAK_ISOLATION=1 or pass "
                        "SandboxSettings(allow_weak_isolation=True)"
                    )
                self._worker = worker
                self._holder[:] = [worker]
            return worker

    def start(self) -> Sandbox:
        """Start the worker now instead of at the first run; returns ``self``."""
        self._get_worker()
        return self

    @property
    def worker_pid(self) -> int | None:
        """Process id of the current worker (``None`` before the first run)."""
        worker = self._worker
        return worker.pid if worker is not None and worker.alive else None

    @property
    def isolation(self) -> Mapping[str, Any]:
        """What isolation the worker achieved: ``level`` (``"full"``, ``"partial"``,
        ``"none"``), which namespaces, per-run uids, the filesystem view, and notes."""
        return dict(self._get_worker().info.get("isolation", {}))

    def close(self) -> None:
        """Stop the worker (killing any run still in flight). Idempotent."""
        with self._lock:
            self._closed = True
            worker, self._worker = self._worker, None
            self._holder.clear()
        if worker is not None and worker.owner_pid == os.getpid():
            worker.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- running -----------------------------------------------------------------------------
    def run(
        self,
        workspace: Workspace,
        *,
        inputs: Mapping[str, str | os.PathLike[str]] | None = None,
        collect: Sequence[str] = (),
        limits: Limits | None = None,
    ) -> SandboxResult:
        """Run ``workspace.main_file`` as ``__main__`` and collect the ``collect`` files.

        Args:
            workspace: the files to run (``main_file`` is executed).
            inputs: name in the run directory → source file or directory, copied read-only.
            collect: relative names of output files to return in ``SandboxResult.outputs``.
            limits: limits of this run (default: the sandbox's).

        Returns:
            A :class:`SandboxResult`; failures of the code are fields, never exceptions.

        Raises:
            InvalidInputError: an input source is missing, or an input or output name escapes
                the run directory (mistakes of the caller; the workspace's own bad paths are
                reported in the result).
            SandboxError: the worker cannot be started at all.
        """
        lim = limits or self.limits
        start = time.monotonic()
        for name in collect:
            safe_relpath(name, "output name")
        if workspace.main_file not in workspace.files:
            return _failure(f"main file {workspace.main_file!r} is not in the workspace", start)
        try:
            run_dir, work, read_only = prepare_run_dir(
                workspace, inputs or {}, self.settings.tmp_dir
            )
        except WorkspaceWriteError as exc:
            return _failure(str(exc), start)
        try:
            worker = self._get_worker()
            request = {
                "op": "run",
                "run_dir": str(run_dir),
                "work_dir": str(work),
                "main": str(work / workspace.main_file),
                "read_only": read_only,
                "limits": lim.to_dict(),
                "env": minimal_env(str(work)),
            }
            answer = worker.request(request, lim.wall_time_s + self.settings.response_grace_s)
            if answer is None:
                worker.kill()
                return _failure(
                    f"sandbox worker {worker.pid} did not answer within "
                    f"{lim.wall_time_s + self.settings.response_grace_s:.0f} s; it was restarted",
                    start,
                )
            if "worker_died" in answer or "returncode" not in answer:
                return _failure(answer.get("worker_died") or str(answer.get("error")), start)
            return _result(answer, run_dir, work, collect, lim)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)


def _stop_workers(holder: list[WorkerProcess]) -> None:
    for worker in holder:
        if worker.owner_pid == os.getpid():
            worker.close(timeout=2.0)
    holder.clear()


def _failure(error: str, start: float) -> SandboxResult:
    return SandboxResult(
        returncode=None, stdout="", stderr="", timed_out=False, memory_exceeded=False,
        process_limit_hit=False, killed_signal=None, output_truncated=False,
        network_isolated=False, duration_s=time.monotonic() - start, outputs={}, error=error,
    )  # fmt: skip


def _result(
    answer: Mapping[str, Any], run_dir: Path, work: Path, collect: Sequence[str], lim: Limits
) -> SandboxResult:
    stdout, cut_out = read_capped(run_dir / "stdout", lim.max_output_bytes)
    stderr, cut_err = read_capped(run_dir / "stderr", lim.max_output_bytes)
    stdout, stderr = (
        mask_run_dirs(text, work, run_dir, Path(WORK_DIR)) for text in (stdout, stderr)
    )
    outputs, problems = collect_outputs(work, collect, lim.max_file_mb * 1024 * 1024)
    code: int | None = answer["returncode"]
    sig: int | None = answer["signal"]
    failed = code != 0
    wall = bool(answer["timed_out"])
    cpu = bool(answer["cpu_limit"])
    memory = failed and not wall and bool(_MEMORY_RE.search(stderr))
    nproc = bool(answer["process_limit_hit"]) or bool(_NPROC_RE.search(stderr))
    error: str | None = answer.get("error")
    if error is None:
        if wall:
            error = f"wall-clock limit of {lim.wall_time_s:g} s exceeded; the run was killed"
        elif cpu:
            error = f"CPU-time limit of {lim.cpu_time_s:g} s exceeded; the run was killed"
        elif memory:
            error = f"memory limit of {lim.memory_mb} MB exceeded"
        elif nproc and failed:
            error = f"process limit of {lim.max_processes} reached"
        elif sig is not None:
            error = f"killed by {_signal_name(sig)}"
        elif not failed and problems:
            error = "missing or refused output file(s): " + ", ".join(problems)
    return SandboxResult(
        returncode=code,
        stdout=stdout,
        stderr=stderr,
        timed_out=wall or cpu,
        memory_exceeded=memory,
        process_limit_hit=nproc,
        killed_signal=sig,
        output_truncated=cut_out or cut_err,
        network_isolated=bool(answer["network_isolated"]),
        duration_s=float(answer["duration_s"]),
        outputs=outputs,
        error=error,
        missing_outputs=tuple(p.split(" (")[0] for p in problems),
        cpu_time_s=float(answer["cpu_s"]),
        max_rss_mb=float(answer["maxrss_kb"]) / 1024.0,
        isolation=str(answer.get("isolation", "")),
    )


_SHARED: dict[int, Sandbox] = {}
_SHARED_LOCK = threading.Lock()


def shared_sandbox() -> Sandbox:
    """The sandbox of this process, created on first use (one per process, also after a fork).

    Use it from process-pool tasks: each worker process starts its own sandbox worker once.

    Example:
        >>> shared_sandbox() is shared_sandbox()
        True
    """
    pid = os.getpid()
    with _SHARED_LOCK:
        sandbox = _SHARED.get(pid)
        if sandbox is None:
            _SHARED.clear()  # entries of a parent process (fork) are not ours to close
            sandbox = _SHARED[pid] = Sandbox()
            atexit.register(sandbox.close)
        return sandbox


def _planned_view(packages: Sequence[str]) -> dict[str, Any]:
    """The view of :func:`plan`, with a warning when part of the Python environment lies where
    runs cannot be shown it (under ``/proc`` or ``/sandbox``; under ``/tmp`` and the other
    private temporary directories each run binds it again)."""
    view = plan(resolve(packages))
    if view["hidden"]:
        warnings.warn(
            f"part of the Python environment lies where every sandboxed run mounts its own "
            f"directories: runs cannot see {', '.join(view['hidden'])} and can import only "
            "the modules loaded before they start (numpy, pandas, pyarrow); put the "
            "environment elsewhere",
            RuntimeWarning,
            stacklevel=3,
        )
    return view
