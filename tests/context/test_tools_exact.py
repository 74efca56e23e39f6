"""Exact outputs of the agent's tools (``write_file``, ``read_file``, ``run_python``,
``evaluate``, ``answer``, ``validate``), fast enough for the mutation run of
``context/_tools.py``.

``run_python`` and ``evaluate`` go through :class:`LocalRunner`, a stand-in for the sandbox that
runs the workspace's main file in a real Python subprocess (no isolation) and reports a fixed
duration, so every metadata value is known exactly; it also records the workspace and limits the
tool box handed over. The real sandbox runs of these tools are in ``test_agent.py`` and
``test_runs.py``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.context import Output, TaskContext, ToolBox, Validator
from costeer_lab.context._tools import _EVAL_MAIN, _RUNNER
from costeer_lab.records import Workspace
from costeer_lab.sandbox import Limits, SandboxResult

_DURATION = 0.123456  # rounded to 4 places in the metadata: 0.1235


class LocalRunner:
    """Runs ``workspace.main_file`` with this Python in a fresh directory; records each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[Workspace, Limits | None]] = []

    def run(self, workspace: Workspace, *, limits: Limits | None = None) -> SandboxResult:
        self.calls.append((workspace, limits))
        with tempfile.TemporaryDirectory() as tmp:
            workspace.write_to(tmp)
            proc = subprocess.run(
                [sys.executable, workspace.main_file],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        error = None if proc.returncode == 0 else f"exit code {proc.returncode}"
        return SandboxResult(
            proc.returncode, proc.stdout, proc.stderr, False, False, False, None, False, False,
            _DURATION, {}, error, isolation="local-test",
        )  # fmt: skip


LIMITS = Limits(wall_time_s=7, cpu_time_s=7, memory_mb=512)


@pytest.fixture
def runner() -> LocalRunner:
    return LocalRunner()


@pytest.fixture
def tools(tmp_path: Path, runner: LocalRunner) -> ToolBox:
    return ToolBox(tmp_path / "work", sandbox=runner, limits=LIMITS)  # type: ignore[arg-type]


# -- construction ------------------------------------------------------------------------------
def test_the_work_directory_is_created_with_its_parents(tmp_path: Path) -> None:
    tools = ToolBox(tmp_path / "a" / "b" / "work")
    assert tools.workdir == (tmp_path / "a" / "b" / "work").resolve() and tools.workdir.is_dir()
    ToolBox(tmp_path / "a" / "b" / "work")  # an existing directory is fine
    assert tools.limits == Limits(wall_time_s=30, cpu_time_s=30, memory_mb=2048)
    assert tools.validator is None
    validator = Validator()
    assert ToolBox(tmp_path, validator=validator, limits=LIMITS).validator is validator
    assert ToolBox(tmp_path, limits=LIMITS).limits is LIMITS


# -- write_file / read_file --------------------------------------------------------------------
def test_write_file_writes_utf8_and_reports_it(tools: ToolBox) -> None:
    out = tools.run("write_file", {"path": "pkg/notes.md", "content": "café ✓"}, None)
    files = {"pkg/notes.md": "café ✓"}
    assert out == Output(True, "wrote pkg/notes.md (6 characters)", files=files)
    assert (tools.workdir / "pkg" / "notes.md").read_bytes() == "café ✓".encode()


@pytest.mark.parametrize("tool", ["write_file", "read_file", "run_python", "evaluate"])
def test_bad_paths_are_refused_with_a_reason(
    tools: ToolBox, runner: LocalRunner, tool: str
) -> None:
    def run(path: Any) -> Output:
        return tools.run(tool, {"path": path, "content": "x"}, None)

    for path in ("../x.py", "a/../../x.py", "/etc/passwd", "/tmp/x.py"):
        assert run(path) == Output(
            False, f"path {path!r} escapes the work directory; give a path relative to it"
        )
    for bad in (None, 5, "", "   "):
        assert run(bad) == Output(
            False, f"input 'path' must be a non-empty relative path; got {bad!r}"
        )
    assert tools.run(tool, {}, None) == Output(
        False, "input 'path' must be a non-empty relative path; got None"
    )
    assert sorted(p.name for p in tools.workdir.iterdir()) == [] and runner.calls == []


def test_write_file_refuses_content_that_is_not_text(tools: ToolBox) -> None:
    assert tools.run("write_file", {"path": "a.txt", "content": 3}, None) == Output(
        False, "input 'content' must be text; got int"
    )
    assert tools.run("write_file", {"path": "a.txt"}, None) == Output(
        False, "input 'content' must be text; got NoneType"
    )
    assert not (tools.workdir / "a.txt").exists()


def test_read_file_returns_the_text_and_whether_it_was_cut(tools: ToolBox) -> None:
    (tools.workdir / "exact.txt").write_text("é" * 100_000, encoding="utf-8")
    (tools.workdir / "long.txt").write_text("ab" * 50_000 + "Z", encoding="utf-8")
    (tools.workdir / "bad.txt").write_bytes(b"ok \xff end")
    assert tools.run("read_file", {"path": "exact.txt"}, None) == Output(
        True, "é" * 100_000, metadata={"truncated": False}
    )
    assert tools.run("read_file", {"path": "long.txt"}, None) == Output(
        True, "ab" * 50_000, metadata={"truncated": True}
    )
    # undecodable bytes are replaced, never an exception
    assert tools.run("read_file", {"path": "bad.txt"}, None) == Output(
        True, "ok \ufffd end", metadata={"truncated": False}
    )
    assert tools.run("read_file", {"path": "missing.txt"}, None) == Output(
        False, "no file 'missing.txt' in the work directory"
    )
    (tools.workdir / "folder").mkdir()
    assert tools.run("read_file", {"path": "folder"}, None) == Output(
        False, "no file 'folder' in the work directory"
    )


# -- run_python --------------------------------------------------------------------------------
def test_run_python_runs_the_work_directory_and_reports_exactly(
    tools: ToolBox, runner: LocalRunner
) -> None:
    work = tools.workdir
    (work / "lib").mkdir()
    (work / "lib" / "helper.py").write_text("WORD = 'héllo'\n", encoding="utf-8")
    (work / "main.py").write_text(
        "import sys\nsys.path.insert(0, 'lib')\nfrom helper import WORD\nprint(WORD)\n"
        "print('x' * 4100)\n",
        encoding="utf-8",
    )
    (work / "blob.bin").write_bytes(b"\xff\xfe\x00")  # not text: left out of the workspace
    (work / "big.txt").write_text("y" * 1_000_001)  # over the 1 MB cap: left out
    (work / "edge.txt").write_text("z" * 1_000_000)  # exactly the cap: kept
    (work / "zz.txt").write_text("last", encoding="utf-8")  # after the skipped file
    out = tools.run("run_python", {"path": "main.py"}, None)
    stdout = "héllo\n" + "x" * 4100 + "\n"
    assert out.success and out.metadata == {
        "returncode": 0,
        "duration_s": 0.1235,
        "isolation": "local-test",
        "stdout": stdout[-4000:],
    }
    assert out.result == "exit code 0 after 0.12 s\n--- stdout ---\n…" + stdout[-4000:].rstrip()
    [(ws, limits)] = runner.calls
    assert limits is LIMITS and ws.main_file == "main.py"
    assert sorted(ws.files) == ["edge.txt", "lib/helper.py", "main.py", "zz.txt"]
    assert ws.files["lib/helper.py"] == "WORD = 'héllo'\n" and ws.files["zz.txt"] == "last"


def test_run_python_reports_a_failing_script(tools: ToolBox) -> None:
    (tools.workdir / "tools").mkdir()
    (tools.workdir / "tools" / "fail.py").write_text("print('before')\nraise SystemExit(3)\n")
    out = tools.run("run_python", {"path": "tools/fail.py"}, None)
    assert out == Output(
        False,
        "exit code 3 after 0.12 s\n--- stdout ---\nbefore",
        metadata={"returncode": 3, "duration_s": 0.1235, "isolation": "local-test",
                  "stdout": "before\n"},
    )  # fmt: skip


@pytest.mark.parametrize(("tool", "kind"), [("run_python", "Python"), ("evaluate", "Python test")])
def test_only_existing_python_files_run(
    tools: ToolBox, runner: LocalRunner, tool: str, kind: str
) -> None:
    (tools.workdir / "notes.txt").write_text("print(1)")
    (tools.workdir / "pkg.py").mkdir()
    for path in ("notes.txt", "absent.py", "pkg.py"):
        assert tools.run(tool, {"path": path}, None) == Output(
            False, f"no {kind} file {path!r} in the work directory"
        )
    assert runner.calls == []


# -- evaluate ----------------------------------------------------------------------------------
_TESTS = """from gcd import gcd

def test_small():
    assert gcd(12, 18) == 6

def test_wrong():
    assert gcd(2, 4) == 3

def test_zero():
    assert gcd(0, 5) == 5

helper_value = 1
test_not_callable = 7
"""


def test_evaluate_runs_each_test_function_and_lists_the_results(
    tools: ToolBox, runner: LocalRunner
) -> None:
    work = tools.workdir
    (work / "gcd.py").write_text(
        "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
    )
    (work / "tests").mkdir()
    (work / "tests" / "check_gcd.py").write_text("import sys\nsys.path.insert(0, '.')\n" + _TESTS)
    out = tools.run("evaluate", {"path": "tests/check_gcd.py"}, None)
    assert not out.success and out.metadata["returncode"] == 1
    assert out.metadata["passed"] == ["test_small", "test_zero"]
    assert out.metadata["failed"] == ["test_wrong"]
    assert out.metadata["duration_s"] == 0.1235 and out.metadata["isolation"] == "local-test"
    assert out.metadata["stdout"] == "PASS test_small\nFAIL test_wrong\nPASS test_zero\nfailed 1\n"
    assert list(out.metadata) == [
        "returncode", "duration_s", "isolation", "passed", "failed", "stdout",
    ]  # fmt: skip
    assert out.result.startswith("exit code 1 after 0.12 s\n--- stdout ---\nPASS test_small\n")
    assert "AssertionError" in out.result
    [(ws, limits)] = runner.calls
    assert limits is LIMITS and ws.main_file == _EVAL_MAIN
    assert sorted(ws.files) == [_EVAL_MAIN, "gcd.py", "tests/check_gcd.py"]
    assert ws.files[_EVAL_MAIN] == _RUNNER.format(folder="tests", module="check_gcd")


def test_evaluate_passes_when_every_test_passes(tools: ToolBox) -> None:
    body = "def test_a():\n    print('x' * 4100)\n\ndef test_b():\n    pass\n"
    (tools.workdir / "test_top.py").write_text(body)
    out = tools.run("evaluate", {"path": "test_top.py"}, None)
    stdout = "x" * 4100 + "\nPASS test_a\nPASS test_b\nfailed 0\n"
    assert out == Output(
        True,
        "exit code 0 after 0.12 s\n--- stdout ---\n…" + stdout[-4000:].rstrip(),
        metadata={"returncode": 0, "duration_s": 0.1235, "isolation": "local-test",
                  "passed": ["test_a", "test_b"], "failed": [], "stdout": stdout[-4000:]},
    )  # fmt: skip


# -- answer / validate / unknown tools ---------------------------------------------------------
def test_answer_keeps_the_text_and_its_sources(tools: ToolBox) -> None:
    answer = {"text": "42", "sources": ["a.md", 3]}
    assert tools.run("answer", answer, None) == Output(
        True, "42", metadata={"sources": ["a.md", "3"]}
    )
    assert tools.run("answer", {"text": "42", "sources": "a.md"}, None) == Output(
        True, "42", metadata={"sources": ["a.md"]}
    )
    no_sources = Output(True, "42", metadata={"sources": []})
    assert tools.run("answer", {"text": "42"}, None) == no_sources
    for text in (None, "", "  \n", 42):
        assert tools.run("answer", {"text": text}, None) == Output(
            False, f"input 'text' must be a non-empty string; got {text!r}"
        )


def test_validate_reports_the_completion_rule(tools: ToolBox) -> None:
    assert tools.run("validate", {}, None) == Output(False, "validate needs the task's context")
    ctx = TaskContext("t", "simple_question", "6 * 7?")
    report = Validator().validate(ctx)
    assert tools.run("validate", {"ignored": 1}, ctx) == Output(
        report.completed,
        report.rationale,
        metadata={"confidence": report.confidence, "missing": list(report.missing)},
    )
    assert report.missing and not report.completed


def test_unknown_tools_are_named_with_the_known_ones(tools: ToolBox) -> None:
    known = "write_file, read_file, run_python, evaluate, answer, validate"
    for tool in ("delete_file", "WRITE_FILE", "finish"):
        assert tools.run(tool, {"path": "a"}, None) == Output(
            False, f"unknown tool {tool!r}; known: {known}"
        )
