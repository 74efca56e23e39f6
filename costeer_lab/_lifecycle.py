"""Processes that die with their run, and stay quiet on Ctrl-C.

A run starts helper processes: the process pools of the coders and the evaluators (``spawn``),
the sandbox workers (``sandbox/_proc.py``) and the local model server (``llm/_local.py``). When
the run is killed (``kill -9``, an out-of-memory kill, a closed terminal) none of them may be
left running. How each of them notices:

* **Pool workers** (:func:`process_pool`) and the **model server** (:func:`watched_argv`) run
  :func:`watch_parent`: a daemon thread holding a *pidfd* of the parent process (Linux 5.3+,
  ``os.pidfd_open``) that becomes readable when the parent exits; the worker then SIGKILLs
  itself. A pidfd names the *process*, which is why it is used rather than
  ``prctl(PR_SET_PDEATHSIG)``: the parent-death signal fires when the *thread* that forked the
  child ends, and a pool starts its workers lazily from whichever thread calls ``submit()`` — a
  short-lived thread would take healthy workers with it. The race of a parent that dies before
  the pidfd is open is closed by comparing ``os.getppid()`` with the expected parent after
  opening it (a live parent's pid cannot be reused). Where pidfds are missing, the thread polls
  ``os.getppid()`` (a reparented child sees another parent) every 0.2 s.
* **Sandbox workers** are single-threaded until their namespaces exist, so their bootstrap
  (``sandbox/_bootstrap.py``) waits on the owner's pidfd itself and SIGKILLs the worker, process
  1 of its PID namespace, whose end takes every run process with it (their uid changes do not
  matter: the kernel kills a PID namespace's members when its process 1 dies). The worker also
  exits when its request pipe reaches end-of-file (the owner was the only writer).
* The ``multiprocessing`` resource tracker exits by itself once every process holding its pipe
  is gone.

Ctrl-C in a terminal sends SIGINT to the whole foreground process group, pool workers included.
They must not print ``KeyboardInterrupt`` tracebacks: the parent alone handles the interrupt.
A pool worker starts with SIGINT *blocked* (the starting thread blocks it around the start: the
mask survives ``fork`` and ``exec``), so even a SIGINT during its imports waits; its
initializer then installs a handler that ignores SIGINT and unblocks it. A handler rather than
``SIG_IGN``: an ignored signal stays ignored across ``exec``, and the sandbox and the code it
runs must see the default SIGINT behaviour.

The spawn start method re-imports a script's main module in every worker, so a script that
starts a run at module level (no ``if __name__ == "__main__":``) would start it again in each
worker; :func:`unguarded_main_call` finds that case before any worker starts.

Stdlib only (the model-server shim loads this file by path, before ``costeer_lab`` imports).

Example:
    >>> with process_pool(1) as pool:
    ...     pool.submit(abs, -3).result()
    3
"""

from __future__ import annotations

import ast
import concurrent.futures as cf
import contextlib
import multiprocessing.context
import os
import select
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

__all__ = [
    "main_guard_message",
    "pool_worker_init",
    "process_pool",
    "quiet_spawn_context",
    "unguarded_main_call",
    "watch_parent",
    "watched_argv",
]

_POLL_S = 0.2


def _die() -> None:
    """End this process at once (SIGKILL: no clean-up that could hang on a dead parent)."""
    os.kill(os.getpid(), signal.SIGKILL)


def _open_pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:  # too old a kernel, or a seccomp filter refusing the call
        return None


def watch_parent(parent_pid: int) -> None:
    """End this process (SIGKILL) as soon as ``parent_pid``, its parent, exits.

    Returns at once: a daemon thread waits on a pidfd of the parent (or polls ``os.getppid()``
    where pidfds are missing). A parent that is already gone ends this process before the call
    returns.

    Example:
        >>> watch_parent(os.getppid())  # the caller's own parent: nothing happens while it lives
    """
    if os.getppid() != parent_pid:
        _die()
    fd = _open_pidfd(parent_pid)
    if os.getppid() != parent_pid:  # died before the pidfd was open: it may name another
        _die()
    threading.Thread(
        target=_wait_pidfd if fd is not None else _poll_parent,
        args=(fd if fd is not None else parent_pid,),
        name="costeer-lab-parent-watch",
        daemon=True,
    ).start()


def _wait_pidfd(fd: int) -> None:
    while True:
        try:
            readable, _, _ = select.select([fd], [], [])
        except InterruptedError:  # pragma: no cover - retried by Python itself (PEP 475)
            continue
        if readable:
            _die()


def _poll_parent(parent_pid: int) -> None:
    while True:
        if os.getppid() != parent_pid:
            _die()
        threading.Event().wait(_POLL_S)


def _ignore_sigint(signum: int, frame: Any) -> None:
    """The pool workers' SIGINT handler: the parent alone handles an interrupt."""


def pool_worker_init(parent_pid: int) -> None:
    """Initializer of a pool worker: ignore SIGINT (see the module docstring), then unblock it,
    and die with ``parent_pid`` (:func:`watch_parent`)."""
    signal.signal(signal.SIGINT, _ignore_sigint)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    watch_parent(parent_pid)


class _QuietSpawnProcess(multiprocessing.context.SpawnProcess):
    """A spawn process started with SIGINT blocked (its initializer unblocks it)."""

    def start(self) -> None:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            super().start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


class _QuietSpawnContext(multiprocessing.context.SpawnContext):
    Process = _QuietSpawnProcess


def quiet_spawn_context() -> multiprocessing.context.SpawnContext:
    """The ``spawn`` context whose processes start with SIGINT blocked."""
    return _QuietSpawnContext()


def process_pool(max_workers: int) -> cf.ProcessPoolExecutor:
    """A spawn process pool whose workers die with this process and ignore Ctrl-C.

    Example:
        >>> with process_pool(1) as pool:
        ...     pool.submit(pow, 2, 5).result()
        32
    """
    return cf.ProcessPoolExecutor(
        max_workers=max_workers,
        mp_context=quiet_spawn_context(),
        initializer=pool_worker_init,
        initargs=(os.getpid(),),
    )


#: Runs a Python program (``-m module`` or a script path, with its arguments) after starting
#: :func:`watch_parent`; loads this file by path (argv: this file, the parent pid, the program).
_SHIM = """
import importlib.util, runpy, sys
spec = importlib.util.spec_from_file_location("_costeer_lab_lifecycle", sys.argv[1])
life = importlib.util.module_from_spec(spec)
spec.loader.exec_module(life)
life.watch_parent(int(sys.argv[2]))
program = sys.argv[3:]
if program[0] == "-m":
    sys.argv = [program[1], *program[2:]]
    runpy.run_module(program[1], run_name="__main__", alter_sys=True)
else:
    sys.argv = program
    runpy.run_path(program[0], run_name="__main__")
"""


def watched_argv(program: Sequence[str]) -> list[str]:
    """The command line that runs the Python ``program`` (``["-m", "pkg.mod", ...]`` or
    ``["script.py", ...]``) with this interpreter, ending when the calling process ends.

    Example:
        >>> argv = watched_argv(["-m", "http.server", "0"])
        >>> argv[0] == sys.executable and argv[-3:] == ["-m", "http.server", "0"]
        True
    """
    if not program:
        raise ValueError("watched_argv needs a program: ['-m', 'module', ...] or [script, ...]")
    return [sys.executable, "-c", _SHIM, os.path.abspath(__file__), str(os.getpid()), *program]


def _is_main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either operand order)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    texts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(texts) == 1


def _guarded_lines(tree: ast.Module) -> list[tuple[int, int]]:
    return [
        (node.lineno, node.end_lineno or node.lineno) for node in tree.body if _is_main_guard(node)
    ]


def unguarded_main_call() -> str | None:
    """``"<script>:<line>"`` when the caller runs inside the top-level code of a ``__main__``
    *script* outside an ``if __name__ == "__main__":`` block (a spawned worker would re-run
    that line when it re-imports the script), else ``None`` (a guarded call, a function called
    later, a notebook or an interactive session, ``python -c``, a package's ``__main__.py`` —
    the cases ``multiprocessing.spawn`` does not re-import).

    Example:
        >>> unguarded_main_call() is None  # a doctest runs outside any script's top level
        True
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not path:
        return None
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", "") or ""
    if name == "__main__" or name.endswith(".__main__"):  # spawn does not re-import these
        return None
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is vars(main):
            break
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None
    line = frame.f_lineno
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None
    with contextlib.suppress(Exception):
        if any(start <= line <= end for start, end in _guarded_lines(tree)):
            return None
    return f"{path}:{line}"


def main_guard_message(where: str, what: str = "a run") -> str:
    """The one-line explanation of a missing ``__main__`` guard at ``where``."""
    return (
        f"{what} was started from the top level of the script {where} without "
        '`if __name__ == "__main__":`; its process workers start with "spawn", which re-imports '
        "the script in every worker (which would start it again there): put the call under that "
        "guard"
    )
