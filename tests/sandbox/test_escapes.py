"""Hostile candidates: each escape attempt fails safely and the sandbox carries on.

Every test ends with a normal run through the same sandbox to show nothing is left broken.
Limits are small so the fork bomb and the memory bomb stay harmless on a shared machine.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from costeer_lab import Workspace
from costeer_lab.evaluate import Limits, Sandbox, SandboxSettings

IS_ROOT = os.geteuid() == 0
SETTINGS = SandboxSettings()


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    limits = Limits(wall_time_s=20, cpu_time_s=20, memory_mb=1024, max_processes=12)
    with Sandbox(limits) as sb:
        yield sb


def ws(code: str) -> Workspace:
    return Workspace({"main.py": code})


def assert_still_works(sb: Sandbox) -> None:
    result = sb.run(ws("print('still fine')"))
    assert result.ok, result.describe()
    assert result.stdout == "still fine\n"


def slot_processes() -> list[int]:
    """Pids of processes (zombies included) owned by sandbox slot uids."""
    uids = range(SETTINGS.uid_base, SETTINGS.uid_base + SETTINGS.uid_slots)
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid in uids:
                    found.append(int(name))
            except OSError:
                continue
    return found


def assert_no_leftovers() -> None:
    """No process of a run survives it: all were killed (SIGKILL is delivered asynchronously)
    and reaped by the worker, so none is left running or as a zombie."""
    deadline = time.monotonic() + 20
    while slot_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert slot_processes() == []


def test_infinite_loop_times_out(sandbox: Sandbox) -> None:
    code = "import os\nprint(os.getcwd(), flush=True)\nwhile True:\n    pass"
    result = sandbox.run(ws(code), limits=Limits(wall_time_s=1.5))
    assert result.timed_out
    assert result.killed_signal == 9 and result.returncode is None
    assert result.error is not None and "wall-clock" in result.error
    assert not Path(result.stdout.strip()).exists()  # the run directory is gone after a kill
    assert_still_works(sandbox)


def test_huge_files_hit_the_file_size_limit(sandbox: Sandbox) -> None:
    code = "open('big.bin', 'wb').write(b'x' * (3 * 1024 * 1024))"
    result = sandbox.run(ws(code), limits=Limits(max_file_mb=1), collect=["big.bin"])
    assert result.returncode == 1
    assert "File too large" in result.stderr
    assert len(result.outputs.get("big.bin", b"")) <= 1024 * 1024
    assert_still_works(sandbox)


def test_cpu_limit_stops_busy_code(sandbox: Sandbox) -> None:
    result = sandbox.run(ws("while True:\n    pass"), limits=Limits(wall_time_s=60, cpu_time_s=1))
    assert result.timed_out
    assert result.error is not None and "CPU-time" in result.error
    # RLIMIT_CPU counts whole seconds of the process's whole life, its warm-up before the run
    # included, so a run gets its limit within half a second (``Limits.cpu_time_s``): CPU
    # seconds the kernel counted, whatever the load (twice the limit would be 1.5-2.5 s)
    tick = 0.05  # the kernel's accounting granularity, with margin
    assert 0.5 - tick <= result.cpu_time_s <= 1.5 + tick
    assert_still_works(sandbox)


@pytest.mark.parametrize(
    "code",
    ["x = bytearray(1280 * 1024**2)", "import numpy as np\nx = np.ones((160, 1024, 1024))"],
    ids=["bytearray", "numpy"],
)
def test_memory_bomb_is_reported(sandbox: Sandbox, code: str) -> None:
    """One allocation of 1.25 GiB against 1024 MB fails with a MemoryError at the per-process
    address-space limit (the fallback's limit, the cgroup's backstop). The kernel keeps no
    record of that, so the result reports it as unconfirmed instead of claiming the limit
    (run-wide kernel kills: ``test_budget.py``)."""
    result = sandbox.run(ws(code))
    assert not result.ok and result.returncode == 1
    assert "MemoryError" in result.stderr
    assert not result.memory_exceeded
    assert result.error is not None and "did not confirm" in result.error
    assert "1024 MB" in result.error
    assert_still_works(sandbox)


def test_fork_bomb_hits_the_process_limit(sandbox: Sandbox) -> None:
    bomb = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    result = sandbox.run(ws(bomb), limits=Limits(wall_time_s=2, max_processes=8))
    assert result.timed_out and not result.ok
    if IS_ROOT:
        assert result.process_limit_hit
        assert_no_leftovers()
    assert_still_works(sandbox)


def test_escaped_background_process_is_killed(sandbox: Sandbox) -> None:
    code = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(300)\nprint('ok')"
    result = sandbox.run(ws(code))
    assert result.ok
    if IS_ROOT:
        assert_no_leftovers()
    assert_still_works(sandbox)


@pytest.mark.skipif(not IS_ROOT, reason="file permissions bind the run only when it drops root")
def test_writing_the_input_fails_and_the_original_is_untouched(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    src = tmp_path / "prices.csv"
    src.write_text("original")
    code = (
        "import os\n"
        "for attempt in (lambda: open('prices.csv', 'a').write('hacked'),\n"
        "                lambda: os.chmod('prices.csv', 0o666)):\n"
        "    try:\n"
        "        attempt()\n"
        "        print('WROTE')\n"
        "    except OSError as exc:\n"
        "        print('denied', exc.errno)\n"
        f"open({str(src)!r}, 'a').write('hacked')\n"
    )
    result = sandbox.run(ws(code), inputs={"prices.csv": src})
    assert "WROTE" not in result.stdout
    # EACCES, then EPERM (a read-only copy in a work directory on disk) or EROFS (an input
    # bound read-only into the run's private work area)
    assert result.stdout.splitlines() in (["denied 13", "denied 1"], ["denied 13", "denied 30"])
    assert result.returncode == 1 and "FileNotFoundError" in result.stderr  # not in the view
    assert src.read_text() == "original"
    assert_still_works(sandbox)


def test_secrets_in_the_parent_environment_are_invisible(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123")
    code = (
        "import os, json, subprocess\n"
        "seen = {'env': os.environ.get('OPENAI_API_KEY'),\n"
        "        'child': subprocess.run(['env'], capture_output=True, text=True).stdout}\n"
        f"for pid in (os.getppid(), 1, {os.getpid()}):\n"
        "    try:\n"
        "        data = open(f'/proc/{pid}/environ', 'rb').read()\n"
        "        seen[str(pid)] = data.decode(errors='replace')\n"
        "    except OSError as exc:\n"
        "        seen[str(pid)] = type(exc).__name__\n"
        "print(json.dumps(seen))\n"
    )
    with Sandbox(Limits(wall_time_s=20), preimport=()) as sb:
        result = sb.run(ws(code))
        assert result.ok, result.describe()
        assert "sk-test-secret-123" not in result.stdout
        seen = json.loads(result.stdout)
        assert seen["env"] is None
        # the run is process 1 of its own PID namespace: no other process is even visible
        assert seen[str(os.getpid())] == "FileNotFoundError"
        assert_still_works(sb)


def test_network_connection_to_a_local_listener_fails(sandbox: Sandbox) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        code = (
            "import socket\n"
            f"socket.create_connection(('127.0.0.1', {port}), timeout=3).close()\n"
            "print('connected')\n"
        )
        result = sandbox.run(ws(code))
        if result.network_isolated:
            assert not result.ok and "connected" not in result.stdout
            assert "OSError" in result.stderr or "Error" in result.stderr
        else:  # the platform gave no isolation, and the result says so
            assert sandbox.isolation.get("network_isolated") is False
        allowed = sandbox.run(ws(code), limits=Limits(network=True))
        assert allowed.ok and allowed.stdout == "connected\n"
        assert allowed.network_isolated is False
    assert_still_works(sandbox)


def test_printing_100_mb_is_truncated_with_head_and_tail(sandbox: Sandbox) -> None:
    code = (
        "import sys\n"
        "sys.stdout.write('FIRST LINE\\n')\n"
        "line = 'x' * 1023 + '\\n'\n"
        "for _ in range(100 * 1024):\n"
        "    sys.stdout.write(line)\n"
        "sys.stdout.write('LAST LINE\\n')\n"
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = sandbox.run(ws(code), limits=Limits(max_output_bytes=10_000))
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert result.ok and result.output_truncated
    assert result.stdout.startswith("FIRST LINE\n")
    assert result.stdout.endswith("LAST LINE\n")
    assert "bytes of output truncated by the sandbox" in result.stdout
    assert len(result.stdout) < 11_000
    assert grown_kb < 50 * 1024
    assert_still_works(sandbox)


def test_symlinked_or_special_outputs_are_refused(sandbox: Sandbox) -> None:
    code = "import os\nos.symlink('/etc/passwd', 'out.txt')\nos.mkfifo('pipe.txt')\n"
    result = sandbox.run(ws(code), collect=["out.txt", "pipe.txt"])
    assert result.outputs == {}
    assert set(result.missing_outputs) == {"out.txt", "pipe.txt"}
    assert result.error is not None and "refused" in result.error
    assert_still_works(sandbox)


def test_the_run_sees_only_its_view(sandbox: Sandbox, tmp_path: Path) -> None:
    """Host files outside the view — the caller's home, the project package, the caller's
    temporary files — do not exist for the run; the allowlisted libraries do."""
    import costeer_lab

    canary = tmp_path / "canary.txt"
    canary.write_text("secret")
    home = Path.home()
    paths = [str(canary), costeer_lab.__file__, str(home / ".bashrc")]
    code = (
        "import json, os, importlib.util\n"
        f"paths = {paths!r}\n"
        f"home = os.listdir({str(home)!r}) if os.path.isdir({str(home)!r}) else []\n"
        "print(json.dumps({'exists': [os.path.exists(p) for p in paths], 'home': home,\n"
        "    'costeer_lab': importlib.util.find_spec('costeer_lab') is not None,\n"
        "    'pandas': importlib.util.find_spec('pandas') is not None}))\n"
    )
    result = sandbox.run(ws(code))
    assert result.ok, result.describe()
    seen = json.loads(result.stdout)
    assert seen["exists"] == [False, False, False]
    assert not seen["costeer_lab"] and seen["pandas"]
    python_dirs = {p.relative_to(home).parts[0] for p in map(Path, (sys.prefix, sys.base_prefix))
                   if p.is_relative_to(home)}  # fmt: skip
    assert set(seen["home"]) <= python_dirs


def test_the_run_is_alone_in_its_pid_namespace(sandbox: Sandbox) -> None:
    """Only the run's own processes are visible; its command line no longer shows the
    worker's (package path, configuration); its init can be neither seen nor signalled; and
    it is an ordinary process: a signal it sends itself acts as usual."""
    import costeer_lab

    package_dir = os.path.dirname(os.path.dirname(costeer_lab.__file__))
    code = (
        "import json, os, signal\n"
        "out = {'pid': os.getpid(), 'procs': sorted(p for p in os.listdir('/proc')\n"
        "                                            if p.isdigit()),\n"
        "       'cmdline': open('/proc/self/cmdline', 'rb').read().decode(errors='replace')}\n"
        "try:\n"
        "    os.kill(1, signal.SIGKILL)\n"
        "    out['kill_init'] = 'sent'\n"
        "except OSError as exc:\n"
        "    out['kill_init'] = exc.errno\n"
        "print(json.dumps(out), flush=True)\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
    )
    result = sandbox.run(ws(code))
    assert result.killed_signal == signal.SIGTERM, result.describe()
    out = json.loads(result.stdout)
    assert out["procs"] == [str(out["pid"])]
    assert package_dir not in out["cmdline"] and "main.py" in out["cmdline"]
    assert out["kill_init"] != "sent"
    assert_still_works(sandbox)
