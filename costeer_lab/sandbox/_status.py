"""How a run's outcome becomes a :class:`SandboxResult`: the status fields and ``error``.

Pure (no I/O): the worker's answer for one run (``_worker.py``: exit code, signal, the limits the
kernel saw hit, budget counters), the captured stdout and stderr as this process read them
(capped, run directories masked) and the collected outputs go in; the result comes out. Which
limit a run hit is always the worker's and the kernel's word, never what the candidate printed:
stderr only words the error of a failed run the kernel did not confirm. ``_sandbox.py`` reads
the files and calls :func:`result`; :func:`failure` is the result of a run that never reported.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Mapping, Sequence
from typing import Any

from costeer_lab.sandbox._limits import Limits, SandboxResult

__all__ = ["MEMORY_RE", "error_text", "failure", "result", "signal_name"]

#: What a run's stderr looks like when it *reports* running out of memory. It never sets
#: ``memory_exceeded`` (the candidate writes stderr; the kernel's counters decide): it only
#: words the error of a failed run that the kernel did not confirm.
MEMORY_RE = re.compile(
    r"^(\w+\.)*_?\w*MemoryError\b|Cannot allocate memory|std::bad_alloc|out of memory", re.M
)


def signal_name(sig: int) -> str:
    """``SIGKILL`` for 9; ``signal N`` for a number that is no signal of this platform."""
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def failure(error: str, duration_s: float) -> SandboxResult:
    """The result of a run that never reported its outcome (refused, or the worker failed)."""
    return SandboxResult(
        returncode=None, stdout="", stderr="", timed_out=False, memory_exceeded=False,
        process_limit_hit=False, killed_signal=None, output_truncated=False,
        network_isolated=False, duration_s=duration_s, outputs={}, error=error,
    )  # fmt: skip


def result(
    answer: Mapping[str, Any],
    *,
    stdout: str,
    stderr: str,
    stdout_cut: bool,
    stderr_cut: bool,
    outputs: Mapping[str, bytes],
    problems: Sequence[str],
    limits: Limits,
) -> SandboxResult:
    """The result of a run the worker reported (``answer``), with what this process read of it:
    ``stdout``/``stderr`` (``*_cut``: cut to ``limits.max_output_bytes``), the collected
    ``outputs`` and the ``problems`` of the requested ones (``"name (why)"``)."""
    memory = bool(answer.get("memory_exceeded"))
    nproc = bool(answer["process_limit_hit"])
    budget = str(answer.get("budget", "rlimit"))
    error: str | None = answer.get("error")
    if error is None:
        error = error_text(answer, limits, memory, nproc, stderr, problems)
    return SandboxResult(
        returncode=answer["returncode"],
        stdout=stdout,
        stderr=stderr,
        timed_out=bool(answer["timed_out"]) or bool(answer["cpu_limit"]),
        memory_exceeded=memory,
        process_limit_hit=nproc,
        killed_signal=answer["signal"],
        output_truncated=stdout_cut or stderr_cut,
        network_isolated=bool(answer["network_isolated"]),
        duration_s=float(answer["duration_s"]),
        outputs=outputs,
        error=error,
        missing_outputs=tuple(p.split(" (")[0] for p in problems),
        cpu_time_s=float(answer["cpu_s"]),
        max_rss_mb=float(answer["maxrss_kb"]) / 1024.0,
        isolation=str(answer.get("isolation", "")),
        budget=budget,
        extra={
            "budget": {
                "mode": budget,
                "events": dict(answer.get("budget_events") or {}),
                "work_area": str(answer.get("work_area", "disk")),
                "notes": list(answer.get("budget_notes") or []),
            }
        },
    )


def error_text(
    answer: Mapping[str, Any],
    lim: Limits,
    memory: bool,
    nproc: bool,
    stderr: str,
    problems: Sequence[str],
) -> str | None:
    """Why the run failed, as the sandbox saw it (``None``: it completed with every output)."""
    code: int | None = answer["returncode"]
    sig: int | None = answer["signal"]
    failed = code != 0
    whole = str(answer.get("budget", "rlimit")).startswith("cgroup")
    if answer["timed_out"]:
        return f"wall-clock limit of {lim.wall_time_s:g} s exceeded; the run was killed"
    if answer["cpu_limit"]:
        return f"CPU-time limit of {lim.cpu_time_s:g} s exceeded; the run was killed"
    if memory:
        return f"memory limit of {lim.memory_mb} MB for the whole run exceeded; the kernel " + (
            f"killed it ({signal_name(sig)})" if sig is not None else "killed a process of it"
        )
    if nproc and failed:
        scope = "for the whole run " if whole else ""
        return f"process limit of {lim.max_processes} {scope}reached"
    if failed and MEMORY_RE.search(stderr):
        bound = (
            "for the whole run; each process may also map at most that much more address "
            "space than it had at the start"
            if whole
            else "of address space per process"
        )
        return (
            f"the run reported a memory error that the kernel did not confirm: no process of "
            f"it was killed for memory (limit {lim.memory_mb} MB {bound}; exit code {code})"
        )
    if sig is not None:
        return f"killed by {signal_name(sig)}"
    if not failed and problems:
        return "missing or refused output file(s): " + ", ".join(problems)
    return None
