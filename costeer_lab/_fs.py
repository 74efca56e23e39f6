"""Atomic file replacement, the one helper every writer of a durable file uses.

Readers see either the old file or the complete new one, never a partial write: the data goes to
a temporary file in the same directory, is fsync-ed and renamed over the target, and the rename
is made durable by an fsync of the directory.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "sub" / "x.bin"
    >>> atomic_write_bytes(p, b"hello").read_bytes()
    b'hello'
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = ["atomic_write_bytes", "atomic_writer", "path_component", "replace_durably"]


@contextmanager
def atomic_writer(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file handle whose content replaces ``path`` when the block exits cleanly.

    Parent directories are created. On an exception the temporary file is removed and ``path``
    is left as it was.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "y.txt"
        >>> with atomic_writer(p) as fh:
        ...     _ = fh.write(b"a")
        >>> p.read_bytes()
        b'a'
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, _default_mode())  # mkstemp makes 0600; output files get the usual mode
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def _read_umask() -> int:
    mask = os.umask(0o022)  # read once at import (os.umask is process-wide, not thread-safe)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _default_mode() -> int:
    """``0o666`` minus the umask: the mode ``open()`` would give a new file."""
    return 0o666 & ~_UMASK


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Replace ``path`` by ``data`` atomically (see :func:`atomic_writer`); returns the path."""
    with atomic_writer(path) as fh:
        fh.write(data)
    return Path(path)


def replace_durably(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> Path:
    """Rename the finished file ``src`` over ``dst``, durably: ``src``'s data is fsync-ed before
    the rename and the rename itself after it (an fsync of the directory), so a crash leaves
    either the old ``dst`` or the complete new one. Both must be in the same directory.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "x.tmp").write_bytes(b"new")
        >>> replace_durably(d / "x.tmp", d / "x").read_bytes()
        b'new'
    """
    target = Path(dst)
    fd = os.open(src, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(src, target)
    _fsync_dir(target.parent)
    return target


def _fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (no-op where directories cannot be opened)."""
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


#: Characters a name keeps as they are when it becomes one path component.
_SAFE_COMPONENT = re.compile(r"[A-Za-z0-9_.-]+")
#: Longest component :func:`path_component` returns (file systems allow 255 bytes; a suffix
#: such as ``-seed0.db.tmp`` still fits).
MAX_COMPONENT = 120


def path_component(text: str) -> str:
    """``text`` as one safe file or folder name: never ``''``, ``'.'`` or ``'..'``, never a
    ``'/'``, a backslash or a NUL, at most :data:`MAX_COMPONENT` characters.

    A name of letters, digits, ``_``, ``-`` and ``.`` (not only dots) is returned unchanged;
    in any other every UTF-8 byte outside that set (``%`` included) becomes ``%XX``, so two
    different names never share a component (a long one ends in a hash of the name instead).

    Example:
        >>> path_component("v2"), path_component("humaneval/0"), path_component("..")
        ('v2', 'humaneval%2F0', '%2E%2E')
        >>> path_component("")
        '%'
    """
    if _SAFE_COMPONENT.fullmatch(text) and set(text) != {"."} and len(text) <= MAX_COMPONENT:
        return text
    if not text:
        return "%"  # no escape is a lone '%'
    out = []
    for ch in text:
        if _SAFE_COMPONENT.fullmatch(ch) and ch != ".":
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    escaped = "".join(out)
    if len(escaped) > MAX_COMPONENT:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        escaped = f"{escaped[: MAX_COMPONENT - 18]}~{digest}"
    return escaped
