"""Records of the sandbox: the :class:`Limits` of one run and its :class:`SandboxResult`.

Both are frozen dataclasses with no I/O. A ``SandboxResult`` is plain data: every failure of the
candidate (timeout, memory, crash, missing output, a dead worker) is a field, never an exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Limits", "SandboxResult"]


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run.

    Attributes:
        wall_time_s: wall-clock limit; the whole process group is killed when it passes.
        cpu_time_s: CPU-time limit of the main process (``RLIMIT_CPU``, whole seconds: rounded
            to the nearest, at least one).
        memory_mb: memory of the run as a whole, where the sandbox can give each run a cgroup
            (``SandboxResult.budget`` ``"cgroup-v1"`` or ``"cgroup-v2"``): every process of the
            run and the pages of its tmpfs areas count, the kernel kills the run past it and
            records that (``memory_exceeded``); each process also keeps an address-space
            backstop of ``memory_mb`` above what it had mapped at the start (one allocation
            bigger than that fails with ``MemoryError``, which the kernel does not record: the
            result calls it unconfirmed). Elsewhere (``budget == "rlimit"``, e.g. rootless
            without a delegated cgroup) it is the address-space limit of *each* process
            (``RLIMIT_AS``), where the pre-imported libraries' mappings count: keep it above
            ~1 GiB.
        max_processes: processes and threads the run may have at once: ``pids.max`` of its
            cgroup, or ``RLIMIT_NPROC`` as the fallback.
        max_output_bytes: bytes of stdout and of stderr kept each (head and tail halves).
        network: allow network access (default: a private network namespace, no network).
        max_file_mb: largest file the run may write (``RLIMIT_FSIZE``), stdout/stderr included.
        tmp_mb: size of the run's private tmpfs, shared by its ``/tmp``, ``/var/tmp`` and
            ``/dev/shm`` (gone after the run; counted in ``memory_mb`` with a cgroup).
        work_mb: size of the run's private work area, a tmpfs holding its work directory (the
            read-only inputs are mounted in and do not count), and of a second one holding its
            stdout and stderr: a run writing more gets ``ENOSPC`` and no shared disk fills.
            Only the requested outputs and the captured output's head and tail are copied
            back to disk. Counted in ``memory_mb`` with a cgroup; where the worker has no mount
            namespace (weak isolation) the run works on disk and only ``max_file_mb`` bounds
            each file.

    Example:
        >>> Limits(wall_time_s=5).memory_mb
        4096
    """

    wall_time_s: float = 60
    cpu_time_s: float = 60
    memory_mb: int = 4096
    max_processes: int = 64
    max_output_bytes: int = 1_000_000
    network: bool = False
    max_file_mb: int = 1024
    tmp_mb: int = 256
    work_mb: int = 512

    def __post_init__(self) -> None:
        from costeer_lab.errors import InvalidInputError

        for name in (
            "wall_time_s", "cpu_time_s", "memory_mb", "max_processes", "max_file_mb", "tmp_mb",
            "work_mb",
        ):  # fmt: skip
            value = getattr(self, name)
            if not value > 0:
                raise InvalidInputError(f"Limits.{name} must be > 0, got {value!r}")
        if self.max_output_bytes < 64:
            raise InvalidInputError(
                f"Limits.max_output_bytes must be >= 64, got {self.max_output_bytes!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "wall_time_s": float(self.wall_time_s),
            "cpu_time_s": float(self.cpu_time_s),
            "memory_mb": int(self.memory_mb),
            "max_processes": int(self.max_processes),
            "max_output_bytes": int(self.max_output_bytes),
            "network": bool(self.network),
            "max_file_mb": int(self.max_file_mb),
            "tmp_mb": int(self.tmp_mb),
            "work_mb": int(self.work_mb),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Limits:
        return cls(**{k: d[k] for k in cls().to_dict() if k in d})


@dataclass(frozen=True)
class SandboxResult:
    """What one sandboxed run did.

    Attributes:
        returncode: exit code of the main process (1 after an uncaught exception), ``None``
            when it was killed by a signal or never started.
        stdout: captured standard output (head and tail kept when longer than the limit).
        stderr: captured standard error, tracebacks included (same capping).
        timed_out: the wall-clock or CPU-time limit was hit (``error`` says which).
        memory_exceeded: the kernel says the run went past its memory limit: its cgroup
            recorded an out-of-memory kill. Never inferred from the candidate's output: with
            per-process rlimits only (``budget == "rlimit"``) the kernel records nothing, so
            this stays ``False`` and ``error`` says that the run *reported* a memory error
            the kernel did not confirm.
        process_limit_hit: the kernel says the run reached its process limit: its cgroup
            refused a fork (``pids.events``), or, as root without a cgroup, the run's uid
            held the whole limit. Never inferred from the candidate's output.
        killed_signal: the signal that ended the main process, if any.
        output_truncated: stdout or stderr was cut (a marker says how many bytes).
        network_isolated: the run had no network access (``False`` when isolation was not
            available on this platform or ``Limits.network`` was set).
        isolation: the isolation level the run had, as its child verified it just before the
            code ran: ``"full"`` (private filesystem view, own mount, PID, IPC and network
            namespaces, no capabilities, keyring calls refused), ``"partial"`` or ``"none"``
            (only with ``SandboxSettings.allow_weak_isolation``), ``"unverified"`` when the
            child never reported (set-up failed or was refused: the code did not run);
            ``""`` when it never started.
        duration_s: wall-clock seconds from start to end of the run.
        outputs: the collected output files (relative name → bytes) that exist.
        error: why the run failed as seen by the sandbox (limit hit, missing output, dead
            worker, …); ``None`` when it ran to completion and produced every requested output.
        missing_outputs: requested output files that were absent or unreadable.
        cpu_time_s: CPU seconds used by the main process.
        max_rss_mb: peak resident memory of the main process (MiB).
        budget: how memory and processes were bounded: ``"cgroup-v2"`` or ``"cgroup-v1"`` (for
            the run as a whole) or ``"rlimit"`` (per process, the fallback); ``""`` when it
            never started. ``extra["budget"]`` holds the kernel's counters (``oom_kill``,
            ``memory_max``, ``pids_max``, ``memory_peak``), the work area (``"tmpfs"`` or
            ``"disk"``) and notes on what was unavailable.

    Example:
        >>> r = SandboxResult(0, "hi", "", False, False, False, None, False, True, 0.1, {}, None)
        >>> r.ok
        True
    """

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    memory_exceeded: bool
    process_limit_hit: bool
    killed_signal: int | None
    output_truncated: bool
    network_isolated: bool
    duration_s: float
    outputs: Mapping[str, bytes]
    error: str | None
    missing_outputs: tuple[str, ...] = ()
    cpu_time_s: float = 0.0
    max_rss_mb: float = 0.0
    isolation: str = ""
    budget: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the run exited with code 0, within its limits, with every output."""
        return (
            self.returncode == 0
            and self.error is None
            and not self.timed_out
            and not self.memory_exceeded
            and self.killed_signal is None
        )

    def describe(self, max_chars: int = 4000) -> str:
        """A readable account of the run for feedback texts (stdout/stderr tails included).

        Example:
            >>> SandboxResult(1, "", "ValueError: x", False, False, False, None, False, True,
            ...               0.5, {}, "exit code 1").describe().splitlines()[0]
            'exit code 1 after 0.50 s'
        """
        head = self.error or f"exit code {self.returncode}"
        lines = [f"{head} after {self.duration_s:.2f} s"]
        for name, text in (("stdout", self.stdout), ("stderr", self.stderr)):
            if text.strip():
                if len(text) > max_chars:
                    text = "…" + text[-max_chars:]
                lines.append(f"--- {name} ---\n{text.rstrip()}")
        return "\n".join(lines)
