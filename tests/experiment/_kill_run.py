"""Start a real ``costeer-lab run``, wait for its workers, SIGKILL it, and report which of the
processes it had started are still alive 10 s later (JSON on stdout).

Run as a script (``python _kill_run.py REPO SPEC_JSON``) so ``test_lifecycle.py`` can run it as
root and as an ordinary user (``run_as_unprivileged``). Stdlib only. A process is recorded by
pid and start time (a recycled pid is not the same process); a zombie counts as ended (it runs
nothing and holds no memory; its reaping is its new parent's business).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def _stat(pid: int) -> tuple[str, int, int] | None:
    """``(state, ppid, start time)`` of ``pid``, or ``None`` when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read().decode(errors="replace")
    except OSError:
        return None
    rest = text[text.rfind(")") + 2 :].split()
    return rest[0], int(rest[1]), int(rest[19])


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def descendants(root: int) -> dict[tuple[int, int], str]:
    """Every live descendant of ``root``: (pid, start time) -> command line."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                children.setdefault(st[1], []).append(int(name))
    out: dict[tuple[int, int], str] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        st = _stat(pid)
        if st is None:
            continue
        out[(pid, st[2])] = _cmdline(pid)
        todo += children.get(pid, [])
    return out


def alive(pid: int, start: int) -> bool:
    st = _stat(pid)
    return st is not None and st[2] == start and st[0] not in ("Z", "X")


def kind(cmdline: str) -> str:
    """What a process of a run is: a pool worker, a sandbox worker's bootstrap, other."""
    if "spawn_main" in cmdline:
        return "pool"
    if "enter_namespaces" in cmdline:
        return "sandbox"
    return "other"


def has_workers(tree: dict[tuple[int, int], str]) -> bool:
    """Two pool workers and a sandbox worker are running."""
    kinds = [kind(c) for c in tree.values()]
    return kinds.count("pool") >= 2 and "sandbox" in kinds


def main(repo: str, spec_json: str) -> int:
    work = tempfile.mkdtemp(prefix="kill-run-")
    spec_path = os.path.join(work, "spec.json")
    with open(spec_path, "w", encoding="utf-8") as fh:
        fh.write(spec_json)
    env = {**os.environ, "PYTHONPATH": repo}
    argv = [sys.executable, "-m", "costeer_lab", "run", spec_path, "--out", "run", "--quiet"]
    proc = subprocess.Popen(
        argv, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    recorded: dict[tuple[int, int], str] = {}
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        tree = descendants(proc.pid)
        recorded.update(tree)
        if has_workers(tree):
            break
        time.sleep(0.1)
    if proc.poll() is not None or not has_workers(recorded):
        proc.kill()
        err = proc.communicate()[1].decode(errors="replace")
        print(json.dumps({"error": f"no workers seen (exit {proc.returncode}): {err[-2000:]}"}))
        return 1
    time.sleep(1.0)  # let the pools and sandboxes settle into their work
    recorded.update(descendants(proc.pid))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = []
    end = time.monotonic() + 10.0  # the bound
    while True:
        left = [(pid, start) for (pid, start) in recorded if alive(pid, start)]
        if not left or time.monotonic() > end:
            break
        time.sleep(0.1)
    print(
        json.dumps(
            {
                "uid": os.getuid(),
                "recorded": [[p, s, kind(c)] for (p, s), c in recorded.items()],
                "left": [[p, s, recorded[(p, s)][:200]] for p, s in left],
            }
        )
    )
    for pid, _ in left:  # never leave them behind, even when the test fails
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
