"""One run per output folder: an exclusive ``flock`` on ``<out>/.lock`` for the whole run.

A second run on the same ``--out`` while the first runs would write the same knowledge bases
and results; it ends instead with one :class:`~costeer_lab.errors.ConfigurationError` naming the
holder (its pid and start time, written into the lock file by the holder). The kernel releases
a ``flock`` when the holder's last descriptor closes, whatever the exit (``kill -9``
included), so a lock never outlives its run; the descriptor is not inherited by the run's
worker processes (close-on-exec, and spawned workers close every other descriptor). The file
stays in the folder (removing it would race with a second run opening it); it is one of the
runner's own files (:data:`LOCK_FILE`).

Example:
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> with hold_out_lock(out):
    ...     check_out_free(out)
    Traceback (most recent call last):
    ...
    costeer_lab.errors.ConfigurationError: --out '...' is in use by another run (pid ...
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

from costeer_lab.errors import ConfigurationError

__all__ = ["LOCK_FILE", "check_out_free", "hold_out_lock"]

#: The lock file's name inside the output folder (a file the runner writes).
LOCK_FILE = ".lock"


def _in_use(out_dir: Path, fd: int) -> ConfigurationError:
    """The error naming the run that holds the lock (its pid and start time, when written)."""
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
        pid, started = holder.get("pid", "?"), holder.get("started", "?")
    except (OSError, ValueError, AttributeError):
        pid, started = "?", "?"
    return ConfigurationError(
        f"--out {str(out_dir)!r} is in use by another run (pid {pid}, started {started}); "
        "wait for it or choose another --out"
    )


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def check_out_free(out_dir: Path) -> None:
    """Refuse an output folder that another run holds; writes nothing (a folder without a
    lock file is free).

    Raises:
        ConfigurationError: another run holds ``<out>/.lock``.
    """
    try:
        fd = os.open(out_dir / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not _try_lock(fd):
            raise _in_use(out_dir, fd)
    finally:
        os.close(fd)  # releases the probe's lock, if it took one


@contextlib.contextmanager
def hold_out_lock(out_dir: Path) -> Iterator[None]:
    """Create ``out_dir`` and hold its lock while the block runs (writes the holder's pid and
    start time into the lock file).

    Raises:
        ConfigurationError: another run holds the lock.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(out_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        if not _try_lock(fd):
            raise _in_use(out_dir, fd)
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "started": started}).encode(), 0)
        yield
    finally:
        os.close(fd)
