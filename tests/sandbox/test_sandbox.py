"""The sandbox with real worker processes: normal runs, inputs, errors, threads, restarts."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from costeer_lab import Workspace
from costeer_lab.errors import InvalidInputError, SandboxError
from costeer_lab.evaluate import (
    InProcessRunner,
    Limits,
    Sandbox,
    SandboxResult,
    SandboxSettings,
    shared_sandbox,
)

IS_ROOT = os.geteuid() == 0


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This module's own folder for run directories: other processes' sandboxes (a parallel
    test run, another user's experiment) never appear in it."""
    return tmp_path_factory.mktemp("sandbox-base")


@pytest.fixture(scope="module")
def sandbox(base_dir: Path) -> Iterator[Sandbox]:
    settings = SandboxSettings(tmp_dir=str(base_dir))
    with Sandbox(Limits(wall_time_s=30, cpu_time_s=30, memory_mb=2048), settings=settings) as sb:
        yield sb


def ws(code: str, **files: str) -> Workspace:
    return Workspace({"main.py": code, **files})


def test_normal_run_collects_stdout_and_output_file(sandbox: Sandbox) -> None:
    code = "import pandas as pd\nprint('hello', 41 + 1)\nopen('out.txt', 'w').write('result')\n"
    result = sandbox.run(ws(code), collect=["out.txt"])
    assert result.ok, result.describe()
    assert result.returncode == 0
    assert result.stdout == "hello 42\n"
    assert result.outputs == {"out.txt": b"result"}
    assert result.error is None and not result.timed_out and not result.output_truncated


def test_workspace_helper_modules_are_importable(sandbox: Sandbox) -> None:
    result = sandbox.run(
        ws("from helper import VALUE\nprint(VALUE)", **{"helper.py": "VALUE = 7"})
    )
    assert result.ok, result.describe()
    assert result.stdout == "7\n"


def test_inputs_are_read_only_copies(sandbox: Sandbox, tmp_path: Path) -> None:
    src = tmp_path / "panel.csv"
    src.write_text("a,b\n1,2\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "x.txt").write_text("x")
    code = (
        "import os, json\n"
        "st = os.lstat('data/panel.csv')\n"
        "print(json.dumps({'ino': st.st_ino, 'link': os.path.islink('data/panel.csv'),\n"
        "  'mode': oct(st.st_mode & 0o777), 'text': open('data/panel.csv').read(),\n"
        "  'dir': open('d/x.txt').read()}))\n"
    )
    result = sandbox.run(ws(code), inputs={"data/panel.csv": src, "d": tmp_path / "dir"})
    assert result.ok, result.describe()
    import json

    seen = json.loads(result.stdout)
    assert seen["ino"] != src.stat().st_ino
    assert seen["link"] is False
    assert seen["mode"] == "0o444"
    assert seen["text"] == "a,b\n1,2\n"
    assert seen["dir"] == "x"


def test_exception_gives_traceback_in_stderr_and_returncode_1(sandbox: Sandbox) -> None:
    result = sandbox.run(ws("def f():\n    raise ValueError('boom 42')\nf()\n"))
    assert result.returncode == 1
    assert not result.ok
    assert "Traceback (most recent call last)" in result.stderr
    assert "ValueError: boom 42" in result.stderr
    assert 'main.py", line 2, in f' in result.stderr
    assert "_sandbox_child" not in result.stderr  # the runner's own frames are hidden
    assert result.error is None and not result.memory_exceeded and not result.timed_out


def test_sys_exit_codes(sandbox: Sandbox) -> None:
    assert sandbox.run(ws("import sys; sys.exit(3)")).returncode == 3
    assert sandbox.run(ws("import sys; sys.exit()")).returncode == 0
    result = sandbox.run(ws("import sys; sys.exit('bad input')"))
    assert result.returncode == 1 and "bad input" in result.stderr


def test_missing_output_and_missing_main_are_reported(sandbox: Sandbox) -> None:
    result = sandbox.run(ws("print('no file written')"), collect=["result.parquet"])
    assert not result.ok
    assert result.returncode == 0
    assert result.missing_outputs == ("result.parquet",)
    assert result.error is not None and "result.parquet" in result.error
    escaping = sandbox.run(ws("print(1)", **{"../evil.py": "x = 1"}))
    assert not escaping.ok
    assert escaping.error is not None and "escapes" in escaping.error
    missing_main = sandbox.run(Workspace({"other.py": "print(1)"}))
    assert not missing_main.ok
    assert missing_main.error is not None and "main.py" in missing_main.error


def test_caller_mistakes_raise(sandbox: Sandbox, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="nope"):
        sandbox.run(ws("print(1)"), inputs={"x.csv": tmp_path / "nope.csv"})
    (tmp_path / "a.csv").write_text("1")
    with pytest.raises(InvalidInputError, match="relative"):
        sandbox.run(ws("print(1)"), inputs={"../a.csv": tmp_path / "a.csv"})
    with pytest.raises(InvalidInputError, match="relative"):
        sandbox.run(ws("print(1)"), collect=["/etc/passwd"])
    with pytest.raises(InvalidInputError, match="wall_time_s"):
        Limits(wall_time_s=0)


def test_environment_is_whitelisted(sandbox: Sandbox) -> None:
    code = "import os, json\nprint(json.dumps({**os.environ, 'cwd': os.getcwd()}))"
    result = sandbox.run(ws(code))
    import json

    env = json.loads(result.stdout)
    assert env["PYTHONHASHSEED"] == "0"
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "1"
    assert env["HOME"] == env["cwd"]
    allowed = {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONHASHSEED", "cwd"}
    allowed |= {"PYTHONDONTWRITEBYTECODE", "PYTHONNOUSERSITE", "OMP_NUM_THREADS"}
    allowed |= {"MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS"}
    assert set(env) <= allowed


def test_hash_seed_is_deterministic(sandbox: Sandbox) -> None:
    first = sandbox.run(ws("print(hash('costeer'))")).stdout
    assert first and sandbox.run(ws("print(hash('costeer'))")).stdout == first


def test_run_directories_are_removed(sandbox: Sandbox, base_dir: Path) -> None:
    sandbox.start()  # the worker keeps its view's mount point here for its whole life
    before = set(base_dir.iterdir())
    result = sandbox.run(ws("open('left.txt', 'w').write('x'); print('ok')"))
    assert result.ok and result.stdout == "ok\n"
    assert set(base_dir.iterdir()) == before


def test_many_concurrent_runs_from_threads(sandbox: Sandbox) -> None:
    def one(i: int) -> SandboxResult:
        code = f"import time\ntime.sleep(0.05)\nprint({i})\nopen('o.txt','w').write('{i}')"
        return sandbox.run(ws(code), collect=["o.txt"])

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(one, range(24)))
    for i, result in enumerate(results):
        assert result.ok, result.describe()
        assert result.stdout == f"{i}\n"
        assert result.outputs["o.txt"] == str(i).encode()


def test_worker_restarts_after_being_killed() -> None:
    with Sandbox(Limits(wall_time_s=60), preimport=()) as sb:
        assert sb.run(ws("print('before')")).ok
        first_pid = sb.worker_pid
        assert first_pid is not None
        box: list[SandboxResult] = []
        runner = threading.Thread(
            target=lambda: box.append(sb.run(ws("import time\ntime.sleep(60)")))
        )
        runner.start()
        time.sleep(0.5)
        os.kill(first_pid, signal.SIGKILL)
        runner.join(30)
        assert not runner.is_alive()
        (failed,) = box
        assert not failed.ok
        assert failed.error is not None and "died" in failed.error
        after = sb.run(ws("print('after')"))
        assert after.ok and after.stdout == "after\n"
        assert sb.worker_pid not in (None, first_pid)


def test_closed_sandbox_refuses_runs() -> None:
    sb = Sandbox(preimport=())
    sb.close()
    with pytest.raises(SandboxError, match="closed"):
        sb.run(ws("print(1)"))


def _pool_task(i: int) -> tuple[int, str]:
    result = shared_sandbox().run(ws(f"print({i} * 2)"))
    return os.getpid(), result.stdout if result.ok else result.describe()


def test_shared_sandbox_serves_a_process_pool() -> None:
    assert shared_sandbox() is shared_sandbox()
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        answers = list(pool.map(_pool_task, range(6)))
    assert [out for _, out in answers] == [f"{i * 2}\n" for i in range(6)]
    assert os.getpid() not in {pid for pid, _ in answers}


def test_describe_mentions_error_and_stderr(sandbox: Sandbox) -> None:
    text = sandbox.run(ws("raise KeyError('close')")).describe()
    assert text.startswith("exit code 1")
    assert "KeyError: 'close'" in text


def test_exit_waits_for_threads_and_runs_atexit(sandbox: Sandbox) -> None:
    code = (
        "import atexit, threading, time\n"
        "atexit.register(lambda: print('atexit ran'))\n"
        "def work():\n"
        "    time.sleep(0.2)\n"
        "    open('t.txt', 'w').write('thread done')\n"
        "threading.Thread(target=work).start()\n"
        "print('main done')\n"
    )
    result = sandbox.run(ws(code), collect=["t.txt"])
    assert result.ok, result.describe()
    assert result.stdout == "main done\natexit ran\n"
    assert result.outputs == {"t.txt": b"thread done"}


def test_a_hung_worker_is_replaced() -> None:
    settings = SandboxSettings(response_grace_s=1.0)
    with Sandbox(Limits(wall_time_s=1), preimport=(), settings=settings) as sb:
        first_pid = sb.start().worker_pid
        assert first_pid is not None
        os.kill(first_pid, signal.SIGSTOP)  # alive but never answering
        result = sb.run(ws("print('lost')"))
        assert not result.ok
        assert result.error is not None and "did not answer" in result.error
        after = sb.run(ws("print('after')"))
        assert after.ok and after.stdout == "after\n"
        assert sb.worker_pid != first_pid


def test_output_names_the_run_directory_the_same_way_every_time(sandbox: Sandbox) -> None:
    """Tracebacks name files by absolute path; the run's temporary directory is shown as
    ``<workdir>`` so the same code gives the same feedback text (knowledge content, prompts)."""
    code = "import os\nprint(os.getcwd())\nraise ValueError('bad')\n"
    results = [runner.run(ws(code)) for runner in (sandbox, sandbox, InProcessRunner())]
    for result in results:
        assert result.stdout == "<workdir>\n"
        assert 'File "<workdir>/main.py", line 3' in result.stderr, result.stderr
        assert "costeer-sbx-" not in result.stderr and "costeer_inproc_" not in result.stderr
    assert results[0].stderr == results[1].stderr
