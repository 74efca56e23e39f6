"""The agent's tools over one work directory: ``write_file``, ``read_file``, ``run_python`` and
``evaluate`` (both in the sandbox), ``answer`` and ``validate``.

Tool inputs come from a planner, which may be an LLM: a bad input (a path escaping the work
directory, a missing file, an unknown tool) is a failed :class:`Output` the agent records, never
an exception.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costeer_lab._fs import atomic_write_bytes
from costeer_lab.context._completion import Validator
from costeer_lab.context._records import Output
from costeer_lab.context._task import TaskContext
from costeer_lab.records import Workspace
from costeer_lab.sandbox import Limits

if TYPE_CHECKING:
    from costeer_lab.sandbox import Sandbox

__all__ = ["TOOLS", "ToolBox"]

#: Names of the tools, with the inputs each takes.
TOOLS: Mapping[str, str] = {
    "write_file": "path (relative), content (text)",
    "read_file": "path (relative)",
    "run_python": "path (relative .py file run as __main__ in the sandbox)",
    "evaluate": "path (relative test file; its test_* functions are run in the sandbox)",
    "answer": "text (the answer or summary), sources (list of strings, optional)",
    "validate": "(none) — checks the task's completion rule",
}
_MAX_READ_CHARS = 100_000
_MAX_WORKSPACE_FILE = 1_000_000
_EVAL_MAIN = "_costeer_evaluate_.py"
#: The runner ``evaluate`` puts next to the test file: it imports the test module, calls each
#: ``test_*`` function without arguments, prints one line per test and exits 1 on any failure.
_RUNNER = """import importlib, sys, traceback
sys.path.insert(0, {folder!r})
module = importlib.import_module({module!r})
failed = 0
for name in sorted(n for n in dir(module) if n.startswith("test_")):
    test = getattr(module, name)
    if not callable(test):
        continue
    try:
        test()
        print("PASS", name)
    except Exception:
        failed += 1
        print("FAIL", name)
        traceback.print_exc(limit=3)
print("failed", failed)
sys.exit(1 if failed else 0)
"""


class ToolBox:
    """Runs tools for the agent loop inside ``workdir``.

    Args:
        workdir: the directory files are written to and read from (created when missing).
        sandbox: the sandbox ``run_python`` uses (default: this process's ``shared_sandbox()``,
            created at the first run; it refuses to run where isolation is unavailable unless
            ``SandboxSettings.allow_weak_isolation`` is set).
        limits: limits of each ``run_python`` run.
        validator: the validator of ``validate`` (default: one with the context settings).

    Example:
        >>> import tempfile
        >>> tools = ToolBox(tempfile.mkdtemp())
        >>> tools.run("write_file", {"path": "a.txt", "content": "hi"}, None).files
        {'a.txt': 'hi'}
        >>> tools.run("write_file", {"path": "../x", "content": ""}, None).success
        False
    """

    def __init__(
        self,
        workdir: str | os.PathLike[str],
        *,
        sandbox: Sandbox | None = None,
        limits: Limits | None = None,
        validator: Validator | None = None,
    ) -> None:
        self.workdir = Path(workdir).resolve()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._sandbox = sandbox
        self.limits = limits or Limits(wall_time_s=30, cpu_time_s=30, memory_mb=2048)
        self.validator = validator

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox of ``run_python`` (created on first use)."""
        if self._sandbox is None:
            from costeer_lab.sandbox import shared_sandbox

            self._sandbox = shared_sandbox()
        return self._sandbox

    def run(self, tool: str, inputs: Mapping[str, Any], ctx: TaskContext | None) -> Output:
        """Run ``tool`` with ``inputs``; ``ctx`` is the task's context (used by ``validate``)."""
        handler = {
            "write_file": self._write_file,
            "read_file": self._read_file,
            "run_python": self._run_python,
            "evaluate": self._evaluate,
            "answer": self._answer,
        }.get(tool)
        if tool == "validate":
            return self._validate(ctx)
        if handler is None:
            return Output(False, f"unknown tool {tool!r}; known: {', '.join(TOOLS)}")
        return handler(inputs)

    def _resolve(self, inputs: Mapping[str, Any]) -> Path | str:
        """The path named by ``inputs['path']`` inside the work directory, or an error text."""
        raw = inputs.get("path")
        if not isinstance(raw, str) or not raw.strip():
            return f"input 'path' must be a non-empty relative path; got {raw!r}"
        target = (self.workdir / raw).resolve()
        if Path(raw).is_absolute() or not target.is_relative_to(self.workdir):
            return f"path {raw!r} escapes the work directory; give a path relative to it"
        return target

    def _write_file(self, inputs: Mapping[str, Any]) -> Output:
        target = self._resolve(inputs)
        content = inputs.get("content")
        if isinstance(target, str):
            return Output(False, target)
        if not isinstance(content, str):
            return Output(False, f"input 'content' must be text; got {type(content).__name__}")
        atomic_write_bytes(target, content.encode("utf-8"))
        rel = target.relative_to(self.workdir).as_posix()
        return Output(True, f"wrote {rel} ({len(content)} characters)", files={rel: content})

    def _read_file(self, inputs: Mapping[str, Any]) -> Output:
        target = self._resolve(inputs)
        if isinstance(target, str):
            return Output(False, target)
        if not target.is_file():
            return Output(False, f"no file {inputs['path']!r} in the work directory")
        text = target.read_text(encoding="utf-8", errors="replace")
        cut = len(text) > _MAX_READ_CHARS
        return Output(True, text[:_MAX_READ_CHARS], metadata={"truncated": cut})

    def _workspace(self, main: str) -> Workspace:
        files = {}
        for path in sorted(self.workdir.rglob("*")):
            if path.is_file() and path.stat().st_size <= _MAX_WORKSPACE_FILE:
                try:
                    text = path.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    continue
                files[path.relative_to(self.workdir).as_posix()] = text
        return Workspace(files, main_file=main)

    def _run_python(self, inputs: Mapping[str, Any]) -> Output:
        target = self._resolve(inputs)
        if isinstance(target, str):
            return Output(False, target)
        if not target.is_file() or target.suffix != ".py":
            return Output(False, f"no Python file {inputs['path']!r} in the work directory")
        main = target.relative_to(self.workdir).as_posix()
        result = self.sandbox.run(self._workspace(main), limits=self.limits)
        meta = {
            "returncode": result.returncode,
            "duration_s": round(result.duration_s, 4),
            "isolation": result.isolation,
            "stdout": result.stdout[-4000:],
        }
        return Output(result.ok, result.describe(), metadata=meta)

    def _evaluate(self, inputs: Mapping[str, Any]) -> Output:
        """Run the ``test_*`` functions of a test file in the sandbox; passed when all do."""
        target = self._resolve(inputs)
        if isinstance(target, str):
            return Output(False, target)
        if not target.is_file() or target.suffix != ".py":
            return Output(False, f"no Python test file {inputs['path']!r} in the work directory")
        rel = target.relative_to(self.workdir)
        ws = self._workspace(_EVAL_MAIN)
        runner = _RUNNER.format(folder=rel.parent.as_posix(), module=rel.stem)
        ws = Workspace({**ws.files, _EVAL_MAIN: runner}, main_file=_EVAL_MAIN)
        result = self.sandbox.run(ws, limits=self.limits)
        out = result.stdout
        meta = {
            "returncode": result.returncode,
            "duration_s": round(result.duration_s, 4),
            "isolation": result.isolation,
            "passed": [ln[5:] for ln in out.splitlines() if ln.startswith("PASS ")],
            "failed": [ln[5:] for ln in out.splitlines() if ln.startswith("FAIL ")],
            "stdout": out[-4000:],
        }
        return Output(result.ok, result.describe(), metadata=meta)

    @staticmethod
    def _answer(inputs: Mapping[str, Any]) -> Output:
        text = inputs.get("text")
        if not isinstance(text, str) or not text.strip():
            return Output(False, f"input 'text' must be a non-empty string; got {text!r}")
        sources = inputs.get("sources", [])
        if not isinstance(sources, list):
            sources = [sources]
        return Output(True, text, metadata={"sources": [str(s) for s in sources]})

    def _validate(self, ctx: TaskContext | None) -> Output:
        if ctx is None:
            return Output(False, "validate needs the task's context")
        report = (self.validator or Validator()).validate(ctx)
        return Output(
            report.completed,
            report.rationale,
            metadata={"confidence": report.confidence, "missing": list(report.missing)},
        )
