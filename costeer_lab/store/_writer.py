"""A writer process for bulk inserts into a SQLite store file.

A bulk insert spends about half its time in Python (rows, ids, embeddings, JSON) and half in
SQLite (B-tree pages, the commit). Python runs one thread at a time, and a SQLite write made
of one statement per row takes Python's lock back for every row, so a writer *thread* gains
nothing; a writer *process* with its own connection to the file does: while it writes batch
``k`` in one transaction, the caller prepares batch ``k + 1`` (see
``costeer_lab.knowledge._kb_pipeline``). The store file in WAL mode lets the caller read
meanwhile (it sees what was committed).

The two processes talk over the child's stdin and stdout in frames (an 8-byte little-endian
length, then the body). A request is ``B`` and a :class:`~costeer_lab.store.BatchWrite` as
bytes (:meth:`~costeer_lab.store.BatchWrite.to_bytes`), or ``R`` ("write again" after a
failure); each batch gets a JSON reply, in order: ``{"states": …}`` (what
:meth:`~costeer_lab.store.BaseStore.write_batch` returned), ``{"error": name, "message":
text}``, or ``{"skipped": true}`` for a batch that came after a failure and before the ``R``.
Up to two batches are outstanding: the child reads requests on a thread of its own, so the
next batch is handed over while one is written. Nothing is pickled. Closing the child's stdin
ends it.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # not on Windows
    fcntl = None  # type: ignore[assignment]

from costeer_lab import errors
from costeer_lab.errors import StoreError
from costeer_lab.store._batch import BatchWrite, CollectionState

__all__ = ["BATCH", "RESUME", "WriterProcess", "receive", "send"]

_LENGTH = struct.Struct("<Q")
#: The first byte of a request: a batch follows, or "write again" after a failure.
BATCH, RESUME = b"B", b"R"
#: How long closing waits for the child to end before killing it (seconds).
_CLOSE_WAIT_S = 30.0


class WriterProcess:
    """A child process writing :class:`~costeer_lab.store.BatchWrite` batches into a SQLite
    store file, one at a time: :meth:`submit` a batch, do other work, then :meth:`result`.

    Args:
        path: the store file (its schema already current: the caller opened it).
        synchronous: the caller's ``synchronous`` setting (the child's commits are as durable).
        busy_timeout_s: how long the child waits for another writer's lock.

    Example:
        >>> import tempfile
        >>> from costeer_lab.store import NodeRecord, SQLiteStore
        >>> path = tempfile.mkdtemp() + "/kb.db"
        >>> store = SQLiteStore(path)
        >>> with WriterProcess(path) as writer:
        ...     writer.submit(BatchWrite(nodes=store.check_nodes([NodeRecord("n1", "c", "x")])))
        ...     writer.result()
        []
        >>> store.get_node("n1").content
        'x'
    """

    def __init__(
        self,
        path: str,
        *,
        synchronous: str = "NORMAL",
        busy_timeout_s: float = 30.0,
        depth: int = 2,
    ) -> None:
        if depth < 1:
            raise StoreError(f"depth must be >= 1, got {depth!r}")
        self.path = path
        # the child's messages, read when it fails (a pipe could fill up and stop it)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, env.get("PYTHONPATH", "")) if p
        )
        try:
            self._child = subprocess.Popen(
                [sys.executable, "-m", "costeer_lab.store._writer_main", path, synchronous,
                 repr(float(busy_timeout_s))],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=env,
            )  # fmt: skip
        except BaseException:
            self._stderr.close()
            raise
        #: Batches submitted and not yet answered (at most ``depth``).
        self.depth = depth
        self._outstanding = 0
        self._resume_due = False  # a failure was read: the child skips batches until told
        _widen(self._child.stdin)

    def __enter__(self) -> WriterProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def submit(self, batch: BatchWrite) -> None:
        """Hand ``batch`` to the child, behind the batches it has not answered yet (at most
        :attr:`depth`: :meth:`result` first). The child reads it at once, so this returns
        while earlier batches are still being written."""
        if self._outstanding >= self.depth:
            raise StoreError(
                f"the writer process is still writing {self._outstanding} batches; call "
                "result() first"
            )
        stdin = self._child.stdin
        assert stdin is not None
        try:
            if self._resume_due:  # batches sent from now on are written again
                send(stdin, RESUME)
                self._resume_due = False
            send(stdin, BATCH, *batch.to_parts())
        except (BrokenPipeError, OSError) as exc:
            raise self._ended(exc) from None
        self._outstanding += 1

    def result(self) -> list[tuple[CollectionState, CollectionState]]:
        """Wait for the oldest batch not answered yet; its collection states (see
        ``write_batch``).

        When a batch fails, the child writes none of the batches submitted before this
        process read that failure (each raises "not written"): a failure stops what was
        queued behind it, and the next :meth:`submit` starts afresh.

        Raises:
            StoreError: the write failed (nothing of the batch was written), was skipped
                after an earlier failure, or the child ended; an error of the library's own
                (such as ``InvalidInputError``) keeps its type.
        """
        if self._outstanding == 0:
            raise StoreError("no batch was submitted to the writer process")
        self._outstanding -= 1
        stdout = self._child.stdout
        assert stdout is not None
        body = receive(stdout)
        if body is None:
            raise self._ended(None)
        reply = json.loads(body)
        if "states" in reply:
            return [((int(b[0]), str(b[1])), (int(a[0]), str(a[1]))) for b, a in reply["states"]]
        self._resume_due = True
        if "error" in reply:
            raise _error(reply["error"], reply["message"], self.path)
        raise StoreError(
            f"store {self.path!r}: batch not written: a batch before it failed (see its error)"
        )

    def close(self) -> None:
        """End the child (it finishes the batch it is writing first). Idempotent."""
        child = self._child
        if child.stdin is not None and not child.stdin.closed:
            with contextlib.suppress(OSError):  # a child that died: its pipe is broken
                child.stdin.close()
        try:
            child.wait(timeout=_CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
        self._stderr.close()

    def _ended(self, exc: BaseException | None) -> StoreError:
        self._child.poll()
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        why = f" ({exc})" if exc is not None else ""
        return StoreError(
            f"the writer process of store {self.path!r} ended (exit code "
            f"{self._child.returncode}){why}: {tail or 'no message'}"
        )


def _widen(pipe: IO[bytes] | None) -> None:
    """Give a pipe a 1 MiB buffer where Linux allows it (the default 64 KiB made handing
    over a batch of several MB cost a context switch per 64 KiB; the size is a hint)."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if pipe is None or setsize is None:
        return
    with contextlib.suppress(OSError):  # above /proc/sys/fs/pipe-max-size: the default
        fcntl.fcntl(pipe.fileno(), setsize, 1 << 20)


def _error(name: str, message: str, path: str) -> Exception:
    """The error the child reported, as its own class when it is one of the library's."""
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.CosteerLabError):
        return cls(message)
    return StoreError(f"store {path!r} (writer process): {name}: {message}")


def send(stream: IO[bytes], *parts: bytes) -> None:
    """One frame whose body is ``parts`` joined (written one after the other, not copied
    into one object first)."""
    stream.write(_LENGTH.pack(sum(map(len, parts))))
    for part in parts:
        stream.write(part)
    stream.flush()


def receive(stream: IO[bytes]) -> bytearray | None:
    """One frame's body (read into one buffer, no copy of its pieces); ``None`` at the end
    of the stream (the other side closed it)."""
    head = _read_exactly(stream, _LENGTH.size)
    if head is None:
        return None
    body = _read_exactly(stream, _LENGTH.unpack(head)[0])
    if body is None:
        raise StoreError("the writer process's stream ended inside a frame")
    return body


def _read_exactly(stream: IO[bytes], n: int) -> bytearray | None:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        read = stream.readinto(view[got:])  # type: ignore[attr-defined]
        if not read:
            if got == 0:
                return None
            raise StoreError(f"stream ended {n - got} bytes short of a frame")
        got += read
    return buf
