"""The sandbox: run untrusted generated code in an isolated, resource-limited child process.

A long-lived worker (started once, the allowlisted libraries pre-imported) forks one child per
run. The child sees only a private filesystem view (``_view.py``: its work directory with
read-only copies of its inputs, the interpreter, the allowlisted libraries, private ``/tmp``),
is process 1 of its own PID namespace, has its own IPC and mount namespaces and no network,
runs under an unprivileged uid (as root) or without capabilities (in a user namespace), with a
whitelisted environment and the kernel keyring calls refused (seccomp). Before the code runs,
the child verifies that isolation from inside and refuses to run the code when it does not hold
(``_verify.py``); each result records the verified level. Budgets come from the kernel: memory
and processes are bounded for the run as a whole by a cgroup where the worker can create one
(``_cgroup.py``; per-process rlimits as the fallback), it writes into a private size-limited
tmpfs (``_area.py``), and each output file it returns is capped before this process reads it.
Its outcome, memory and process limit hits included, comes from the kernel, never from what the
candidate prints. Where this isolation cannot be set up the sandbox refuses to start, unless
``SandboxSettings.allow_weak_isolation`` says otherwise. See ``_bootstrap.py``, ``_worker.py``,
``_child.py`` and ``_verify.py`` for the mechanics, ``_status.py`` for how an outcome becomes a
result.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from costeer_lab.errors import InvalidInputError, IsolationError, SandboxError
from costeer_lab.sandbox._allowlist import resolve
from costeer_lab.sandbox._fs import (
    OUTPUT_BUDGET_BYTES,
    RunFiles,
    WorkspaceWriteError,
    collect_outputs,
    mask_run_dirs,
    prepare_run_dir,
    read_capped,
    remove_tree,
    safe_relpath,
)
from costeer_lab.sandbox._limits import Limits, SandboxResult
from costeer_lab.sandbox._proc import WorkerProcess, minimal_env
from costeer_lab.sandbox._status import failure, result
from costeer_lab.sandbox._view import WORK_DIR, plan
from costeer_lab.settings import SandboxSettings, get_settings

__all__ = ["Sandbox", "shared_sandbox"]


class Sandbox:
    """Run a workspace (a :class:`RunFiles`, such as a :class:`~costeer_lab.Workspace`) in an
    isolated child process, its main file as ``__main__``.

    ``packages`` are the import names of the libraries a run may import besides the standard
    library (default: the ``packages`` setting, numpy, pandas and pyarrow); everything they
    require comes along, every other installed package stays invisible. ``preimport`` names
    the modules the worker imports once so that runs do not pay for them (pandas' Parquet
    engine included); only those of allowlisted packages are used.

    ``max_output_file_bytes`` is the default cap of each collected output file (at most
    :data:`~costeer_lab.sandbox._fs.OUTPUT_BUDGET_BYTES`, 256 MiB, which also bounds all the
    output files of one run together): a bigger file is refused without being read, so what a
    candidate writes never costs this process more than that budget (plus stdout and stderr,
    ``Limits.max_output_bytes`` each). :meth:`run` takes tighter caps per call.

    Thread-safe: several threads may call :meth:`run` at once (each run is its own child). In a
    process pool, create one sandbox per process (see :func:`shared_sandbox`). A killed worker
    is restarted on the next run; only the runs it was executing report the failure.

    Example:
        >>> from costeer_lab.records import Workspace
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
        max_output_file_bytes: int = OUTPUT_BUDGET_BYTES,
    ) -> None:
        self.limits = limits
        self.max_output_file_bytes = _check_cap(max_output_file_bytes, "max_output_file_bytes")
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
            "use_cgroups": self.settings.use_cgroups,
            "single_process_without_cgroup": self.settings.single_process_without_cgroup,
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
        workspace: RunFiles,
        *,
        inputs: Mapping[str, str | os.PathLike[str]] | None = None,
        collect: Sequence[str] = (),
        limits: Limits | None = None,
        max_output_file_bytes: int | Mapping[str, int] | None = None,
    ) -> SandboxResult:
        """Run ``workspace.main_file`` as ``__main__`` and collect the ``collect`` files.

        Args:
            workspace: the files to run (``main_file`` is executed).
            inputs: name in the run directory → source file or directory, copied read-only.
            collect: relative names of output files to return in ``SandboxResult.outputs``.
            limits: limits of this run (default: the sandbox's).
            max_output_file_bytes: byte cap of each collected file, or per name (names not
                given keep the sandbox's default); a bigger file is refused unread and listed
                in ``missing_outputs``. At most ``OUTPUT_BUDGET_BYTES``.

        Returns:
            A :class:`SandboxResult`; failures of the code are fields, never exceptions. So is
            any failure of this process once the run was requested (``error``).

        Raises:
            InvalidInputError: an input source is missing, an input or output name escapes
                the run directory, or a cap is out of range (mistakes of the caller; the
                workspace's own bad paths are reported in the result).
            SandboxError: the worker cannot be started at all.
        """
        lim = limits or self.limits
        start = time.monotonic()
        caps = self._caps(collect, max_output_file_bytes)
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
                "collect": caps,
            }
            return self._request(worker, request, run_dir, caps, lim, start)
        finally:
            if not remove_tree(run_dir):
                warnings.warn(f"sandbox: could not remove {run_dir}", RuntimeWarning, stacklevel=2)

    def _caps(
        self, collect: Sequence[str], caps: int | Mapping[str, int] | None
    ) -> dict[str, int]:
        """The byte cap of each requested output name (checked, in request order)."""
        default = self.max_output_file_bytes
        per_name: Mapping[str, int] = {}
        if isinstance(caps, int):
            default = _check_cap(caps, "max_output_file_bytes")
        elif caps is not None:
            per_name = caps
        out: dict[str, int] = {}
        for name in collect:
            safe_relpath(name, "output name")
            out[name] = _check_cap(per_name.get(name, default), f"cap of output {name!r}")
        return out

    def _request(
        self,
        worker: WorkerProcess,
        request: dict[str, Any],
        run_dir: Path,
        caps: Mapping[str, int],
        lim: Limits,
        start: float,
    ) -> SandboxResult:
        """Send the run to the worker and build its result; a failure of this process after
        the request (reading or parsing what the run left) becomes the result's ``error``."""
        grace = lim.wall_time_s + self.settings.response_grace_s
        try:
            answer = worker.request(request, grace)
            if answer is None:
                worker.kill()
                return _failure(
                    f"sandbox worker {worker.pid} did not answer within {grace:.0f} s; "
                    "it was restarted",
                    start,
                )
            if "worker_died" in answer or "returncode" not in answer:
                return _failure(answer.get("worker_died") or str(answer.get("error")), start)
            return _result(answer, run_dir, caps, lim)
        except Exception as exc:  # never let what a run left raise in the caller
            return _failure(f"sandbox could not read the run's outcome: {exc!r}", start)


def _stop_workers(holder: list[WorkerProcess]) -> None:
    for worker in holder:
        if worker.owner_pid == os.getpid():
            worker.close(timeout=2.0)
    holder.clear()


def _check_cap(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInputError(f"{what} must be a number of bytes >= 0, got {value!r}")
    if value > OUTPUT_BUDGET_BYTES:
        raise InvalidInputError(
            f"{what} of {value} bytes exceeds the output budget of {OUTPUT_BUDGET_BYTES} bytes"
        )
    return value


def _failure(error: str, start: float) -> SandboxResult:
    return failure(error, time.monotonic() - start)


def _result(
    answer: Mapping[str, Any], run_dir: Path, caps: Mapping[str, int], lim: Limits
) -> SandboxResult:
    """Read what the run left (stdout, stderr, outputs) and build its result (``_status.py``)."""
    work = run_dir / "work"
    stdout, cut_out = read_capped(run_dir / "stdout", lim.max_output_bytes)
    stderr, cut_err = read_capped(run_dir / "stderr", lim.max_output_bytes)
    stdout, stderr = (
        mask_run_dirs(text, work, run_dir / "area" / "work", run_dir, Path(WORK_DIR))
        for text in (stdout, stderr)
    )
    outputs, problems = _outputs(answer, run_dir, caps)
    return result(
        answer,
        stdout=stdout,
        stderr=stderr,
        stdout_cut=cut_out,
        stderr_cut=cut_err,
        outputs=outputs,
        problems=problems,
        limits=lim,
    )


def _outputs(
    answer: Mapping[str, Any], run_dir: Path, caps: Mapping[str, int]
) -> tuple[dict[str, bytes], list[str]]:
    """The collected outputs: from ``run_dir/out`` where the worker copied them out of the
    run's work area (it refused, unread, those past their caps), else from the work directory
    on disk; read under the same caps here."""
    if answer.get("work_area") != "tmpfs":
        return collect_outputs(run_dir / "work", caps)
    refused: Mapping[str, str] = answer.get("output_problems") or {}
    outputs, problems = collect_outputs(
        run_dir / "out", {n: c for n, c in caps.items() if n not in refused}
    )
    problems += [f"{name} ({why})" for name, why in refused.items() if name in caps]
    return outputs, problems


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
