"""The run's lifecycle: nothing left running after ``kill -9``, one run per ``--out``, a quiet
Ctrl-C, and one line for a script without ``if __name__ == "__main__":``.

Every test starts real ``costeer-lab`` processes; processes are followed through ``/proc``
(pid and start time). The bound of 10 s for the processes of a killed run is the issue's; the
loops poll up to it and assert nothing about speed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.experiment._outlock import LOCK_FILE, check_out_free
from tests._processes import default_sigint

from ._kill_run import alive, descendants, has_workers

REPO = Path(__file__).resolve().parents[2]
KILL_RUN = Path(__file__).with_name("_kill_run.py")
INTERRUPTED = "costeer-lab: interrupted (rerun the same command to resume)"

#: A run long enough to be caught mid-way: process executor with 2 workers, sandboxed checks.
LONG_SPEC: dict[str, Any] = {
    "name": "lifecycle",
    "suite": "humaneval",
    "suite_options": {"limit": 160},
    "tasks": {"split": "test"},
    "seed_knowledge": {"split": "train"},
    "arms": [{"name": "none", "rag": "none"}, {"name": "v1", "rag": "v1"}],
    "seeds": [0, 1],
    "max_loop": 5,
    "parallelism": {"executor": "process", "workers": 2},
}


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _start(tmp_path: Path, out: str, **popen: Any) -> subprocess.Popen[str]:
    spec = tmp_path / "long.json"
    spec.write_text(json.dumps(LONG_SPEC), encoding="utf-8")
    argv = [sys.executable, "-m", "costeer_lab", "run", str(spec), "--out", out, "--quiet"]
    return subprocess.Popen(
        argv,
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def _wait_for(proc: subprocess.Popen[str], ready: Any, what: str) -> dict[tuple[int, int], str]:
    """Poll the run's process tree until ``ready(tree)``; returns every process seen."""
    seen: dict[tuple[int, int], str] = {}
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the run ended before {what}: {proc.communicate()[1]}"
        tree = descendants(proc.pid)
        seen.update(tree)
        if ready(tree):
            return seen
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"no {what} within 600 s")


def _left_after(recorded: dict[tuple[int, int], str], bound_s: float = 10.0) -> list[str]:
    end = time.monotonic() + bound_s
    while True:
        left = [c for (pid, start), c in recorded.items() if alive(pid, start)]
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.1)


def _report(lines: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(lines[-1])
    assert "error" not in report, report["error"]
    return report


def _check_report(report: dict[str, Any]) -> None:
    kinds = [r[2] for r in report["recorded"]]
    assert kinds.count("pool") >= 2  # the process pools' workers
    assert "sandbox" in kinds  # a sandbox worker's bootstrap (its worker and runs below it)
    assert len(kinds) >= 6
    assert report["left"] == [], report["left"]


def test_sigkill_of_a_run_leaves_no_process_after_10_s() -> None:
    done = subprocess.run(
        [sys.executable, str(KILL_RUN), str(REPO), json.dumps(LONG_SPEC)],
        capture_output=True,
        text=True,
        timeout=900,
        env=_env(),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = _report(done.stdout.strip().splitlines())
    assert report["uid"] == os.getuid()
    _check_report(report)


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="the unprivileged pass is started by root (run_as_unprivileged)",
)
def test_sigkill_of_an_unprivileged_run_leaves_no_process_after_10_s() -> None:
    """The same as an ordinary user: the sandbox then isolates with user namespaces."""
    from costeer_lab.testing._unprivileged import run_as_unprivileged

    done = run_as_unprivileged(
        [sys.executable, str(KILL_RUN), str(REPO), json.dumps(LONG_SPEC)],
        cwd=REPO,
        timeout_s=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = _report(done.stdout.strip().splitlines())
    assert report["uid"] != 0
    _check_report(report)


def test_a_second_run_on_a_busy_out_ends_in_one_line(tmp_path: Path) -> None:
    first = _start(tmp_path, "run")
    try:
        _wait_for(first, lambda _: (tmp_path / "run" / "spec.json").exists(), "spec.json")
        for extra in ([], ["--fresh"]):
            spec = str(tmp_path / "long.json")
            second = subprocess.run(
                [sys.executable, "-m", "costeer_lab", "run", spec, "--out", "run", *extra],
                cwd=tmp_path,
                env=_env(),
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert second.returncode == 2
            assert second.stdout == ""
            pattern = (
                r"costeer-lab: error: --out 'run' is in use by another run "
                rf"\(pid {first.pid}, started \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d\); "
                r"wait for it or choose another --out"
            )
            assert re.fullmatch(pattern, second.stderr.strip()), second.stderr
        assert first.poll() is None  # the first run goes on, untouched
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()
    # the kernel released the lock with the killed run: the folder is free again
    assert (tmp_path / "run" / LOCK_FILE).is_file()
    check_out_free(tmp_path / "run")


def test_ctrl_c_to_the_process_group_prints_one_line_and_no_worker_traceback(
    tmp_path: Path,
) -> None:
    """What a terminal does: SIGINT to every process of the foreground group (the run and its
    pool workers; the sandbox workers have sessions of their own)."""
    proc = _start(tmp_path, "run", start_new_session=True, preexec_fn=default_sigint)
    seen = _wait_for(proc, has_workers, "pool and sandbox workers")
    time.sleep(1.0)  # the workers are evaluating
    seen.update(descendants(proc.pid))
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert err == INTERRUPTED + "\n", err
    assert _left_after(seen) == []
    assert (tmp_path / "run" / "spec.json").is_file()  # the folder holds the run to resume


_SCRIPT = """\
from costeer_lab.experiment import run_experiment

SPEC = {spec!r}
{call}
"""


@pytest.mark.parametrize("guarded", [False, True], ids=["no_guard", "guard"])
def test_a_script_without_the_main_guard_is_refused_in_one_line(
    tmp_path: Path, guarded: bool
) -> None:
    spec = {**LONG_SPEC, "suite_options": {"limit": 4}, "seeds": [0], "max_loop": 1}
    call = 'run_experiment(SPEC, "out", progress=False)'
    if guarded:
        call = 'if __name__ == "__main__":\n' + textwrap.indent(call, "    ")
    script = tmp_path / "experiment.py"
    script.write_text(_SCRIPT.format(spec=spec, call=call), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if guarded:
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "out" / "results.parquet").is_file()
        return
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("costeer_lab.errors.ConfigurationError: run_experiment was started")
    assert f"{script}:4" in last and 'if __name__ == "__main__":' in last
    assert "RuntimeError" not in done.stderr and "bootstrapping" not in done.stderr
    assert len(done.stderr.splitlines()) < 15  # the script's own short traceback, no worker's
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_a_watched_program_ends_with_the_process_that_started_it(tmp_path: Path) -> None:
    """``watched_argv`` (the local model server's start): SIGKILL of the starter ends it."""
    program = tmp_path / "server.py"
    program.write_text("import time\nwhile True:\n    time.sleep(1)\n", encoding="utf-8")
    starter = (
        "import subprocess, sys, time\n"
        "from costeer_lab._lifecycle import watched_argv\n"
        f"child = subprocess.Popen(watched_argv([{str(program)!r}]))\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", starter], env=_env(), stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    seen = _wait_for(proc, lambda tree: any("server.py" in c for c in tree.values()), "child")
    assert any(pid == child for pid, _ in seen)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert _left_after(seen) == []
