"""The sandbox worker: a long-lived, single-threaded server that forks one child per run.

Started by :class:`~costeer_lab.sandbox.Sandbox` through the small bootstrap in ``_proc.py``
with a scrubbed environment. ``_bootstrap.py`` has already moved it into new mount, PID, IPC and
network namespaces (through a user namespace when not root). It pre-imports the allowlisted
libraries once, builds the read-only filesystem view of runs (``_view.py``), keeps one child
pre-forked, and serves JSON lines on stdin/stdout:

* request ``{"op": "run", "id", "run_dir", "work_dir", "main", "read_only", "limits", "env",
  "collect"}`` (``collect``: output name → byte cap)
* response ``{"id", "returncode", "signal", "timed_out", "cpu_limit", "process_limit_hit",
  "memory_exceeded", "budget", "budget_events", "work_area", "output_problems", "duration_s",
  "cpu_s", "maxrss_kb", "network_isolated", "isolation", "verified",
  "error"}``

Budgets come from the kernel. Where the worker may create cgroups (``_cgroup.py``), each run
gets one, with ``memory_mb`` and ``max_processes`` for the run as a whole; the spare is moved
into it before its request is written, and ``memory_exceeded`` / ``process_limit_hit`` are the
cgroup's own event counters read after the run. Elsewhere the child's per-process rlimits are
the fallback (``budget: "rlimit"``). Each run also works in a private tmpfs of ``work_mb``
(``_area.py``) mounted in the worker's mount namespace, so no run can fill a shared disk.

Every child is forked into a PID namespace of its own, beside a small init that is the
namespace's process 1 (see :meth:`_Worker._spawn_init` for why it must be unusable to the run):
when the init is killed, the kernel kills whatever the run started. The outcome of a run comes
from the kernel only — the wait status and resource usage of ``wait4`` and the worker's own
timers. The child's status pipe carries set-up errors, or a ready line with the isolation facts
the child verified from inside (``_verify.py``), and is closed before candidate code runs, so
nothing the candidate writes can change its verdict. A response's ``isolation`` is the level
the child verified for that run, never only the level the worker intended. When root, each run
also gets its own unprivileged uid (a slot claimed with ``flock`` so several workers on one
machine never share one), swept after the run. The worker exits when stdin closes, killing
whatever still runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import importlib
import json
import os
import selectors
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, NoReturn

from costeer_lab.sandbox._area import Area, open_area
from costeer_lab.sandbox._bootstrap import rearm_parent_death
from costeer_lab.sandbox._cgroup import Budget, RunCgroup, discover
from costeer_lab.sandbox._child import READY_MARK, SETUP_FAILED_EXIT, wait_and_run, wipe_cmdline
from costeer_lab.sandbox._ns import (
    CLONE_NEWPID,
    PR_SET_DUMPABLE,
    PR_SET_PDEATHSIG,
    count_uid_processes,
    detach,
    prctl,
    setns,
    sweep_uid,
    unshare,
)
from costeer_lab.sandbox._verify import shortfalls
from costeer_lab.sandbox._view import build
from costeer_lab.sandbox._warm import run_steps

__all__ = ["main"]

_STATUS_KEEP = 1 << 16  # bytes of a status pipe kept (set-up error text or the ready line)


@dataclass
class _Spare:
    """A pre-forked child waiting for its request, and the init of its PID namespace."""

    pid: int
    req_w: int
    status_r: int
    init_pid: int | None


@dataclass
class _Run:
    req_id: int
    pid: int
    init_pid: int | None
    uid: int | None
    lock_fd: int | None
    status_fd: int
    start: float
    deadline: float
    limits: dict[str, Any]
    timed_out: bool = False
    process_limit_hit: bool = False
    status: bytes = b""
    registered: bool = True
    verified: dict[str, Any] | None = None  # the facts of the child's ready line
    cgroup: RunCgroup | None = None
    area: Area | None = None
    run_dir: str = ""
    collect: dict[str, int] | None = None
    notes: list[str] | None = None


class _Worker:
    def __init__(self, config: dict[str, Any], namespaces: dict[str, Any]) -> None:
        self.config = config
        self.proto_in = os.dup(0)
        self.proto_out = os.dup(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)  # stray prints of imported libraries go to the worker log, not the protocol
        self.is_root = os.geteuid() == 0
        self.runs: dict[int, _Run] = {}
        self.spare: _Spare | None = None
        self.buffer = b""
        self.import_errors: dict[str, str] = {}
        for name in config.get("preimport", []):
            try:
                importlib.import_module(name)
            except Exception as exc:  # reported in the ready line, not fatal
                self.import_errors[name] = repr(exc)
        if "pandas" in sys.modules:
            _warm_pandas(self.import_errors)
        gc.collect()
        gc.freeze()  # children never scan the inherited objects, so they share those pages
        self.host_netns_fd: int | None = namespaces.get("host_netns_fd")
        self.pidns_fd: int | None = None
        self.view_root: str | None = None
        # Tests only (never set by Sandbox): a dumpable init even without uid separation, the
        # hole the child's isolation check must refuse (tests/sandbox/test_rootless.py)
        self._test_only_dumpable_init = bool(config.get("test_only_dumpable_init"))
        self.iso = self._isolate(namespaces)
        self.budget: Budget | None = None
        self.budget_notes: list[str] = []
        self.stale_cgroups: list[RunCgroup] = []
        if config.get("use_cgroups", True):
            self.budget, self.budget_notes = discover(f"costeer-sbx-{_host_pid()}")
        else:
            self.budget_notes.append("cgroups turned off (SandboxSettings.use_cgroups)")
        if self.is_root:
            os.makedirs(config["lock_dir"], mode=0o700, exist_ok=True)
            self._sweep_orphans()
        self.wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(wake_w)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proto_in, selectors.EVENT_READ, "proto")
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")

    def _isolate(self, namespaces: dict[str, Any]) -> dict[str, Any]:
        """Build the view and check that runs can get PID namespaces of their own; return the
        isolation report of the ready line (``level`` is ``"full"`` only when all of it
        worked)."""
        notes: list[str] = list(namespaces.get("notes", []))
        iso: dict[str, Any] = {
            "level": "none",
            "namespaces": bool(namespaces.get("namespaces")),
            "user_namespace": bool(namespaces.get("user_namespace")),
            "uid_separation": self.is_root,
            "view": False,
            "pid_namespace_per_run": False,
            "network_isolated": bool(namespaces.get("namespaces")),
            "notes": notes,
        }
        if not iso["namespaces"]:
            return iso
        try:
            self.pidns_fd = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
            setns(self.pidns_fd, CLONE_NEWPID)
            unshare(CLONE_NEWPID)
            iso["pid_namespace_per_run"] = True
        except OSError as exc:
            notes.append(f"no PID namespace per run: {exc}")
            self.pidns_fd = None
        view = self.config.get("view")
        if view:
            root = tempfile.mkdtemp(prefix="costeer-sbx-view-", dir=self.config.get("tmp_dir"))
            try:
                build(root, view, int(self.config["uid_base"]))
                self.view_root = root
                iso["view"] = True
                iso["view_root"] = root
            except OSError as exc:
                notes.append(f"filesystem view unavailable: {exc}")
                with contextlib.suppress(OSError):
                    os.rmdir(root)
        else:
            notes.append("no filesystem view was asked for")
        if iso["view"] and iso["pid_namespace_per_run"]:
            iso["level"] = "full"
        else:
            iso["level"] = "partial"
        return iso

    # -- uid slots ---------------------------------------------------------------------------
    def _slot_uids(self) -> range:
        base = int(self.config["uid_base"])
        return range(base, base + int(self.config["uid_slots"]))

    def _try_lock(self, uid: int) -> int | None:
        path = os.path.join(self.config["lock_dir"], f"{uid}.lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        return fd

    def _claim_slot(self) -> tuple[int, int] | None:
        for uid in self._slot_uids():
            fd = self._try_lock(uid)
            if fd is not None:
                return uid, fd
        return None

    def _sweep_orphans(self) -> None:
        """Kill processes left by a dead worker in slots nobody holds now."""
        for uid in self._slot_uids():
            if count_uid_processes(uid) == 0:
                continue
            fd = self._try_lock(uid)
            if fd is not None:
                _sweep(uid)
                os.close(fd)

    # -- protocol ----------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        while data:
            data = data[os.write(self.proto_out, data) :]

    def _read_requests(self) -> bool:
        chunk = os.read(self.proto_in, 1 << 16)
        if not chunk:
            return False
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            if line.strip():
                self._handle_line(line)
        return True

    def _handle_line(self, line: bytes) -> None:
        try:
            req = json.loads(line)
        except ValueError as exc:
            print(f"sandbox worker: malformed request ignored: {exc}", file=sys.stderr)
            return
        try:
            self._handle(req)
        except Exception as exc:  # report to the caller, keep serving the others
            self.send(
                {"id": req.get("id"), "error": f"sandbox worker could not start run: {exc!r}"}
            )

    def _handle(self, req: dict[str, Any]) -> None:
        if req.get("op") == "ping":
            self.send({"id": req["id"], "pong": True, "running": len(self.runs)})
            return
        uid = lock_fd = None
        if self.is_root:
            slot = self._claim_slot()
            if slot is None:
                self.send({"id": req["id"], "error": "no free sandbox uid slot"})
                return
            uid, lock_fd = slot
            _sweep(uid)
        req["uid"] = uid
        limits = req["limits"]
        notes: list[str] = []
        run_dir = str(req["run_dir"])
        area = self._open_area(req, notes)
        try:
            spare = self.spare or self._fork_spare()
        except OSError:
            if lock_fd is not None:
                os.close(lock_fd)
            if area is not None:
                area.close()
            raise
        self.spare = None
        cgroup = self._enter_cgroup(spare.pid, limits, notes)
        limits["budget"] = cgroup.mode if cgroup is not None else "rlimit"  # for the child
        # without a cgroup, one process: its rlimits then bound the whole run (_seccomp.py)
        limits["single_process"] = cgroup is None and bool(
            self.config.get("single_process_without_cgroup", True)
        )
        try:
            data = json.dumps(req).encode()
            while data:
                data = data[os.write(spare.req_w, data) :]
        except OSError:  # the spare died waiting: nothing of the run to keep
            _abandon(spare, area, cgroup, lock_fd)
            raise
        os.close(spare.req_w)  # the spare reads to EOF, then runs the request
        now = time.monotonic()
        deadline = now + float(limits["wall_time_s"])
        run = _Run(
            req["id"], spare.pid, spare.init_pid, uid, lock_fd, spare.status_r, now, deadline,
            limits, cgroup=cgroup, area=area, run_dir=run_dir,
            collect={str(k): int(v) for k, v in dict(req.get("collect") or {}).items()},
            notes=notes,
        )  # fmt: skip
        self.runs[spare.pid] = run
        self.sel.register(spare.status_r, selectors.EVENT_READ, run)
        # Fork the next child now: it warms up on an idle core while this run executes.
        with contextlib.suppress(OSError):
            self.spare = self._fork_spare()

    def _open_area(self, req: dict[str, Any], notes: list[str]) -> Area | None:
        """Mount the run's private work area and point the request at it (work directory,
        main file, capture files); ``None`` (the run works in ``run_dir/work`` on disk, as
        noted) where the worker has no mount namespace of its own or the mount fails."""
        if not self.iso["namespaces"]:
            notes.append("no private work area: the worker has no mount namespace")
            return None
        work = str(req["work_dir"])
        try:
            area = open_area(
                str(req["run_dir"]), work, req.get("read_only", ()),
                int(req["limits"].get("work_mb", 512)),
            )  # fmt: skip
        except OSError as exc:
            notes.append(f"no private work area: {exc}")
            return None
        req["main"] = os.path.join(area.work, os.path.relpath(str(req["main"]), work))
        req["work_dir"] = area.work
        req["run_dir"] = area.capture  # where the child opens stdout and stderr
        return area

    def _enter_cgroup(
        self, pid: int, limits: dict[str, Any], notes: list[str]
    ) -> RunCgroup | None:
        """Create the run's cgroup and move the spare ``pid`` into it. The spare is blocked
        reading its request, so none of the candidate's code has run yet. ``None`` (rlimits
        only, as noted) when the machine offers no cgroup or this one fails."""
        if self.budget is None:
            return None
        try:
            cgroup = self.budget.create(int(limits["memory_mb"]), int(limits["max_processes"]))
        except OSError as exc:
            notes.append(f"no cgroup for this run: {exc}")
            return None
        try:
            cgroup.add(pid)
        except OSError as exc:
            notes.append(f"no cgroup for this run: {exc}")
            cgroup.remove(wait_s=0)
            return None
        return cgroup

    def _fork_spare(self) -> _Spare:
        """Fork a child that waits for its request, in a new PID namespace whose process 1 is
        a small init of its own (so the run is an ordinary process: signals it sends itself
        act as usual; killing the init ends everything the run started)."""
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        init_pid = None
        if self.pidns_fd is not None:
            setns(self.pidns_fd, CLONE_NEWPID)
            unshare(CLONE_NEWPID)
            init_pid = self._spawn_init()
        req_r, req_w = os.pipe2(os.O_CLOEXEC)
        status_r, status_w = os.pipe2(os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            keep = {req_r, status_w, self.host_netns_fd}
            warm = bool(self.config.get("warm_spares", True))
            rounds = int(self.config.get("warm_up_rounds", 2))
            wait_and_run(
                req_r, status_w, self.host_netns_fd, self.view_root, keep,
                warm=warm, warm_rounds=rounds, strict=self.iso["level"] == "full",
            )  # fmt: skip
        os.close(req_r)
        os.close(status_w)
        os.set_blocking(status_r, False)
        return _Spare(pid, req_w, status_r, init_pid)

    def _spawn_init(self) -> int:
        """Start process 1 of the new PID namespace.

        The run shares its PID namespace with the init, and the kernel lets a process use
        another one's ``/proc/<pid>/root`` (the init's root is the worker's: the host's
        filesystem), ``environ``, memory and ``ptrace`` when both have the same uid and the
        target is *dumpable*; ``hidepid=2`` hides exactly the processes that check fails for.
        ``exec`` makes a process dumpable again. So:

        * runs with uids of their own (root: a slot uid per run) cannot use a root-owned init:
          ``sleep`` started with ``posix_spawn`` (no copy of the worker's page tables, unlike a
          fork; it ignores signals from inside its namespace like any init, and the zombies it
          never reaps die with it) is enough;
        * runs that share the worker's uid (rootless) get the forked :func:`namespace_init`,
          which makes itself non-dumpable before anything else (a fork of the worker: about
          1.5 ms of its time per run, spent while the previous run executes).

        The child checks the result before running candidate code (``_verify.py``).
        """
        sleep = self.config.get("sleep_path")
        if sleep and (self.is_root or self._test_only_dumpable_init):
            null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
            try:
                return os.posix_spawn(sleep, ["sandbox-init", "infinity"], {}, file_actions=null)
            except OSError:
                pass
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            namespace_init()
        return pid

    def _drop_spare(self) -> None:
        if self.spare is not None:
            spare, self.spare = self.spare, None
            os.close(spare.req_w)  # EOF: the spare exits
            os.close(spare.status_r)
            _kill_init(spare.init_pid)

    # -- lifecycle of runs -------------------------------------------------------------------
    def _kill(self, run: _Run) -> None:
        with contextlib.suppress(OSError):
            os.killpg(run.pid, signal.SIGKILL)
        if run.cgroup is not None:
            run.cgroup.kill()
        _kill_init(run.init_pid)
        if run.uid is not None:
            if count_uid_processes(run.uid) >= int(run.limits["max_processes"]):
                run.process_limit_hit = True
            _sweep(run.uid)

    def _read_status(self, run: _Run) -> None:
        """Read what the child wrote to its status pipe during set-up (an error text, or the
        ready line with the CPU seconds it had used before the run). The child closes the pipe
        before the candidate's code runs; the run ends only when the kernel says so."""
        while True:
            try:
                chunk = os.read(run.status_fd, 8192)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                if run.registered:
                    self.sel.unregister(run.status_fd)
                    run.registered = False
                return
            run.status = (run.status + chunk)[:_STATUS_KEEP]

    def _reaped(self, run: _Run, status: int, usage: Any) -> None:
        self._read_status(run)
        del self.runs[run.pid]
        if os.WIFSIGNALED(status):
            code, sig = None, os.WTERMSIG(status)
        else:
            code, sig = os.WEXITSTATUS(status), None
        text = run.status.decode(errors="replace")
        cpu_before, run.verified = _parse_ready(text)
        cpu = max(0.0, float(usage.ru_utime + usage.ru_stime) - cpu_before)
        error = text if (code == SETUP_FAILED_EXIT and not text.startswith(READY_MARK)) else None
        self._finish(run, code, sig, cpu, int(usage.ru_maxrss), error or None)

    def _finish(
        self, run: _Run, code: int | None, sig: int | None, cpu: float, rss: int, error: str | None
    ) -> None:
        elapsed = time.monotonic() - run.start
        if run.registered:
            self.sel.unregister(run.status_fd)
        os.close(run.status_fd)
        if run.uid is not None:
            failed = code != 0 or sig is not None
            limit = int(run.limits["max_processes"]) - 1
            if failed and not run.timed_out and count_uid_processes(run.uid) >= limit:
                run.process_limit_hit = True
            _sweep(run.uid)
        else:
            with contextlib.suppress(OSError):
                os.killpg(run.pid, signal.SIGKILL)
        _kill_init(run.init_pid)  # its PID namespace ends: whatever the run left dies
        events = self._budget_events(run)
        work_area, output_problems = self._copy_out(run, error)
        if run.lock_fd is not None:
            os.close(run.lock_fd)
        cpu_limit = sig == signal.SIGXCPU or (
            sig == signal.SIGKILL and not run.timed_out and cpu >= float(run.limits["cpu_time_s"])
        )
        self.send(
            {
                "id": run.req_id,
                "returncode": code,
                "signal": sig,
                "timed_out": run.timed_out,
                "cpu_limit": cpu_limit,
                "process_limit_hit": run.process_limit_hit or events.get("pids_max", 0) > 0,
                "memory_exceeded": events.get("oom_kill", 0) > 0,
                "budget": run.cgroup.mode if run.cgroup is not None else "rlimit",
                "budget_events": events,
                "budget_notes": run.notes or [],
                "work_area": work_area,
                "output_problems": output_problems,
                "duration_s": elapsed,
                "cpu_s": cpu,
                "maxrss_kb": rss,
                "network_isolated": self._isolated(run),
                "isolation": self._verified_level(run),
                "verified": run.verified,
                "error": error,
            }
        )
        self._release(run)
        if self.spare is None:  # e.g. the fork at the start of the run failed
            with contextlib.suppress(OSError):
                self.spare = self._fork_spare()

    def _verified_level(self, run: _Run) -> str:
        """The isolation the run had: the worker's level when its child verified every fact of
        it before running the code (``_verify.py``), ``"partial"`` when one did not hold (only
        possible with weak isolation accepted: under a full worker the child refuses), and
        ``"unverified"`` when no ready line came (the child never ran the code)."""
        level = str(self.iso["level"])
        if run.verified is None:
            return "unverified"
        if level == "full" and shortfalls(run.verified):
            return "partial"
        return level

    def _budget_events(self, run: _Run) -> dict[str, int]:
        """Kill what is left in the run's cgroup and read its events: the kernel's account of
        the run's memory and processes."""
        if run.cgroup is None:
            return {}
        run.cgroup.kill()
        return run.cgroup.events()

    def _copy_out(self, run: _Run, error: str | None) -> tuple[str, dict[str, str]]:
        """Copy the requested outputs and the capture files of a run out of its work area to
        the run directory. Returns ``("tmpfs" or "disk", refused outputs → reason)``."""
        area = run.area
        if area is None:
            return "disk", {}
        problems: dict[str, str] = {}
        try:
            if error is None:  # else set-up failed: no output to look at
                problems = area.collect(run.collect or {}, os.path.join(run.run_dir, "out"))
            area.copy_captures(run.run_dir, int(run.limits["max_output_bytes"]))
        except OSError as exc:
            why = f"not copied out of the work area: {exc}"
            problems = {name: why for name in run.collect or {}}
        return "tmpfs", problems

    def _release(self, run: _Run) -> None:
        """Unmount the run's work area and remove its cgroup (after the answer is sent: the
        caller does not wait for this). A cgroup whose last processes are still exiting is
        removed at a later run."""
        if run.area is not None:
            run.area.close()
        if run.cgroup is not None:
            self.stale_cgroups.append(run.cgroup)
        self.stale_cgroups = [cg for cg in self.stale_cgroups if not cg.remove(wait_s=0)]

    def _isolated(self, run: _Run) -> bool:
        """Whether the run had no network: runs asking for it rejoin the host namespace when
        the worker kept a handle on it (root); otherwise they stay isolated."""
        if not self.iso["network_isolated"]:
            return False
        return not (run.limits["network"] and self.host_netns_fd is not None)

    def _reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            run = self.runs.get(pid)
            if run is not None:
                self._reaped(run, status, usage)
            elif self.spare is not None and pid == self.spare.pid:
                self._drop_spare()  # died waiting (killed from outside): fork a new one later

    def _check_deadlines(self) -> None:
        now = time.monotonic()
        for run in list(self.runs.values()):
            if not run.timed_out and now >= run.deadline:
                run.timed_out = True
                self._kill(run)

    def shutdown(self) -> None:
        self._drop_spare()
        for run in list(self.runs.values()):
            self._kill(run)
        self._reap()
        for run in self.runs.values():  # killed, not reaped yet
            if run.area is not None:
                run.area.close()
            if run.cgroup is not None:
                self.stale_cgroups.append(run.cgroup)
        self.stale_cgroups = [cg for cg in self.stale_cgroups if not cg.remove()]
        if self.budget is not None:
            self.budget.close()
        if self.view_root is not None:
            with contextlib.suppress(OSError):
                detach(self.view_root)
                os.rmdir(self.view_root)

    def serve(self) -> None:
        with contextlib.suppress(OSError):
            self.spare = self._fork_spare()
        mode = self.budget.mode if self.budget is not None else "rlimit"
        budget = {"mode": mode, "notes": self.budget_notes}
        self.send(
            {"ready": True, "pid": _host_pid(), "import_errors": self.import_errors,
             "isolation": self.iso, "budget": budget}
        )  # fmt: skip
        while True:
            pending = [r.deadline for r in self.runs.values() if not r.timed_out]
            timeout = 5.0 if not pending else max(0.0, min(pending) - time.monotonic())
            for key, _ in self.sel.select(min(timeout, 5.0)):
                if isinstance(key.data, _Run):
                    if self.runs.get(key.data.pid) is key.data and key.data.registered:
                        self._read_status(key.data)
                elif key.data == "proto":
                    if not self._read_requests():
                        self.shutdown()
                        return
                else:
                    try:
                        while os.read(self.wake_r, 4096):
                            pass
                    except BlockingIOError:
                        pass
            self._reap()
            self._check_deadlines()


def _parse_ready(text: str) -> tuple[float, dict[str, Any] | None]:
    """The CPU seconds the child used before its run and the facts it verified, from its ready
    line ``READY_MARK cpu_s {facts}`` (``(0.0, None)`` when there is none: set-up failed)."""
    if not text.startswith(READY_MARK):
        return 0.0, None
    cpu_text, _, facts_text = text[len(READY_MARK) :].partition(" ")
    try:
        cpu_before = float(cpu_text)
    except ValueError:
        cpu_before = 0.0
    try:
        facts = json.loads(facts_text)
    except ValueError:
        return cpu_before, None
    return cpu_before, facts if isinstance(facts, dict) else None


def _abandon(
    spare: _Spare, area: Area | None, cgroup: RunCgroup | None, lock_fd: int | None
) -> None:
    """Release what a run that could not start held (its spare is dead or is killed)."""
    if area is not None:
        area.close()
    if cgroup is not None:
        cgroup.remove()
    if lock_fd is not None:
        os.close(lock_fd)
    os.close(spare.req_w)
    os.close(spare.status_r)
    with contextlib.suppress(OSError):
        os.kill(spare.pid, signal.SIGKILL)
    _kill_init(spare.init_pid)


def _kill_init(pid: int | None) -> None:
    if pid is not None:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def namespace_init() -> NoReturn:
    """Body of process 1 of a run's PID namespace: hold nothing, reap orphans, never exit on
    its own (the worker kills it after the run, which ends the namespace). Not dumpable, so a
    run that shares its uid can neither trace it nor see it in its ``hidepid`` ``/proc``."""
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        prctl(PR_SET_DUMPABLE, 0)
        wipe_cmdline("sandbox-init")
        os.closerange(3, 1 << 16)
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                time.sleep(0.2)
    finally:
        os._exit(0)


def _host_pid() -> int:
    """This process's id as the caller sees it (the worker is process 1 of its own PID
    namespace; ``/proc`` is still the host's mount, whose ``self`` link names the host id)."""
    try:
        return int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return os.getpid()


def _sweep(uid: int) -> None:
    """Kill every process of ``uid``; re-arm the parent-death signal, which the temporary
    uid change of the sweep clears (and exit if the bootstrap died meanwhile)."""
    sweep_uid(uid)
    with contextlib.suppress(OSError):
        rearm_parent_death()


def _warm_pandas(errors: dict[str, str]) -> None:
    """Run the warm-up workload once (Parquet round trip, per-instrument rolling operators) so
    the lazy imports and first-call set-up happen here, once, instead of in every forked run."""
    try:
        run_steps(lambda: False)
    except Exception as exc:  # no Parquet engine: still a usable worker
        errors["pandas-warm-up"] = repr(exc)


def main(argv: list[str], namespaces: dict[str, Any] | None = None) -> int:
    config = json.loads(argv[1]) if len(argv) > 1 else {}
    config.setdefault("uid_base", 62000)
    config.setdefault("uid_slots", 64)
    config.setdefault("lock_dir", "/tmp/costeer-lab-sandbox-slots")
    worker = _Worker(config, namespaces or {})
    try:
        worker.serve()
    except KeyboardInterrupt:
        worker.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
