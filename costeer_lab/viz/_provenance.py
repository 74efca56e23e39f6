"""Where a report's numbers come from: code version and commit, run and report dates, machine.

Everything here is read locally and never fails: a missing ``git``, a package that is not a git
checkout, a run folder without ``spec.json`` each give a plain "not …" value. Nothing from the
environment is shown beyond the machine's name, OS, Python and CPU count (no variables, no
paths of the user's home, no credentials).

Example:
    >>> items = dict(report_provenance(None, {"name": "demo", "seeds": [0, 1]}))
    >>> items["spec"], items["seeds"], items["run made"]
    ('demo', '0, 1', 'not recorded (results given as a table)')
"""

from __future__ import annotations

import datetime as dt
import html
import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["git_commit", "provenance_html", "report_provenance"]

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
    pkg = Path(package_dir) if package_dir else Path(__file__).resolve().parents[1]
    top = pkg.parent
    found = _git(["rev-parse", "--show-toplevel"], top)
    if not found or Path(found).resolve() != top.resolve() or pkg.name != "costeer_lab":
        return "not a git checkout"
    sha = _git(["rev-parse", "HEAD"], top)
    if not sha:
        return "not a git checkout (no commit yet)"
    dirty = _git(["status", "--porcelain", "--untracked-files=no"], top)
    return f"{sha} (uncommitted changes)" if dirty else sha


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _run_dates(run_dir: Path | None) -> str:
    if run_dir is None:
        return "not recorded (results given as a table)"
    started = _mtime(run_dir / "spec.json")
    finished = _mtime(run_dir / "results.parquet") or _mtime(run_dir / "results.csv")
    parts = []
    if started is not None:
        parts.append(f"started {_when(started)} (spec.json written)")
    if finished is not None:
        parts.append(f"results written {_when(finished)}")
    return "; ".join(parts) or f"not recorded (no spec.json or results in {run_dir.name!r})"


def _seeds(spec: Mapping[str, Any] | None, results: pd.DataFrame | None) -> str:
    seeds: list[Any] = []
    if spec and isinstance(spec.get("seeds"), list):
        seeds = list(spec["seeds"])
    elif results is not None and "seed" in results and len(results):
        seeds = sorted({int(s) for s in results["seed"]})
    return ", ".join(str(s) for s in seeds) or "not recorded"


def report_provenance(
    run_dir: str | os.PathLike[str] | None,
    spec: Mapping[str, Any] | None,
    results: pd.DataFrame | None = None,
    *,
    now: dt.datetime | None = None,
) -> list[tuple[str, str]]:
    """(label, value) rows: code version and commit, when the run and the report were made,
    the machine the report was made on, the spec's name and seeds.

    Args:
        run_dir: the run folder (its ``spec.json`` and results give the run's dates), or
            ``None`` when the results were passed as a table.
        spec: the experiment spec (its ``name`` and ``seeds``).
        results: the results (their seeds when there is no spec).
        now: the report's time (default: now).
    """
    from costeer_lab import __version__

    made = (now or dt.datetime.now()).astimezone().isoformat(timespec="seconds")
    machine = (
        f"{platform.node() or 'unknown host'}; {platform.system()} {platform.release()} "
        f"({platform.machine()}); Python {platform.python_version()}; "
        f"{os.cpu_count() or '?'} CPU(s)"
    )
    name = spec.get("name") if spec else None
    return [
        ("costeer_lab", __version__),
        ("code commit", git_commit()),
        ("run made", _run_dates(Path(run_dir) if run_dir is not None else None)),
        ("report made", made),
        ("report made on", machine),
        ("spec", str(name) if name else "not given"),
        ("seeds", _seeds(spec, results)),
    ]


def provenance_html(items: Sequence[tuple[str, str]]) -> str:
    """The provenance rows as a two-column HTML table."""
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in items
    )
    return f'<div class="tbl"><table class="prov">{rows}</table></div>'
