"""The dynamic half of the pattern memory's write gate: re-run a pattern's tests in the sandbox.

``passed=True`` is the caller's word; when a pattern comes with runnable tests, the memory
checks it. A test is *runnable* when it parses as Python and holds an ``assert`` or defines a
``test_*`` function; other tests are descriptions (``"returns a Series"``) and are stored as
given. The code and every runnable test go into one script (code first, then the tests in
order, then a call of every ``test_*`` function they define), run once in the sandbox: the
pattern is verified when the script exits 0.

Outcomes (:class:`Verification`): ``"passed"`` (verified), ``"failed"`` (the memory refuses the
pattern, ``MemoryRefusedError(kind="tests_failed")``), ``"error"`` (the sandbox could not run
it: refused too, ``kind="unverifiable"``), ``"unverified"`` (no runnable tests, or
``memory.verify_patterns`` is off: stored with ``verified=False`` and the reason).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field

from costeer_lab.errors import SandboxError
from costeer_lab.sandbox import Limits, Sandbox, shared_sandbox

__all__ = ["Verification", "runnable_tests", "verify_pattern"]

_RUNNER = """

# -- run by the pattern memory's write gate: call every test_* function defined above
for _gate_name, _gate_fn in list(globals().items()):
    if _gate_name.startswith("test_") and callable(_gate_fn):
        _gate_fn()
"""


@dataclass(frozen=True)
class _Script:
    """The one file the sandbox runs (any object with ``files`` and ``main_file`` will do)."""

    files: dict[str, str] = field(default_factory=dict)
    main_file: str = "main.py"


@dataclass(frozen=True)
class Verification:
    """What re-running a pattern's tests found.

    Attributes:
        status: ``"passed"``, ``"failed"``, ``"error"`` or ``"unverified"`` (module docstring).
        reason: one sentence for a person (the failing line of the error, or why nothing ran).

    Example:
        >>> Verification("unverified", "no runnable tests").verified
        False
    """

    status: str
    reason: str

    @property
    def verified(self) -> bool:
        return self.status == "passed"


def runnable_tests(tests: Sequence[str]) -> list[str]:
    """The tests that are Python code with an ``assert`` or a ``test_*`` function.

    Example:
        >>> runnable_tests(["assert f(2) == 4", "returns the square", "def test_f():\\n    f(1)"])
        ['assert f(2) == 4', 'def test_f():\\n    f(1)']
    """
    out = []
    for test in tests:
        try:
            tree = ast.parse(test)
        except (SyntaxError, ValueError):
            continue
        if any(
            isinstance(n, ast.Assert)
            or (isinstance(n, ast.FunctionDef) and n.name.startswith("test_"))
            for n in ast.walk(tree)
        ):
            out.append(test)
    return out


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def verify_pattern(
    code: str,
    tests: Sequence[str],
    *,
    dependencies: Sequence[str] = (),
    sandbox: Sandbox | None = None,
    wall_time_s: float = 30.0,
) -> Verification:
    """Run ``code`` and its runnable ``tests`` once in the sandbox (module docstring).

    Args:
        code: the pattern's code.
        tests: its tests (code or descriptions; only runnable ones are run).
        dependencies: import names the run needs besides the sandbox's packages.
        sandbox: the sandbox to run in (default: this process's shared sandbox, or a new one
            allowing ``dependencies`` when the shared one does not).
        wall_time_s: the run's time limit.

    Example:
        >>> verify_pattern("def sq(x):\\n    return x * x", ["assert sq(3) == 9"]).status
        'passed'
        >>> verify_pattern("def sq(x):\\n    return x + x", ["assert sq(3) == 9"]).status
        'failed'
    """
    runnable = runnable_tests(tests)
    if not runnable:
        return Verification("unverified", "no runnable tests (none holds an assert or test_*)")
    script = "\n\n".join([code, *runnable]) + _RUNNER
    own: Sandbox | None = None
    if sandbox is None:
        sandbox = shared_sandbox()
        missing = [d for d in dependencies if d.split(".")[0] not in sandbox.packages]
        if missing:
            sandbox = own = Sandbox(packages=[*sandbox.packages, *missing], preimport=())
    try:
        result = sandbox.run(_Script({"main.py": script}), limits=Limits(wall_time_s=wall_time_s))
    except SandboxError as exc:
        return Verification("error", f"the sandbox could not run the tests: {exc}")
    finally:
        if own is not None:
            own.close()
    if result.returncode == 0 and not result.timed_out:
        return Verification("passed", f"{len(runnable)} runnable test(s) passed in the sandbox")
    if result.returncode is None and result.isolation in {"", "unverified"}:  # never ran
        return Verification("error", f"the sandbox could not run the tests: {result.error}")
    why = "timed out" if result.timed_out else _last_line(result.stderr) or result.error or ""
    return Verification("failed", f"the tests failed in the sandbox: {why}")
