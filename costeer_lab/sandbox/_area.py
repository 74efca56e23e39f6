"""The private, size-limited work area of one run (worker side).

The caller prepares ``run_dir/work`` on disk (workspace files and read-only input copies). A
run that wrote there could fill the shared disk: one runaway run would make the honest runs
beside it fail with ``ENOSPC``. So the worker, in its private mount namespace, mounts a tmpfs
of ``Limits.work_mb`` at ``run_dir/area`` (invisible to every other process) and the run works
there:

* ``area/work``: copies of the workspace files; the read-only inputs are *bind-mounted*
  read-only from their on-disk copies (never copied again, never linked);
* ``area/capture``: the run's ``stdout`` and ``stderr``, on a second tmpfs of the same size
  (so printing cannot fill a disk either, and a run that filled its work directory can still
  print why it failed).

Its pages are charged to the run's memory cgroup when it has one. After the run the worker
copies back only what the caller asked for: the requested output files (regular files only, no
symlinks, no hard links, each under its cap; a bigger one is refused without being read) into
``run_dir/out``, and the head and tail of each capture file (a sparse file of the original
size, which ``read_capped`` reads as before). Then it unmounts the area: whatever else the run
left (deep directory chains, unreadable directories, sparse giants) is gone with it.

Stdlib only (a worker module).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from costeer_lab.sandbox._ns import MS_NODEV, MS_NOSUID, bind, detach, mount_fs

__all__ = ["Area", "open_area"]

_CHUNK = 1 << 20


@dataclass
class Area:
    """A mounted work area: ``work`` is the run's work directory, ``capture`` holds the
    capture files the child opens."""

    root: str
    work: str
    capture: str

    def collect(self, names: Mapping[str, int], out_dir: str) -> dict[str, str]:
        """Copy the output files ``names`` (relative name → byte cap) to ``out_dir``; return
        the refused ones with the reason (missing files are simply not copied)."""
        problems: dict[str, str] = {}
        for name, cap in names.items():
            problem = _copy_out(self.work, name, int(cap), out_dir)
            if problem:
                problems[name] = problem
        return problems

    def copy_captures(self, run_dir: str, keep: int) -> None:
        """Copy ``stdout`` and ``stderr`` to ``run_dir``: whole when at most ``keep`` bytes,
        else the head and tail halves at their offsets in a sparse file of the same size."""
        for name in ("stdout", "stderr"):
            with contextlib.suppress(OSError):
                _copy_capture(os.path.join(self.capture, name), os.path.join(run_dir, name), keep)

    def close(self) -> None:
        """Unmount the area (lazily, with the input binds in it) and remove its mount point."""
        with contextlib.suppress(OSError):
            detach(self.root)
        with contextlib.suppress(OSError):
            os.rmdir(self.root)


def open_area(run_dir: str, work_dir: str, read_only: Iterable[str], work_mb: int) -> Area:
    """Mount the area of a run and fill it from ``work_dir``. Raises ``OSError`` (the area is
    unmounted again)."""
    root = os.path.join(run_dir, "area")
    os.mkdir(root, 0o700)
    try:
        _mount_tmpfs(root, work_mb, "0711")
    except OSError:
        os.rmdir(root)
        raise
    area = Area(root, os.path.join(root, "work"), os.path.join(root, "capture"))
    try:
        os.mkdir(area.capture, 0o700)
        _mount_tmpfs(area.capture, work_mb, "0700")
        _fill(work_dir, area.work, set(read_only))
    except BaseException:
        area.close()
        raise
    return area


def _mount_tmpfs(target: str, size_mb: int, mode: str) -> None:
    inodes = max(1024, size_mb * 256)  # one per 4 KiB: no swarm of empty files past its size
    opts = f"mode={mode},size={size_mb}m,nr_inodes={inodes}"
    mount_fs("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, opts)


def _fill(src_root: str, dst_root: str, read_only: set[str]) -> None:
    """Copy the workspace tree; bind each top-level read-only input (its parent is not itself
    read-only) onto a placeholder, read-only."""
    os.mkdir(dst_root, 0o755)
    for here, dirs, files in os.walk(src_root):
        rel_here = os.path.relpath(here, src_root)
        for name in sorted(dirs + files):
            rel = os.path.normpath(os.path.join(rel_here, name))
            src, dst = os.path.join(src_root, rel), os.path.join(dst_root, rel)
            st = os.lstat(src)
            if rel in read_only:
                if os.path.dirname(rel) not in read_only:
                    _bind_input(src, dst, st)
            elif stat.S_ISDIR(st.st_mode):
                os.mkdir(dst, stat.S_IMODE(st.st_mode) | 0o700)
            elif stat.S_ISREG(st.st_mode):
                _copy_file(src, dst, stat.S_IMODE(st.st_mode))
        dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(rel_here, d)) not in read_only]


def _bind_input(src: str, dst: str, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        os.mkdir(dst, 0o555)
    elif stat.S_ISREG(st.st_mode):
        os.close(os.open(dst, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o444))
    else:
        return
    bind(src, dst, read_only=True)


def _copy_file(src: str, dst: str, mode: int) -> None:
    fd_in = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fd_out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        try:
            while chunk := os.read(fd_in, _CHUNK):
                os.write(fd_out, chunk)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def _open_inside(root: str, rel: str) -> int:
    """Open ``root/rel`` for reading without following any symlink on the way."""
    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise FileNotFoundError(rel)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        return os.open(parts[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)


def _copy_out(work: str, name: str, cap: int, out_dir: str) -> str | None:
    """Copy one output file out of the area; the reason when it is refused."""
    try:
        fd = _open_inside(work, name)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot open: {exc.strerror}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if st.st_nlink != 1:
            return "hard link refused"
        if st.st_size > cap:
            return f"larger than {cap} bytes"
        dst = os.path.join(out_dir, name)
        os.makedirs(os.path.dirname(dst), mode=0o700, exist_ok=True)
        out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            copied = 0
            while copied <= cap and (chunk := os.read(fd, min(_CHUNK, cap + 1 - copied))):
                os.write(out, chunk)
                copied += len(chunk)
        finally:
            os.close(out)
        if copied > cap:  # it grew while being copied: refuse it all the same
            os.unlink(dst)
            return f"larger than {cap} bytes"
        return None
    finally:
        os.close(fd)


def _copy_capture(src: str, dst: str, keep: int) -> None:
    fd_in = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        size = os.fstat(fd_in).st_size
        fd_out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            if size <= keep:
                _copy_range(fd_in, fd_out, 0, size)
                return
            half = keep // 2
            os.ftruncate(fd_out, size)
            _copy_range(fd_in, fd_out, 0, half)
            _copy_range(fd_in, fd_out, size - half, half)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


def _copy_range(fd_in: int, fd_out: int, offset: int, length: int) -> None:
    end = offset + length
    while offset < end:
        chunk = os.pread(fd_in, min(_CHUNK, end - offset), offset)
        if not chunk:
            return
        os.pwrite(fd_out, chunk, offset)
        offset += len(chunk)
