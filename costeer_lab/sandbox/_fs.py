"""Files of one sandboxed run, handled in the calling process.

Layout of a run directory (created with ``mkdtemp``, root-owned, mode 0711)::

    run_dir/stdout, run_dir/stderr   capture files, opened by the child before it drops root
    run_dir/work/                    the candidate's cwd and HOME: workspace files + inputs

Inputs are *copies* (never links) with mode 0444 and the caller's ownership, so an unprivileged
run cannot write them, and the originals live outside the run directory. Outputs are read back
without following symlinks, so a candidate cannot make the caller read other files.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from costeer_lab._records import Workspace
from costeer_lab.errors import InvalidInputError

__all__ = [
    "WORKDIR_MARK",
    "WorkspaceWriteError",
    "collect_outputs",
    "mask_run_dirs",
    "prepare_run_dir",
    "read_capped",
    "safe_relpath",
]


#: What the run's temporary directory is shown as in captured output.
WORKDIR_MARK = "<workdir>"


def mask_run_dirs(text: str, work: Path, *others: Path) -> str:
    """Replace the run's temporary directories in captured output (tracebacks name files by
    absolute path) with :data:`WORKDIR_MARK`: feedback text becomes knowledge content and LLM
    prompts, so the same code must give the same text in every run.

    Example:
        >>> work = Path("/tmp/costeer-sbx-x1/work")
        >>> mask_run_dirs('File "/tmp/costeer-sbx-x1/work/main.py", line 3', work)
        'File "<workdir>/main.py", line 3'
    """
    if not text:
        return text
    for directory in (work, *others):
        for form in dict.fromkeys((str(directory), os.path.realpath(directory))):
            text = text.replace(form, WORKDIR_MARK)
    return text


class WorkspaceWriteError(Exception):
    """The workspace's own files cannot be written (a path escapes, a name is invalid, …);
    the sandbox reports this as a failed run, not as an exception."""


def safe_relpath(name: str, what: str) -> str:
    """Check that ``name`` is a relative path that stays inside its directory."""
    pure = PurePosixPath(name)
    if not name or pure.is_absolute() or ".." in pure.parts or str(pure) in ("", "."):
        raise InvalidInputError(f"{what} {name!r} must be a relative path inside the sandbox")
    return str(pure)


def _copy_read_only(src: Path, dst: Path) -> list[str]:
    """Copy ``src`` (file or directory) to ``dst`` as read-only; return the copied files."""
    copied: list[Path] = []
    dirs: list[Path] = []
    if src.is_dir():
        dst.mkdir(parents=True, exist_ok=True)
        dirs.append(dst)
        for path in sorted(src.rglob("*")):
            target = dst / path.relative_to(src)
            if path.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                dirs.append(target)
            elif path.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
                copied.append(target)
        for d in reversed(dirs):
            d.chmod(0o555)
    else:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        copied.append(dst)
    for path in copied:
        path.chmod(0o444)
    return [str(p) for p in copied + dirs]


def prepare_run_dir(
    workspace: Workspace, inputs: Mapping[str, str | os.PathLike[str]], tmp_root: str | None
) -> tuple[Path, Path, list[str]]:
    """Create the run directory; return ``(run_dir, work_dir, read_only_relpaths)``.

    Raises:
        InvalidInputError: an input is missing, or a name escapes the work directory.
        WorkspaceWriteError: a workspace file cannot be written.
    """
    sources: dict[str, Path] = {}
    for name, src in inputs.items():
        rel = safe_relpath(name, "input name")
        path = Path(src)
        if not (path.is_file() or path.is_dir()):
            raise InvalidInputError(f"input {name!r}: source {str(path)!r} is not a file or dir")
        sources[rel] = path
    run_dir = Path(tempfile.mkdtemp(prefix="costeer-sbx-", dir=tmp_root))
    try:
        run_dir.chmod(0o711)
        work = run_dir / "work"
        work.mkdir()
        try:
            workspace.write_to(work)
        except (ValueError, OSError) as exc:  # the candidate's files, not the caller's mistake
            raise WorkspaceWriteError(f"cannot write the workspace files: {exc}") from exc
        read_only: list[str] = []
        for rel, src in sources.items():
            for copied in _copy_read_only(src, work / rel):
                read_only.append(os.path.relpath(copied, work))
        return run_dir, work, read_only
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)
        raise


def read_capped(path: Path, limit: int) -> tuple[str, bool]:
    """Read a capture file keeping at most ``limit`` bytes: the head and the tail halves with a
    marker naming how many bytes were cut. Returns ``(text, truncated)``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return "", False
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fd).st_size
        if size <= limit:
            return fh.read(limit).decode("utf-8", errors="replace"), False
        half = limit // 2
        head = fh.read(half)
        fh.seek(size - half)
        tail = fh.read(half)
    cut = size - len(head) - len(tail)
    marker = f"\n[... {cut} bytes of output truncated by the sandbox ...]\n"
    text = head.decode("utf-8", errors="replace") + marker + tail.decode("utf-8", errors="replace")
    return text, True


def _open_inside(root: Path, rel: str) -> int:
    """Open ``root/rel`` for reading without following any symlink on the way."""
    parts = PurePosixPath(rel).parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)


def collect_outputs(
    work: Path, names: Sequence[str], max_bytes: int
) -> tuple[dict[str, bytes], list[str]]:
    """Read requested output files; return ``(outputs, problems)`` where each problem names a
    missing or refused file (symlink, hard link, not a regular file, too large)."""
    outputs: dict[str, bytes] = {}
    problems: list[str] = []
    for name in names:
        rel = safe_relpath(name, "output name")
        try:
            fd = _open_inside(work, rel)
        except FileNotFoundError:
            problems.append(f"{name} (missing)")
            continue
        except OSError as exc:
            problems.append(f"{name} (cannot open: {exc.strerror})")
            continue
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                problems.append(f"{name} (not a regular file)")
            elif st.st_nlink != 1:
                problems.append(f"{name} (hard link refused)")
            elif st.st_size > max_bytes:
                problems.append(f"{name} (larger than {max_bytes} bytes)")
            else:
                outputs[name] = fh.read(max_bytes + 1)
    return outputs, problems
