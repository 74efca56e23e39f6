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
        memory_mb: address-space limit of each process (``RLIMIT_AS``). The pre-imported
            worker's mappings (numpy, pandas) count against it, so keep it above ~1 GiB.
        max_processes: processes and threads the run may have at once (``RLIMIT_NPROC``).
        max_output_bytes: bytes of stdout and of stderr kept each (head and tail halves).
        network: allow network access (default: a private network namespace, no network).
        max_file_mb: largest file the run may write (``RLIMIT_FSIZE``), stdout/stderr included.
        tmp_mb: size of the run's private tmpfs, shared by its ``/tmp``, ``/var/tmp`` and
            ``/dev/shm`` (memory the run can fill on top of ``memory_mb``; gone after the run).

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

    def __post_init__(self) -> None:
        from costeer_lab.errors import InvalidInputError

        for name in (
            "wall_time_s", "cpu_time_s", "memory_mb", "max_processes", "max_file_mb", "tmp_mb"
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
        memory_exceeded: the run died of a memory error under the address-space limit.
        process_limit_hit: the run reached its process limit (a fork failed or it was full).
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
