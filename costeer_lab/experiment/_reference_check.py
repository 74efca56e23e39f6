"""Preflight of a ``python_function`` task file: each selected task's reference solution is run
once, in the sandbox, against its own hidden tests, before anything of the run is written.

A reference that fails its own tests, raises, does not load or does not finish within the
evaluator's time limit (``evaluator.pyfunc_timeout_s``, set by
``COSTEER_LAB_EVALUATOR__PYFUNC_TIMEOUT_S``) would make every attempt of that task fail for
reasons no coder can fix, and as seed knowledge it would teach wrong code; the run stops with
one :class:`~costeer_lab.errors.ConfigurationError` naming the task and the field instead.
The check reuses the suite's own evaluator
(:class:`~costeer_lab.evaluate.PythonFunctionEvaluator`, at ``feedback_detail: full``: the
reference is trusted suite data), so it runs exactly as the attempts will. References that
passed are remembered for the process (keyed by the digest of the entry point, prompt,
reference, tests and time limit), so each runs once per run — not per arm or seed — and not
again for a resume in the same process.

Only suites marked ``verify_references`` (user task files of kind ``python_function``) are
checked; the shipped suites' references are tested with the package.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from costeer_lab.errors import ConfigurationError
from costeer_lab.records import SingleFeedback, Task, Workspace

if TYPE_CHECKING:
    from costeer_lab.settings import EvaluatorSettings
    from costeer_lab.suites import SuiteLike

__all__ = ["check_references", "describe_failure"]

#: Digests of the references that passed their tests in this process.
_PASSED: set[str] = set()
_LOCK = threading.Lock()


def _digest(task: Task, gt: Workspace, timeout_s: float) -> str:
    parts = [
        task.extra.get("entry_point"),
        task.extra.get("prompt"),
        gt.files.get("main.py"),
        gt.files.get("tests.py"),
        timeout_s,
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _statement(tests: str, line: object) -> str:
    lines = tests.splitlines()
    if isinstance(line, int) and 0 < line <= len(lines):
        return f"tests line {line}: {lines[line - 1].strip()}"
    return ""


def describe_failure(task: Task, feedback: SingleFeedback, tests: str, timeout_s: float) -> str:
    """One line saying why ``task``'s reference did not pass its own tests.

    Example:
        >>> fb = SingleFeedback(return_checking="[FAIL] assertion failed: ...\\n  it returned: 4",
        ...     final_decision=False, details={"status": "assertion_failed", "line": 2})
        >>> tests = "def check(f):\\n    assert f(1) == 3\\n"
        >>> describe_failure(Task("t", "add", "d"), fb, tests, 10)[33:]
        'fails its own tests: tests line 2: assert f(1) == 3 (it returned: 4)'
    """
    where = f"task {task.id!r}: the reference solution"
    status = feedback.details.get("status")
    text = (feedback.return_checking or "").removeprefix("[FAIL] ")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if "infrastructure_error" in feedback.details:
        return (
            f"{where} could not be checked: the evaluation failed "
            f"({feedback.details['infrastructure_error']})"
        )
    timed_out = status == "timeout" or "time limit hit" in (feedback.execution or "")
    if timed_out:
        return (
            f"{where} did not finish within {timeout_s:g} s when run against its own tests "
            "(the limit is the evaluator.pyfunc_timeout_s setting)"
        )
    if status == "assertion_failed":
        said = next((ln for ln in lines if ln.startswith(("it returned", "it raised"))), "")
        statement = _statement(tests, feedback.details.get("line")) or lines[0]
        return f"{where} fails its own tests: {statement}" + (f" ({said})" if said else "")
    if status == "error":
        said = next((ln for ln in lines if ln.startswith("it raised")), lines[0] if lines else "")
        statement = _statement(tests, feedback.details.get("line"))
        return f"{where} fails its own tests: {said}" + (f" at {statement}" if statement else "")
    if status == "load_error":
        return f"{where} does not load: {text.split('could not be loaded: ', 1)[-1]}"
    if status == "missing_entry_point":
        entry = task.extra.get("entry_point")
        return f"{where} does not define the entry point {entry!r}"
    if status == "invalid":
        return f"task {task.id!r}: the tests cannot be run: " + text.split(": ", 1)[-1]
    return f"{where} fails its own tests: " + "; ".join(lines)[:300]


def _unique(tasks: Iterable[Task]) -> list[Task]:
    return list({t.id: t for t in tasks}.values())


def check_references(
    suite: SuiteLike,
    tasks: Iterable[Task],
    *,
    seed_suite: SuiteLike | None = None,
    seed_tasks: Iterable[Task] = (),
    settings: EvaluatorSettings | None = None,
) -> int:
    """Run the reference of every task in ``tasks`` (of ``suite``) and ``seed_tasks`` (of
    ``seed_suite``, default ``suite``) against its own tests; returns how many ran (references
    that passed before in this process, or without tests, are skipped).

    Raises:
        ConfigurationError: the first reference that does not pass, naming the task.

    Example:
        >>> import json, pathlib, tempfile
        >>> from costeer_lab.suites import load_suite
        >>> doc = {"kind": "python_function", "tasks": [{"id": "inc", "name": "inc",
        ...     "description": "Add one.", "entry_point": "inc",
        ...     "canonical_solution": "def inc(x):\\n    return x + 2\\n",
        ...     "tests": "def check(f):\\n    assert f(1) == 2\\n"}]}
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.json"
        >>> _ = path.write_text(json.dumps(doc))
        >>> suite = load_suite(path)
        >>> check_references(suite, suite.tasks)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        costeer_lab.errors.ConfigurationError: task 'inc': ... tests line 2: assert f(1) == 2 ...
    """
    groups = [(suite, _unique(tasks)), (seed_suite or suite, _unique(seed_tasks))]
    groups = [(s, ts) for s, ts in groups if getattr(s, "verify_references", False) and ts]
    if not groups:
        return 0
    from costeer_lab.settings import get_settings

    base = settings or get_settings().evaluator
    ev_settings = base.model_copy(update={"feedback_detail": "full"})
    timeout = ev_settings.pyfunc_timeout_s
    ran = 0
    for source, chosen in groups:
        pending = []
        for task in chosen:
            gt = source.ground_truth(task.id)
            tests, main = gt.files.get("tests.py"), gt.files.get("main.py", "")
            key = _digest(task, gt, timeout)
            with _LOCK:
                known = key in _PASSED
            if tests is not None and main.strip() and not known:
                pending.append((task, gt, tests, key))
        if not pending:
            continue
        evaluator = source.evaluator(settings=ev_settings)
        try:
            for task, gt, tests, key in pending:
                main_only = Workspace({"main.py": gt.files["main.py"]})
                feedback = evaluator.evaluate(task, main_only, gt)
                ran += 1
                if not feedback.final_decision:
                    raise ConfigurationError(describe_failure(task, feedback, tests, timeout))
                with _LOCK:
                    _PASSED.add(key)
        finally:
            close = getattr(evaluator, "close", None)
            if callable(close):
                close()
    return ran
