"""The call runner: the only code of :class:`PythonFunctionEvaluator` that runs next to the
candidate, in the sandbox.

The evaluator copies this file into the run directory as ``_costeer_call_runner.py`` (run as
``__main__``) with a copy of :mod:`costeer_lab.evaluate._plaindata` (``_costeer_plaindata.py``)
and ``_costeer_calls.json``: the main file, the entry point and the calls to make, each as the
plain-data encoding of ``[args, kwargs]``. It imports the candidate's main file as a module
(not as ``__main__``), calls the entry point once per call and appends one JSON line per call
to ``_costeer_answers.jsonl``, flushed at once so that a later hang or crash still leaves the
earlier answers:

* first line: ``{"status": "loaded"}``, or ``{"status": "load_error", "error": ...}`` /
  ``{"status": "missing_entry_point"}`` (then the runner stops);
* then per call: ``{"i": 3, "value": <encoding>}``, ``{"i": 3, "raised": "MyError", "base":
  "ValueError", "message": ...}`` (``base``: the first builtin class of the exception's MRO)
  or ``{"i": 3, "unencodable": "numpy.ndarray"}``.

Nothing here is trusted: the candidate can change any of it. The evaluator reads the lines as
the candidate's claims (see :mod:`costeer_lab.evaluate._pyfunc_answers`); the verdict is
decided in the evaluator's process, which knows the expected values, by replaying the hidden
tests on those answers.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

__all__ = ["ANSWERS_FILE", "CALLS_FILE", "CODEC_FILE", "RUNNER_FILE"]

RUNNER_FILE = "_costeer_call_runner.py"
CODEC_FILE = "_costeer_plaindata.py"
CALLS_FILE = "_costeer_calls.json"
ANSWERS_FILE = "_costeer_answers.jsonl"
#: Tracebacks of exceptions raised by calls that are printed to stderr (when asked for).
MAX_TRACEBACKS = 3
#: Characters kept of an exception message.
MAX_MESSAGE_CHARS = 500


def _text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:
        text = "<the exception message could not be read>"
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3] + "..."


def _type_name(tp: type) -> str:
    module = getattr(tp, "__module__", "")
    name = getattr(tp, "__qualname__", "?")
    return name if module == "builtins" else f"{module}.{name}"


def _builtin_base(tp: type) -> str:
    """Name of the first builtin class in ``tp``'s MRO (``class E(ValueError)``: ValueError)."""
    for cls in getattr(tp, "__mro__", ()):
        if getattr(cls, "__module__", "") == "builtins":
            return str(cls.__name__)
    return "BaseException"


def _numpy_scalar(value: object) -> object:
    """A numpy scalar (``numpy.int64(3)``) as the Python value (``3``); others unchanged."""
    item = getattr(value, "item", None)
    if type(value).__module__ == "numpy" and callable(item) and getattr(value, "shape", 0) == ():
        return item()
    return value


def _module_name(main_file: str) -> str:
    stem = os.path.splitext(os.path.basename(main_file))[0]
    return stem if stem.isidentifier() else "candidate"


def _load(main_file: str, name: str) -> Any:
    loader = importlib.machinery.SourceFileLoader(name, os.path.abspath(main_file))
    spec = importlib.util.spec_from_loader(name, loader)
    if spec is None:
        raise ImportError(f"cannot import {main_file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # some code (dataclasses, pickle) looks itself up there
    loader.exec_module(module)
    return module


def main() -> int:
    """Run the calls of ``_costeer_calls.json``; returns the exit code."""
    sys.dont_write_bytecode = True  # one-off imports in a fresh directory: caches only cost
    codec: Any = importlib.import_module(os.path.splitext(CODEC_FILE)[0])
    with open(CALLS_FILE, encoding="utf-8") as fh:
        job = json.load(fh)
    with open(ANSWERS_FILE, "w", encoding="utf-8") as out:

        def emit(record: dict[str, Any]) -> None:
            out.write(json.dumps(record) + "\n")
            out.flush()

        name = _module_name(job["main_file"])
        try:
            module = _load(job["main_file"], name)
        except BaseException as exc:
            traceback.print_exc()
            emit({"status": "load_error", "error": f"{type(exc).__name__}: {_text(exc)}"})
            return 1
        function = getattr(module, job["entry_point"], None)
        if not callable(function):
            print(
                f"{job['main_file']} does not define a function named {job['entry_point']!r}",
                file=sys.stderr,
            )
            emit({"status": "missing_entry_point"})
            return 1
        emit({"status": "loaded"})
        try:
            _run_calls(function, job, codec, emit)
        finally:
            if sys.modules.get(name) is module:
                del sys.modules[name]  # matters for in-process (trusted) runs only
    return 0


def _run_calls(
    function: Any, job: dict[str, Any], codec: Any, emit: Callable[[dict[str, Any]], None]
) -> None:
    printed = 0
    for i, (args, kwargs) in enumerate(job["calls"]):
        try:
            value = function(*codec.decode(args), **codec.decode(kwargs))
        except BaseException as exc:
            if job.get("tracebacks") and printed < MAX_TRACEBACKS:
                traceback.print_exc()
                printed += 1
            emit(
                {
                    "i": i,
                    "raised": type(exc).__name__,
                    "base": _builtin_base(type(exc)),
                    "message": _text(exc),
                }
            )
            continue
        try:
            encoded = codec.encode(value, default=_numpy_scalar)
        except Exception:  # not plain data (or too deep, or a cycle)
            emit({"i": i, "unencodable": _type_name(type(value))})
            continue
        emit({"i": i, "value": encoded})


if __name__ == "__main__":
    sys.exit(main())
