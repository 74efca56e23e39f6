"""``--fresh`` (``run_experiment(..., resume=False)``): replace an earlier run in ``--out``, and
only a run: a folder holding anything the runner did not write is refused, never emptied.

A folder counts as an earlier run when it holds a ``spec.json`` that parses as an experiment
spec and every entry is one the runner (or the report, or the run's lock) writes:
:data:`RUN_FILES` at the top level, and in ``kb/`` only stores (``*.db`` with their SQLite side
files) and stage folders holding stores. An empty or missing folder is always fine.

What is removed before the new run: the earlier run's stores, results, infrastructure-error list
and report (:func:`clear_previous_run`); the LLM response cache ``llm_cache.db`` is kept (its
entries are keyed by the full request, so a new run reuses only identical requests).

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "thesis.tex").write_text("mine")
    >>> check_fresh_out(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    costeer_lab.errors.ConfigurationError: --out '...' holds files ... (e.g. 'thesis.tex'); ...
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from costeer_lab.errors import ConfigurationError

__all__ = ["RUN_FILES", "check_fresh_out", "clear_previous_run", "foreign_entries"]

#: Top-level files a run folder may hold: what the runner writes (see ``_runner``), the report,
#: the recorded settings, the run's lock.
RUN_FILES = frozenset(
    {
        "spec.json",
        "results.parquet",
        "results.csv",
        "infra_errors.json",
        "report.html",
        "settings.json",
        "llm_cache.db",
        "shared.json",
        "start_snapshots.json",
        "lock",
        "run.lock",
        ".lock",
    }
)
#: SQLite side files, lock files and the temporary files of atomic writes.
_SIDE = re.compile(
    r"(?:-wal|-shm|-journal)$|\.lock$|^\..+\.tmp$|\.tmp$",
)
#: A knowledge-base store of one (arm, seed): ``<arm>-seed<s>.db`` (escaped names included).
_STORE = re.compile(r".+\.db(?:\.tmp|-wal|-shm|-journal)?$")
#: The persisted vector indexes of a store: ``<store>.db.indexes/<collection>.<kind>.clvidx``
#: (:func:`costeer_lab.index._location.index_file`; a write in progress is a hidden temporary).
_INDEX_DIR = re.compile(r".+\.db\.indexes$")
#: What ``--fresh`` removes (the stores in ``kb/`` too); ``llm_cache.db`` stays.
#: ``shared.json`` goes too: the new run gets a new run key, so it resumes nothing of the old one
#: in a shared store (whose contents stay: other runs may share them).
_RUN_OUTPUTS = (
    "results.parquet",
    "results.csv",
    "infra_errors.json",
    "report.html",
    "shared.json",
    "start_snapshots.json",
)


def _is_run_file(name: str) -> bool:
    if name in RUN_FILES:
        return True
    return bool(_SIDE.search(name)) and (
        _SIDE.sub("", name) in RUN_FILES or name.startswith(".") or name.endswith(".lock")
    )


def _is_index_dir(entry: Path) -> bool:
    """Whether ``entry`` is a store's folder of persisted indexes holding only index files."""
    return (
        entry.is_dir()
        and not entry.is_symlink()
        and bool(_INDEX_DIR.fullmatch(entry.name))
        and all(f.is_file() and not f.is_symlink() for f in entry.iterdir())
        and all(".clvidx" in f.name for f in entry.iterdir())
    )


def _foreign_in_kb(kb: Path, depth: int = 0) -> list[str]:
    out: list[str] = []
    for entry in sorted(kb.iterdir()):
        if _is_index_dir(entry):
            continue
        if entry.is_dir() and not entry.is_symlink() and depth == 0:
            out += _foreign_in_kb(entry, 1)  # a stage folder
        elif not (entry.is_file() and not entry.is_symlink() and _STORE.fullmatch(entry.name)):
            out.append(entry.as_posix())
    return out


def foreign_entries(out_dir: Path) -> list[str]:
    """Entries of ``out_dir`` (relative paths) that a run does not write.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> (d / "kb").mkdir(); _ = (d / "kb" / "a-seed0.db").write_bytes(b"")
        >>> _ = (d / "spec.json").write_text("{}"); _ = (d / "notes.md").write_text("")
        >>> foreign_entries(d)
        ['notes.md']
    """
    out: list[str] = []
    for entry in sorted(out_dir.iterdir()):
        if entry.name == "kb" and entry.is_dir() and not entry.is_symlink():
            out += [Path(p).relative_to(out_dir).as_posix() for p in _foreign_in_kb(entry)]
        elif entry.is_symlink() or not entry.is_file() or not _is_run_file(entry.name):
            out.append(entry.name)
    return out


#: Keys every spec.json a run writes has (checked loosely: an earlier version's run counts).
_SPEC_KEYS = ("name", "suite", "arms")


def _spec_problem(spec_file: Path) -> str | None:
    """Why ``spec.json`` is not a run's spec (``None`` when it is)."""
    if not spec_file.is_file():
        return "no spec.json"
    try:
        doc = json.loads(spec_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"its spec.json is unreadable: {type(exc).__name__}"
    if not isinstance(doc, dict) or not all(k in doc for k in _SPEC_KEYS):
        return "its spec.json is not an experiment spec"
    return None


def check_fresh_out(out_dir: Path) -> None:
    """Refuse ``--fresh`` on a folder that is not (only) an earlier run.

    Raises:
        ConfigurationError: ``out_dir`` holds a file the runner did not write, or no
            ``spec.json`` of a run.
    """
    if not out_dir.is_dir() or not any(out_dir.iterdir()):
        return
    foreign = foreign_entries(out_dir)
    if foreign:
        shown = ", ".join(repr(f) for f in foreign[:3]) + (", …" if len(foreign) > 3 else "")
        raise ConfigurationError(
            f"--out {str(out_dir)!r} holds files costeer_lab did not write (e.g. {shown}); "
            "refusing to delete them with --fresh; choose another --out"
        )
    problem = _spec_problem(out_dir / "spec.json")
    if problem is not None:
        raise ConfigurationError(
            f"--out {str(out_dir)!r} does not look like a costeer_lab run ({problem}); "
            "refusing to delete it with --fresh; choose another --out"
        )


def clear_previous_run(out_dir: Path) -> None:
    """Remove an earlier run's stores, results, error list and report from ``out_dir``
    (checked by :func:`check_fresh_out` first); empty stage folders of ``kb/`` go too."""
    kb = out_dir / "kb"
    if kb.is_dir():
        for db in kb.glob("**/*.db*"):
            if db.is_file():
                db.unlink()
        for folder in [*kb.glob("*.db.indexes"), *kb.glob("*/*.db.indexes")]:
            if _is_index_dir(folder):
                shutil.rmtree(folder)
        for stage in kb.iterdir():
            if stage.is_dir() and not any(stage.iterdir()):
                stage.rmdir()
    for name in _RUN_OUTPUTS:
        (out_dir / name).unlink(missing_ok=True)
