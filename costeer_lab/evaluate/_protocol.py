"""The plug-in points of evaluation: :class:`Evaluator` and the code :class:`Runner`.

An evaluator turns (task, implementation, optional ground truth) into a
:class:`~costeer_lab.SingleFeedback`. Evaluators that execute code do it through a runner: the
sandbox (:class:`costeer_lab.evaluate.Sandbox`, the default for untrusted code) or
:class:`InProcessRunner`, a fast path for *trusted* code only (our own ground truths in tests).
Both return an object with the :class:`RunOutcome` attributes.
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import shutil
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from costeer_lab.records import SingleFeedback, Task, Workspace
from costeer_lab.sandbox._fs import mask_run_dirs

__all__ = ["Evaluator", "InProcessOutcome", "InProcessRunner", "RunOutcome", "Runner"]


@runtime_checkable
class Evaluator(Protocol):
    """Anything that evaluates one implementation of one task.

    ``gt_implementation`` is the hidden reference (never shown to coders); evaluators that can
    work without one (format checks only) accept ``None``.

    Example:
        >>> class AlwaysOk:
        ...     def evaluate(self, task, implementation, gt_implementation=None):
        ...         return SingleFeedback(execution="not run", final_decision=True)
        >>> isinstance(AlwaysOk(), Evaluator)
        True
    """

    def evaluate(
        self, task: Task, implementation: Workspace, gt_implementation: Workspace | None = None
    ) -> SingleFeedback: ...


class RunOutcome(Protocol):
    """What evaluators read from a run (a subset of the sandbox's ``SandboxResult``)."""

    @property
    def returncode(self) -> int | None: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...
    @property
    def timed_out(self) -> bool: ...
    @property
    def memory_exceeded(self) -> bool: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def outputs(self) -> Mapping[str, bytes]: ...
    @property
    def error(self) -> str | None: ...
    @property
    def ok(self) -> bool: ...


class Runner(Protocol):
    """Runs ``workspace.main_file`` as ``__main__`` in a fresh directory holding ``inputs``
    (name → source path) and returns the bytes of the ``collect``-ed output files."""

    def run(
        self,
        workspace: Workspace,
        *,
        inputs: Mapping[str, str | Path] = ...,
        collect: Sequence[str] = ...,
    ) -> RunOutcome: ...


@dataclass(frozen=True)
class InProcessOutcome:
    """Result of :meth:`InProcessRunner.run` (same attributes as the sandbox's result)."""

    returncode: int | None
    stdout: str
    stderr: str
    duration_s: float
    outputs: Mapping[str, bytes] = field(default_factory=dict)
    timed_out: bool = False
    memory_exceeded: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and self.error is None


_RUN_LOCK = threading.Lock()  # cwd, sys.path and sys.stdout are process-wide


class InProcessRunner:
    """Run **trusted** code in this process: no isolation, no limits, but no process start-up.

    Used for our own ground truths (fast tests over all 158 Alpha158 features). The run holds a
    process-wide lock because it changes the working directory and redirects stdout/stderr.

    Example:
        >>> out = InProcessRunner().run(Workspace({"main.py": "open('o.txt','w').write('hi')"}),
        ...                             collect=["o.txt"])
        >>> out.ok, out.outputs["o.txt"]
        (True, b'hi')
    """

    def run(
        self,
        workspace: Workspace,
        *,
        inputs: Mapping[str, str | Path] | None = None,
        collect: Sequence[str] = (),
    ) -> InProcessOutcome:
        """Execute ``workspace.main_file`` in a temporary directory (code errors are reported)."""
        with _RUN_LOCK, tempfile.TemporaryDirectory(prefix="costeer_inproc_") as tmp:
            root = Path(tmp)
            for name, src in (inputs or {}).items():
                shutil.copyfile(src, root / name)
            workspace.write_to(root)
            out, err = io.StringIO(), io.StringIO()
            old_cwd, old_path = os.getcwd(), list(sys.path)
            code: int | None = 0
            start = time.perf_counter()
            try:
                os.chdir(root)
                sys.path.insert(0, str(root))
                with (
                    contextlib.redirect_stdout(out),
                    contextlib.redirect_stderr(err),
                    warnings.catch_warnings(),
                ):
                    warnings.simplefilter("default")  # as in a fresh interpreter, not pytest's
                    warnings.showwarning = _show_warning
                    try:
                        runpy.run_path(str(root / workspace.main_file), run_name="__main__")
                    except SystemExit as exc:
                        code = _exit_code(exc.code)
                    except BaseException:  # the code under test failed: report, don't raise
                        traceback.print_exc()
                        code = 1
            finally:
                os.chdir(old_cwd)
                sys.path[:] = old_path
            outputs = {n: (root / n).read_bytes() for n in collect if (root / n).is_file()}
            return InProcessOutcome(
                returncode=code,
                stdout=mask_run_dirs(out.getvalue(), root),
                stderr=mask_run_dirs(err.getvalue(), root),
                duration_s=time.perf_counter() - start,
                outputs=outputs,
            )


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _exit_code(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    print(value, file=sys.stderr)
    return 1
