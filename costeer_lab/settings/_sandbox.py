"""Settings of the sandbox: the ``sandbox`` section of :class:`costeer_lab.settings.Settings`
(environment names like ``COSTEER_LAB_SANDBOX__UID_BASE=62000``).

Example:
    >>> SandboxSettings().uid_base
    62000
"""

from __future__ import annotations

import os
import tempfile

from pydantic import BaseModel, Field

__all__ = ["SandboxSettings"]


def _default_lock_dir() -> str:
    return os.path.join(tempfile.gettempdir(), "costeer-lab-sandbox-slots")


class SandboxSettings(BaseModel):
    """How the sandbox worker runs candidates.

    When the process runs as root, each concurrent run uses its own unprivileged uid taken from
    ``uid_base .. uid_base + uid_slots - 1`` (claimed with a lock file in ``lock_dir`` so several
    sandboxes on one machine never share one). Those uids must not belong to real users: every
    process of a slot uid is killed after each run.
    """

    #: First uid of the run slots (used only when running as root).
    uid_base: int = Field(default=62000, ge=1000)
    #: Number of uid slots, i.e. the most runs that can execute at once on the machine.
    uid_slots: int = Field(default=64, ge=1, le=4096)
    #: Directory holding one lock file per uid slot.
    lock_dir: str = Field(default_factory=_default_lock_dir)
    #: Where run directories are created (``None``: the system temp directory).
    tmp_dir: str | None = None
    #: Seconds to wait for the worker to start (it imports numpy and pandas once).
    start_timeout_s: float = Field(default=120.0, gt=0)
    #: Seconds past a run's wall-time limit before the worker is presumed hung and restarted.
    response_grace_s: float = Field(default=30.0, gt=0)
    #: Let each pre-forked child run a small pandas warm-up at idle CPU priority while it
    #: waits for its request (root only; about 20 ms less per pandas run, see ``_warm.py``).
    warm_spares: bool = True
    #: How many times a spare runs the warm-up workload at most (it stops as soon as its
    #: request arrives). Two rounds make the pages of a factor script the child's own.
    warm_up_rounds: int = Field(default=2, ge=1, le=1000)
    #: Import names of the libraries runs may import besides the standard library (with
    #: everything they require); every other installed package is absent from a run's view.
    #: Evaluators pass their own list (see ``EvaluatorSettings``).
    packages: tuple[str, ...] = ("numpy", "pandas", "pyarrow")
    #: Run untrusted code even where the full isolation (user or root namespaces, a private
    #: filesystem view, a PID namespace per run) cannot be set up. Off: the sandbox refuses
    #: to start and says why. Results record the isolation every run had.
    allow_weak_isolation: bool = False
    #: Bound each run's memory and processes as a whole with a cgroup of its own where the
    #: worker can create one (root, or a delegated subtree; cgroup v2 or v1). Off, or where
    #: none is usable, runs get per-process rlimits only (``SandboxResult.budget == "rlimit"``).
    use_cgroups: bool = True
    #: Where no cgroup bounds a run (``budget == "rlimit"``: most rootless machines), keep the
    #: run to one process (threads allowed; ``fork``/``spawn`` fail with ``EAGAIN``, a seccomp
    #: filter), so that its per-process ``memory_mb`` bounds the run as a whole. Off: a run may
    #: start up to ``max_processes`` processes, each with ``memory_mb`` of its own.
    single_process_without_cgroup: bool = True
