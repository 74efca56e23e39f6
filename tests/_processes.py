"""Worker subprocesses for the concurrency and crash-safety tests (store and memory)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def default_sigint() -> None:
    """``preexec_fn`` of a child that a test interrupts with SIGINT, as a terminal's Ctrl-C
    would: the default SIGINT disposition. A command started in the background of a
    non-interactive shell (``make test &``, a CI wrapper) has SIGINT *ignored*, an ignored signal
    stays ignored across ``exec``, and Python then never raises ``KeyboardInterrupt``."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(worker: Path, *args: str) -> subprocess.Popen[str]:
    """Start ``python worker *args`` with this checkout importable, its output piped as text."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, str(worker), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def kill_after_lines(proc: subprocess.Popen[str], n: int) -> list[str]:
    """Read ``n`` lines of ``proc``'s output, SIGKILL it mid-run, and return every complete
    line it printed (each one a write that had returned)."""
    assert proc.stdout is not None
    printed: list[str] = []
    try:
        for line in proc.stdout:
            printed.append(line.strip())
            if len(printed) >= n:
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        rest, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, err
    printed += rest.split("\n")[:-1]  # complete lines only: the last one may be cut short
    return printed
