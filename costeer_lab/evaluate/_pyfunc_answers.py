"""The trusted side of one sandbox run of :class:`PythonFunctionEvaluator`: the run's workspace
and the defensive reading of the answers the candidate's process wrote.

Everything the sandbox produces is the candidate's own claim. :func:`read_answers` accepts an
answer line only when it is valid JSON of the expected shape for a call index of this run, seen
once, within the size limits, and its value decodes as plain data (exact builtin types, see
:mod:`~costeer_lab.evaluate._plaindata`); any other line is ignored, so that call has no
answer. A lying candidate only hurts itself: the verdict needs the *right* answers.

Reading is bounded (see :mod:`~costeer_lab.evaluate._budget`): at most ``MAX_ANSWER_BYTES``
bytes, ``MAX_ANSWER_ITEMS`` decoded items in all, one census of hash collisions across the
file, and ``TRUSTED_CPU_S`` seconds of CPU; the lines after a spent budget are not read (their
calls have no answer, and :attr:`RunReport.refused` says why).
"""

from __future__ import annotations

import functools
import inspect
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from costeer_lab.evaluate import _plaindata, _pyfunc_runner
from costeer_lab.evaluate._budget import MAX_ANSWER_BYTES, MAX_ANSWER_ITEMS, TRUSTED_CPU_S
from costeer_lab.evaluate._pyfunc_runner import (
    ANSWERS_FILE,
    CALLS_FILE,
    CODEC_FILE,
    RUNNER_FILE,
)
from costeer_lab.records import Workspace

__all__ = ["MAX_ANSWER_BYTES", "Answer", "RunReport", "call_workspace", "read_answers"]

#: Longest answer line accepted (bytes); a longer one leaves its call without an answer.
MAX_LINE_BYTES = 2_000_000
_MAX_NAME_CHARS = 200
_MAX_MESSAGE_CHARS = 500

AnswerKind = Literal["value", "raised", "unencodable", "missing"]


@dataclass(frozen=True)
class Answer:
    """What the candidate's process reported for one call.

    Attributes:
        kind: ``value`` (returned ``encoded``), ``raised`` (an exception ``type_name`` whose
            first builtin base class is ``base``, with ``message``), ``unencodable``
            (returned a ``type_name`` that is not plain data) or ``missing`` (no valid
            answer; ``message`` says why).
        encoded: the plain-data encoding of the returned value (``kind == "value"``).
        type_name: exception type or unencodable type, as the candidate named it.
        message: exception message, or why the answer is missing.
        base: first builtin class of the exception's type (``raised``).
    """

    kind: AnswerKind
    encoded: Any = None
    type_name: str = ""
    message: str = ""
    base: str = ""

    def value(self) -> Any:
        """A fresh copy of the returned value (exact builtin types only)."""
        return _plaindata.decode(self.encoded)


@dataclass(frozen=True)
class RunReport:
    """The status line and the answers of one run.

    Attributes:
        status: ``loaded``, ``load_error``, ``missing_entry_point`` or ``no_status`` (the run
            ended before the candidate's module finished loading, or wrote no valid status).
        error: the load error (``status == "load_error"``).
        answers: call index → valid answer (calls without one are absent).
        rejected: call indices whose answer lines were invalid or repeated.
        refused: why the lines after some point were not read (a spent budget), else ``""``.
    """

    status: str
    error: str = ""
    answers: Mapping[int, Answer] = field(default_factory=dict)
    rejected: frozenset[int] = frozenset()
    refused: str = ""


def call_workspace(
    implementation: Workspace, entry_point: str, calls: Sequence[Any], *, tracebacks: bool
) -> Workspace:
    """The candidate's files plus the call runner, the codec and the calls to make.

    Args:
        implementation: the candidate's workspace (its ``main_file`` is imported).
        entry_point: the function to call.
        calls: ``[args, kwargs]`` encodings, in the order to call them.
        tracebacks: whether the runner prints the tracebacks of the first failing calls.

    Example:
        >>> ws = call_workspace(Workspace({"main.py": "def f(x): return x"}), "f",
        ...                     [[[{"int": "1"}], {"dict": []}]], tracebacks=True)
        >>> ws.main_file, sorted(ws.files)[:2]
        ('_costeer_call_runner.py', ['_costeer_call_runner.py', '_costeer_calls.json'])
    """
    job = {
        "main_file": implementation.main_file,
        "entry_point": entry_point,
        "tracebacks": tracebacks,
        "calls": list(calls),
    }
    files = {k: v for k, v in implementation.files.items() if k != ANSWERS_FILE}
    files.update(_sources())
    files[CALLS_FILE] = json.dumps(job)
    return Workspace(files, RUNNER_FILE)


@functools.cache
def _sources() -> dict[str, str]:
    """The runner's and the codec's source, copied into every run directory."""
    return {
        RUNNER_FILE: inspect.getsource(_pyfunc_runner),
        CODEC_FILE: inspect.getsource(_plaindata),
    }


def _short(text: object, limit: int) -> str:
    s = text if isinstance(text, str) else ""
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _parse(line: bytes) -> dict[str, Any] | None:
    if len(line) > MAX_LINE_BYTES:
        return None
    try:
        record = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # bad UTF-8 or JSON, too many digits, too deep
        return None
    return record if type(record) is dict else None


def _answer(record: dict[str, Any], budget: _plaindata.DecodeBudget) -> Answer | None:
    if "value" in record:
        try:
            _plaindata.decode(record["value"], budget=budget)
        except (_plaindata.PlainDataError, RecursionError):
            return None
        return Answer("value", encoded=record["value"])
    if "raised" in record and type(record["raised"]) is str:
        return Answer(
            "raised",
            type_name=_short(record["raised"], _MAX_NAME_CHARS),
            message=_short(record.get("message"), _MAX_MESSAGE_CHARS),
            base=_short(record.get("base"), _MAX_NAME_CHARS),
        )
    if "unencodable" in record and type(record["unencodable"]) is str:
        return Answer("unencodable", type_name=_short(record["unencodable"], _MAX_NAME_CHARS))
    return None


def read_answers(data: bytes | None, n_calls: int) -> RunReport:
    """Parse the answers file of a run of ``n_calls`` calls (``None``: no file).

    Only complete lines count (a run killed mid-write leaves a partial last line). A call index
    with an invalid line, or answered twice, counts as unanswered (``rejected``).

    Example:
        >>> data = b'{"status": "loaded"}\\n{"i": 0, "value": {"int": "2"}}\\n{"i": 1, "va'
        >>> report = read_answers(data, 2)
        >>> report.status, report.answers[0].value(), 1 in report.answers
        ('loaded', 2, False)
    """
    lines = (data or b"")[:MAX_ANSWER_BYTES].split(b"\n")[:-1]  # drop the unterminated rest
    head = _parse(lines[0]) if lines else None
    status = None if head is None else head.get("status")
    if head is None or status not in ("loaded", "load_error", "missing_entry_point"):
        return RunReport("no_status")
    if status != "loaded":
        return RunReport(str(status), error=_short(head.get("error"), _MAX_MESSAGE_CHARS))
    found: dict[int, Answer] = {}
    rejected: set[int] = set()
    budget = _plaindata.DecodeBudget(max_items=MAX_ANSWER_ITEMS, cpu_s=TRUSTED_CPU_S)
    refused = ""
    for line in lines[1:]:
        refused = _spent(budget)
        if refused:
            break
        record = _parse(line)
        index = None if record is None else record.get("i")
        if record is None or type(index) is not int or not 0 <= index < n_calls:
            continue
        answer = _answer(record, budget)
        if answer is None or index in found or index in rejected:
            found.pop(index, None)
            rejected.add(index)
        else:
            found[index] = answer
    return RunReport("loaded", answers=found, rejected=frozenset(rejected), refused=refused)


def _spent(budget: _plaindata.DecodeBudget) -> str:
    """Why no further answer line is read (``""``: the budget is not spent)."""
    if budget.items_left <= 0:
        return (
            f"the answers hold more than {MAX_ANSWER_ITEMS} values in all; the rest was not read"
        )
    if budget.deadline is not None and time.thread_time() > budget.deadline:
        return (
            f"reading the answers took more than {TRUSTED_CPU_S:g} s of CPU; the rest was not read"
        )
    return ""
