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
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from costeer_lab._provenance import git_commit, machine_summary

__all__ = ["git_commit", "provenance_html", "report_provenance"]  # git_commit: re-exported


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


def _run_record(run_dir: Path | None) -> list[tuple[str, str]]:
    """The code and machine the run itself recorded (``settings.json``'s ``run`` block)."""
    if run_dir is None:
        return []
    try:
        block = json.loads((run_dir / "settings.json").read_text(encoding="utf-8")).get("run")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        block = None
    if not isinstance(block, dict):
        return [("run made with", "not recorded (a run made before runs recorded it)")]
    code = f"costeer_lab {block.get('costeer_lab', '?')}, commit {block.get('code_commit', '?')}"
    return [("run made with", code), ("run made on", str(block.get("machine", "not recorded")))]


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
    name = spec.get("name") if spec else None
    folder = Path(run_dir) if run_dir is not None else None
    return [
        ("costeer_lab", __version__),
        ("code commit", git_commit()),
        ("run made", _run_dates(folder)),
        *_run_record(folder),
        ("report made", made),
        ("report made on", machine_summary()),
        ("spec", str(name) if name else "not given"),
        ("seeds", _seeds(spec, results)),
    ]


def provenance_html(items: Sequence[tuple[str, str]]) -> str:
    """The provenance rows as a two-column HTML table."""
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in items
    )
    return f'<div class="tbl"><table class="prov">{rows}</table></div>'
