"""Provenance of code and machine, read locally and never failing: the commit of the checkout
holding ``costeer_lab``, a one-line summary of the machine, and the record a run keeps of both
(``settings.json``'s ``run`` block, shown by the report).

Nothing from the environment is read beyond the machine's name, OS, Python and CPU count (no
variables, no paths of the user's home, no credentials).

Example:
    >>> sorted(run_provenance())
    ['code_commit', 'costeer_lab', 'machine', 'started_at']
    >>> "CPU(s)" in machine_summary()
    True
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["git_commit", "machine_summary", "run_provenance"]

_GIT_TIMEOUT_S = 5.0


def _git(args: Sequence[str], cwd: Path) -> str | None:
    """stdout of ``git <args>`` in ``cwd`` (``None`` on any failure: no git, no checkout)."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_commit(package_dir: str | os.PathLike[str] | None = None) -> str:
    """The commit of the checkout holding the ``costeer_lab`` package (read without network).

    ``"<sha> (uncommitted changes)"`` when tracked files differ from it; ``"not a git
    checkout"`` when the package does not sit at the top of a git work tree (an installed
    wheel, or a package inside some other repository).

    Example:
        >>> import tempfile
        >>> git_commit(tempfile.mkdtemp())
        'not a git checkout'
    """
    pkg = Path(package_dir) if package_dir else Path(__file__).resolve().parent
    top = pkg.parent
    found = _git(["rev-parse", "--show-toplevel"], top)
    if not found or Path(found).resolve() != top.resolve() or pkg.name != "costeer_lab":
        return "not a git checkout"
    sha = _git(["rev-parse", "HEAD"], top)
    if not sha:
        return "not a git checkout (no commit yet)"
    dirty = _git(["status", "--porcelain", "--untracked-files=no"], top)
    return f"{sha} (uncommitted changes)" if dirty else sha


def machine_summary() -> str:
    """Host name, OS, CPU architecture, Python version and CPU count, on one line."""
    return (
        f"{platform.node() or 'unknown host'}; {platform.system()} {platform.release()} "
        f"({platform.machine()}); Python {platform.python_version()}; "
        f"{os.cpu_count() or '?'} CPU(s)"
    )


def run_provenance(now: dt.datetime | None = None) -> dict[str, str]:
    """What a run records about the code and machine it ran on, and when it started."""
    from costeer_lab import __version__

    return {
        "costeer_lab": __version__,
        "code_commit": git_commit(),
        "machine": machine_summary(),
        "started_at": (now or dt.datetime.now()).astimezone().isoformat(timespec="seconds"),
    }
