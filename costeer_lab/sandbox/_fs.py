"""Files of one sandboxed run, handled in the calling process.

Layout of a run directory (created with ``mkdtemp``, root-owned, mode 0711)::

    run_dir/stdout, run_dir/stderr   capture files, opened by the child before it drops root
    run_dir/work/                    the candidate's cwd and HOME: workspace files + inputs

    run_dir/area/                    mount point of the run's private work area (``_area.py``):
                                     a tmpfs that exists only in the worker's mount namespace
    run_dir/out/                     the requested outputs the worker copied out of that area

Inputs are *copies* (never links) with mode 0444 and the caller's ownership, so an unprivileged
run cannot write them, and the originals live outside the run directory. Outputs are read back
without following symlinks, so a candidate cannot make the caller read other files, and each
under a byte cap, refused without being read when bigger: the outputs of one run never cost
this process more than :data:`OUTPUT_BUDGET_BYTES`. Run directories are removed with
:func:`remove_tree`, which never fails on what a candidate can build (deep chains, unreadable
directories).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Protocol

from costeer_lab.errors import InvalidInputError

__all__ = [
    "OUTPUT_BUDGET_BYTES",
    "WORKDIR_MARK",
    "RunFiles",
    "WorkspaceWriteError",
    "collect_outputs",
    "mask_run_dirs",
    "prepare_run_dir",
    "read_capped",
    "remove_tree",
    "safe_relpath",
]

#: The most bytes of output files one run can make this process read (all its collected files
#: together; each file also has its own cap, at most this). stdout and stderr come on top,
#: ``Limits.max_output_bytes`` each.
OUTPUT_BUDGET_BYTES = 256 * 1024 * 1024


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


class RunFiles(Protocol):
    """The code a run executes: source files by relative path and the one run as ``__main__``.

    A :class:`costeer_lab.records.Workspace` is one; the sandbox needs nothing else of it (it
    knows nothing of tasks or verdicts, and writes the files itself, refusing paths that leave
    the work directory).
    """

    @property
    def files(self) -> Mapping[str, str]: ...

    @property
    def main_file(self) -> str: ...


def _write_files(files: Mapping[str, str], work: Path) -> None:
    """Write ``files`` under the fresh directory ``work``; ``ValueError`` for a path that is
    absolute or leaves it."""
    for rel, text in files.items():
        pure = PurePosixPath(rel)
        if not rel or pure.is_absolute() or ".." in pure.parts or str(pure) == ".":
            raise ValueError(f"workspace path {rel!r} escapes the workspace directory")
        target = work / pure
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def prepare_run_dir(
    workspace: RunFiles, inputs: Mapping[str, str | os.PathLike[str]], tmp_root: str | None
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
            _write_files(workspace.files, work)
        except (ValueError, OSError) as exc:  # the candidate's files, not the caller's mistake
            raise WorkspaceWriteError(f"cannot write the workspace files: {exc}") from exc
        read_only: list[str] = []
        for rel, src in sources.items():
            for copied in _copy_read_only(src, work / rel):
                read_only.append(os.path.relpath(copied, work))
        return run_dir, work, read_only
    except BaseException:
        remove_tree(run_dir)
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
    work: Path, caps: Mapping[str, int], budget: int = OUTPUT_BUDGET_BYTES
) -> tuple[dict[str, bytes], list[str]]:
    """Read requested output files (relative name → byte cap); return ``(outputs, problems)``
    where each problem names a missing or refused file (symlink, hard link, not a regular file,
    larger than its cap or than what is left of ``budget``). A refused file is not read at
    all; an accepted one is read up to its cap only (it may grow while being read)."""
    outputs: dict[str, bytes] = {}
    problems: list[str] = []
    left = budget
    for name, cap in caps.items():
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
            limit = min(cap, left)
            problem = _refusal(os.fstat(fd), limit, cap)
            data = b"" if problem else fh.read(limit + 1)
            if not problem and len(data) > limit:
                problem = _refusal(os.fstat(fd), limit, cap) or f"larger than {limit} bytes"
            if problem:
                problems.append(f"{name} ({problem})")
            else:
                outputs[name] = data
                left -= len(data)
    return outputs, problems


def _refusal(st: os.stat_result, limit: int, cap: int) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_nlink != 1:
        return "hard link refused"
    if st.st_size > cap:
        return f"larger than {cap} bytes"
    if st.st_size > limit:
        return f"over the {OUTPUT_BUDGET_BYTES}-byte output budget of the run"
    return None


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: str | os.PathLike[str]) -> bool:
    """Remove a run directory and everything in it; never raises. Returns whether it is gone.

    ``shutil.rmtree`` recurses (a 3,000-level chain raises ``RecursionError``) and, for an
    unprivileged caller, stops at a directory its candidate made unreadable. This walks
    iteratively with one open directory at a time: it opens each child relative to its parent
    with ``O_NOFOLLOW`` (never following a symlink, never leaving the tree), makes directories
    accessible (0700) before listing them, and climbs back through ``..`` only after checking
    that it reaches the directory it came from (otherwise it starts over from the top).
    """
    target = os.fspath(path)
    for _ in range(3):
        with contextlib.suppress(OSError):
            _remove_contents(target)
        with contextlib.suppress(FileNotFoundError):
            try:
                os.rmdir(target)
            except NotADirectoryError:
                os.unlink(target)
            except OSError:
                continue
        if not os.path.lexists(target):
            return True
    return not os.path.lexists(target)


def _remove_contents(top: str) -> None:
    """Empty the directory ``top`` (see :func:`remove_tree`). Raises ``OSError``."""
    _make_accessible(top, None)
    fd = os.open(top, _DIR_FLAGS)
    dev = _identity(fd)[0]
    stack: list[tuple[tuple[int, int], str]] = []  # (identity of a parent, name of the child)
    stuck: set[tuple[int, int]] = set()  # directories that could not be removed: skip them
    try:
        while True:
            child = _next_subdir(fd, dev, stuck)
            if child is not None:
                name, sub = child
                stack.append((_identity(fd), name))
                os.close(fd)
                fd = sub
                continue
            if not stack:
                return
            parent_id, name = stack.pop()
            here = _identity(fd)
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            if _identity(fd) != parent_id:  # the tree moved under us: start over
                raise OSError(errno.EAGAIN, "directory tree changed during removal")
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError:
                stuck.add(here)
    finally:
        os.close(fd)


def _identity(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _make_accessible(name: str, dir_fd: int | None) -> None:
    """``chmod 0700`` the directory ``name`` without following a symlink: through an
    ``O_PATH`` descriptor (Linux has no ``lchmod``), which needs no permission on it."""
    try:
        fd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        return
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) & 0o700 != 0o700:
            os.chmod(f"/proc/self/fd/{fd}", 0o700)
    except OSError:
        pass
    finally:
        os.close(fd)


def _next_subdir(fd: int, dev: int, stuck: set[tuple[int, int]]) -> tuple[str, int] | None:
    """Unlink everything in the directory at ``fd`` that is not a directory; return the first
    subdirectory (on the same filesystem, not ``stuck``) that is not empty yet, opened, or
    ``None``."""
    with os.scandir(fd) as entries:
        for entry in entries:
            name = entry.name
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISDIR(st.st_mode):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=fd)
                continue
            if st.st_dev != dev or (st.st_dev, st.st_ino) in stuck:
                continue  # a mount point (never cross it), or known not to go
            try:
                os.rmdir(name, dir_fd=fd)
                continue
            except OSError:
                pass
            _make_accessible(name, fd)
            try:
                return name, os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                stuck.add((st.st_dev, st.st_ino))
    return None
