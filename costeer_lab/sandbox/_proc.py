"""The caller's handle on one sandbox worker process (``_worker.py``).

Requests are JSON lines written under a lock; a reader thread routes each response line to the
waiting caller by request id, so any number of threads can have runs in flight. When the worker
dies, every pending request is answered with ``{"worker_died": reason}``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import costeer_lab
from costeer_lab.errors import SandboxError

__all__ = ["WorkerProcess", "minimal_env"]


#: Starts the worker without running the ``costeer_lab`` and ``costeer_lab.sandbox`` package
#: ``__init__`` files: placeholder packages point at the source directories, so the worker loads
#: only its own stdlib-only modules (plus the pre-imports), stays small (cheap forks) and does not
#: depend on the rest of the library importing cleanly. Namespaces come first, while the process
#: has one thread (``_bootstrap.py``). Runs remove the placeholders.
_BOOTSTRAP = """
import os, sys, types
root = sys.argv[1]
sys.path[:] = [p for p in sys.path if p]
for name in ("costeer_lab", "costeer_lab.sandbox"):
    stub = types.ModuleType(name)
    stub.__path__ = [os.path.join(root, *name.split("."))]
    stub.__costeer_placeholder__ = True
    sys.modules[name] = stub
from costeer_lab.sandbox._bootstrap import enter_namespaces
namespaces = enter_namespaces(int(sys.argv[3]))
from costeer_lab.sandbox._worker import main
sys.exit(main(sys.argv[1:], namespaces))
"""


def minimal_env(home: str) -> dict[str, str]:
    """The whitelisted environment of the worker and of every run: no secrets are inherited."""
    return {
        "PATH": os.pathsep.join(
            [os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]
        ),
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
    }


class WorkerProcess:
    """A started worker. ``request`` blocks until the answer, a timeout (``None``) or death."""

    def __init__(self, config: Mapping[str, Any], start_timeout_s: float) -> None:
        self.owner_pid = os.getpid()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._ready = threading.Event()
        self.info: dict[str, Any] = {}
        self.alive = True
        self._log = tempfile.TemporaryFile(prefix="costeer-sbx-worker-")  # noqa: SIM115
        package_root = str(Path(costeer_lab.__file__).resolve().parent.parent)
        env = minimal_env("/")
        owner = str(os.getpid())  # the worker dies with this process (``_bootstrap.py``)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BOOTSTRAP, package_root, json.dumps(dict(config)), owner],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            cwd="/",
            start_new_session=True,
        )
        self.pid = self.proc.pid  # the bootstrap; the worker's own id once it is ready
        self._reader = threading.Thread(target=self._read_loop, name="sandbox-reader", daemon=True)
        self._reader.start()
        if not self._ready.wait(start_timeout_s) or not self.info.get("ready"):
            self.kill()
            raise SandboxError(
                f"sandbox worker did not start within {start_timeout_s} s: {self.log_tail()}"
            )
        self.pid = int(self.info.get("pid") or self.proc.pid)

    def log_tail(self, limit: int = 2000) -> str:
        """The end of the worker's stderr log (for error messages)."""
        try:
            with open(self._log.fileno(), "rb", closefd=False) as fh:
                fh.seek(0, os.SEEK_END)
                fh.seek(max(0, fh.tell() - limit))
                return fh.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""

    def _read_loop(self) -> None:
        stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        for raw in stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if message.get("ready"):
                self.info = message
                self._ready.set()
                continue
            with self._lock:
                waiter = self._pending.pop(int(message.get("id", -1)), None)
            if waiter is not None:
                waiter[1].append(message)
                waiter[0].set()
        code = self.proc.wait()
        reason = f"sandbox worker {self.pid} died (exit status {code})"
        tail = self.log_tail(500)
        if tail:
            reason += f": {tail}"
        with self._lock:
            self.alive = False
            pending, self._pending = self._pending, {}
        for event, box in pending.values():
            box.append({"worker_died": reason})
            event.set()
        self._ready.set()

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        """Send ``message`` and wait for its answer; ``None`` when ``timeout`` passes first."""
        event, box = threading.Event(), []  # type: tuple[threading.Event, list[dict[str, Any]]]
        with self._lock:
            if not self.alive:
                return {"worker_died": f"sandbox worker {self.pid} is not running"}
            req_id = next(self._ids)
            self._pending[req_id] = (event, box)
        data = (json.dumps({**message, "id": req_id}) + "\n").encode()
        try:
            with self._write_lock:
                stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
                stdin.write(data)
                stdin.flush()
        except (OSError, ValueError):
            pass  # the reader thread answers every pending request when it sees the death
        if not event.wait(timeout):
            with self._lock:
                self._pending.pop(req_id, None)
            return None
        return box[0]

    def kill(self) -> None:
        """Kill the worker (and with it, process 1 of their namespace, every run)."""
        for pid in {self.pid, self.proc.pid}:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self._finish(5.0)

    def close(self, timeout: float = 10.0) -> None:
        """Ask the worker to stop (stdin closed: it kills its runs and exits), then reap it."""
        with contextlib.suppress(OSError, ValueError), self._write_lock:
            self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                self.proc.kill()
        self._finish(timeout)

    def _finish(self, timeout: float) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout)
        if self._reader is not threading.current_thread():
            self._reader.join(timeout)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()
        with contextlib.suppress(OSError):
            self._log.close()
