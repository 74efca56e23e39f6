"""The hidden tests, run in the evaluator's own (trusted) process against a recording proxy.

The candidate's code never runs here, and the hidden tests never run next to the candidate.
:class:`HiddenTests` executes the task's trusted prompt (helpers such as ``encode_cyclic``)
and ``check(candidate)`` with a proxy in place of the candidate's function; the proxy answers
from a memo of the candidate's answers (plain data obtained from the sandbox, keyed by the
canonical encoding of the arguments). Two kinds of passes:

* **discovery** (:meth:`HiddenTests.discover`): a version of the tests whose ``assert``
  statements only evaluate their test expression and swallow its exceptions, and whose other
  statements are skipped when they need an answer not known yet
  (:mod:`~costeer_lab.evaluate._pyfunc_discovery`), so one pass collects every call it can.
  An unknown call returns ``PENDING`` (:mod:`~costeer_lab.evaluate._pyfunc_proxy`), which
  absorbs arithmetic and comparisons and raises on conversions (``bool``, ``iter``, …);
  calls whose arguments contain it are not collected (their arguments depend on answers not
  known yet: the next round collects them).
* **replay** (:meth:`HiddenTests.replay`): the original tests, every call answered from the
  memo — the value decoded afresh, or the candidate's exception raised again as the builtin
  exception of that name or of its builtin base class (else ``CandidateError``).
  ``AssertionError`` means failed, any other exception error, completion passed. A call
  missing from the memo stops the pass and is reported, so the caller runs it and replays
  again.

Every pass starts from a fresh scope whose ``random`` module is a private copy seeded with the
same seed (``import random`` and ``from random import …`` inside the tests get it), so tests
that draw random arguments (HumanEval/38, /50, /53) make the same calls in every pass, without
touching the process's global random state. Test code in a pass stops after ``time_limit_s``.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import dis
import functools
import random
import sys
import time
import types
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from costeer_lab.evaluate._pyfunc_answers import Answer
from costeer_lab.evaluate._pyfunc_discovery import (
    PENDING_ERROR_NAME,
    PENDING_NAME,
    SWALLOWED_NAME,
    discovery_tree,
)
from costeer_lab.evaluate._pyfunc_proxy import (
    PENDING,
    Call,
    Control,
    InvalidTests,
    PendingError,
    Proxy,
)

__all__ = ["HiddenTests", "PassResult"]

TESTS_FILENAME = "<hidden tests>"
PROMPT_FILENAME = "<task prompt>"
_MAX_STATEMENT_CHARS = 500


Status = Literal[
    "passed", "need_calls", "assertion_failed", "error", "no_answer", "timeout", "invalid"
]


@dataclass(frozen=True)
class PassResult:
    """The outcome of one pass of the hidden tests.

    Attributes:
        status: ``passed`` (replay: every test passed; discovery: no new call), ``need_calls``
            (``new_calls`` must be run first), ``assertion_failed``, ``error``, ``no_answer``
            (a call the tests need has no answer: ``call``), ``timeout`` (the test code ran
            longer than its time limit) or ``invalid`` (the hidden tests cannot be run this way:
            ``message``).
        new_calls: calls without an answer, in the order the tests made them.
        call: the candidate call the outcome is about (the failing test's last call).
        answer: that call's answer.
        by_candidate: the exception is the candidate's own (re-raised from ``answer``).
        error_type: name of the exception type (``error``).
        message: assertion message, exception message, or why the tests are ``invalid``.
        line: line of the hidden tests where it happened.
        statement: that statement of the hidden tests (it may contain expected values).
        n_calls: calls the pass made.
    """

    status: Status
    new_calls: tuple[Call, ...] = ()
    call: Call | None = None
    answer: Answer | None = None
    by_candidate: bool = False
    error_type: str = ""
    message: str = ""
    line: int | None = None
    statement: str = ""
    n_calls: int = 0


def _private_random(seed: int) -> types.ModuleType:
    """A copy of the ``random`` module whose functions use their own seeded generator."""
    module = types.ModuleType("random", random.__doc__)
    module.__dict__.update({k: v for k, v in vars(random).items() if k != "__name__"})
    shared, own = vars(random)["_inst"], random.Random(seed)
    for name, value in vars(random).items():
        if getattr(value, "__self__", None) is shared:
            setattr(module, name, getattr(own, name))
    module.__dict__["_inst"] = own
    return module


def _builtins_with_random(seed: int) -> dict[str, Any]:
    own = _private_random(seed)
    real_import = builtins.__import__

    def _import(
        name: str,
        globals: Mapping[str, object] | None = None,
        locals: Mapping[str, object] | None = None,
        fromlist: tuple[str, ...] | list[str] = (),
        level: int = 0,
    ) -> types.ModuleType:
        if name == "random" and level == 0:
            return own
        return real_import(name, globals, locals, fromlist, level)

    scope_builtins = dict(vars(builtins))
    scope_builtins["__import__"] = _import
    return scope_builtins


@dataclass(frozen=True)
class _Compiled:
    tree: ast.Module
    tests: types.CodeType
    discovery: types.CodeType
    prompt: types.CodeType | None


@functools.lru_cache(maxsize=256)
def _compile(tests: str, prompt: str) -> _Compiled:
    tree = ast.parse(tests, TESTS_FILENAME)
    discovery = discovery_tree(tests, TESTS_FILENAME)
    code: types.CodeType | None = None
    for source in (prompt, prompt + "\n    pass\n"):  # a prompt may end at a bare signature
        try:
            code = compile(source, PROMPT_FILENAME, "exec")
            break
        except SyntaxError:
            continue
    return _Compiled(
        tree,
        compile(tree, TESTS_FILENAME, "exec"),
        compile(discovery, TESTS_FILENAME, "exec"),
        code,
    )


@functools.lru_cache(maxsize=1024)
def _loops_on_one_line(code: types.CodeType) -> bool:
    """Whether ``code`` jumps backwards to an instruction of the same line (a one-line loop).

    Example:
        >>> _loops_on_one_line(compile("while True: pass", "<t>", "exec"))
        True
        >>> _loops_on_one_line(compile("while True:\\n    pass", "<t>", "exec"))
        False
    """
    line_at: dict[int, int | None] = {}
    jumps: list[tuple[int, int | None]] = []
    for ins in dis.get_instructions(code):
        line = ins.positions.lineno if ins.positions else None
        line_at[ins.offset] = line
        if "JUMP_BACKWARD" in ins.opname or ins.opname == "JUMP_ABSOLUTE":
            jumps.append((int(ins.argval), line))
    return any(line is not None and line_at.get(target) == line for target, line in jumps)


@contextmanager
def _deadline(seconds: float) -> Iterator[list[bool]]:
    """Stop the test code (frames of the tests and the prompt) after ``seconds``.

    Frames of code holding a loop on one line (``while True: pass``) are traced per opcode: such
    a loop produces no further line events, so a line trace alone would never see the deadline
    pass. Other frames keep the cheaper line trace (opcode tracing is ~6x slower on
    pure-Python loops). A loop inside one C call (``sum(itertools.count())``) is out of reach
    of any trace; the tests are trusted suite data.
    """
    end, expired = time.monotonic() + seconds, [False]
    ours = {TESTS_FILENAME, PROMPT_FILENAME}

    def trace(frame: types.FrameType, event: str, arg: object) -> Any:
        if time.monotonic() > end:
            expired[0] = True
            raise Control("deadline")
        if event == "call":  # a new frame: trace it only if it runs test code
            if frame.f_code.co_filename not in ours:
                return None
            if _loops_on_one_line(frame.f_code):
                frame.f_trace_opcodes = True
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        yield expired
    finally:
        sys.settrace(previous)


class HiddenTests:
    """``check(candidate)`` tests of one task, runnable against answers from a memo.

    Args:
        tests: source defining ``check(candidate)`` (trusted suite data).
        prompt: the task's public prompt, executed first in the tests' scope (its helpers).
        entry_point: the candidate's function name (also bound to the proxy in the scope).
        seed: seed of the tests' private ``random`` module (the same in every pass).
        max_calls: distinct calls allowed in total.
        time_limit_s: wall-time limit of the test code in one pass.

    Raises:
        SyntaxError: the tests do not compile.

    Example:
        >>> ht = HiddenTests("def check(c):\\n    assert c(c(1)) == 3\\n", "", "inc")
        >>> [c.describe("inc") for c in ht.discover({}).new_calls]
        ['inc(1)']
        >>> from costeer_lab.evaluate._plaindata import encode
        >>> memo = {Call.of((1,), {}).key: Answer("value", encode(2))}
        >>> [c.describe("inc") for c in ht.discover(memo).new_calls]
        ['inc(2)']
        >>> memo[Call.of((2,), {}).key] = Answer("value", encode(3))
        >>> ht.discover(memo).status, ht.replay(memo).status
        ('passed', 'passed')
    """

    def __init__(
        self,
        tests: str,
        prompt: str | None,
        entry_point: str,
        *,
        seed: int = 0,
        max_calls: int = 10_000,
        time_limit_s: float = 10.0,
    ) -> None:
        self._code = _compile(tests, prompt or "")
        self._source = tests
        self.entry_point = entry_point
        self.seed, self.max_calls, self.time_limit_s = seed, max_calls, time_limit_s

    def discover(self, memo: Mapping[str, Answer]) -> PassResult:
        """Collect the calls whose answers are not in ``memo`` yet (``need_calls``)."""
        return self._pass(memo, discovery=True)

    def replay(self, memo: Mapping[str, Answer]) -> PassResult:
        """Run the original tests on the answers in ``memo``: the verdict."""
        return self._pass(memo, discovery=False)

    def _pass(self, memo: Mapping[str, Answer], *, discovery: bool) -> PassResult:
        proxy = Proxy(self.entry_point, memo, discovery, self.max_calls)
        scope: dict[str, Any] = {
            "__name__": "hidden_tests",
            "__builtins__": _builtins_with_random(self.seed),
        }
        if discovery:
            scope.update({SWALLOWED_NAME: Exception, PENDING_NAME: PENDING})
            scope[PENDING_ERROR_NAME] = PendingError
        failure: BaseException | None = None
        with _deadline(self.time_limit_s) as expired:
            try:
                self._execute(scope, proxy, discovery)
            except KeyboardInterrupt:
                raise  # the user's, never the candidate's (its exceptions are Exceptions here)
            except BaseException as exc:
                failure = exc
        n = len(proxy.log)
        if isinstance(failure, InvalidTests) and proxy.stopped is None:  # no check() function
            return PassResult("invalid", message=failure.message, n_calls=n)
        if isinstance(proxy.stopped, InvalidTests):
            return PassResult("invalid", message=proxy.stopped.message, n_calls=n)
        if proxy.new:
            return PassResult("need_calls", new_calls=tuple(proxy.new.values()), n_calls=n)
        if isinstance(proxy.stopped, Control):  # a call without an answer
            call, answer = proxy.log[-1]
            return PassResult("no_answer", call=call, answer=answer, n_calls=n)
        if expired[0]:
            message = f"the hidden tests did not finish within {self.time_limit_s:g} s"
            return self._failure("timeout", proxy, failure, message=message)
        if discovery or failure is None:
            return PassResult("passed", n_calls=n)
        if isinstance(failure, AssertionError):
            return self._failure("assertion_failed", proxy, failure, message=_text(failure))
        return self._failure(
            "error",
            proxy,
            failure,
            error_type=type(failure).__name__,
            message=_text(failure),
            by_candidate=failure is proxy.raised and proxy.raised is not None,
        )

    def _execute(self, scope: dict[str, Any], proxy: Proxy, discovery: bool) -> None:
        if self._code.prompt is not None:
            # trusted public prompt: the tests' helpers (when it fails, they stay undefined and
            # the tests that need them report a NameError)
            with contextlib.suppress(Exception):
                exec(self._code.prompt, scope)
        scope[self.entry_point] = proxy  # some tests call the function by its name
        exec(self._code.discovery if discovery else self._code.tests, scope)
        check = scope.get("check")
        if not callable(check):
            raise InvalidTests("the hidden tests define no check(candidate) function")
        check(proxy)

    def _failure(
        self,
        status: Status,
        proxy: Proxy,
        failure: BaseException | None,
        **fields: Any,
    ) -> PassResult:
        line = None
        if failure is not None:
            for frame, lineno in _walk(failure.__traceback__):
                if frame.f_code.co_filename == TESTS_FILENAME:
                    line = lineno
        call, answer = proxy.log[-1] if proxy.log else (None, None)
        return PassResult(
            status,
            call=call,
            answer=answer,
            line=line,
            statement=self._statement(line),
            n_calls=len(proxy.log),
            **fields,
        )

    def _statement(self, line: int | None) -> str:
        if line is None:
            return ""
        best: ast.stmt | None = None
        for node in ast.walk(self._code.tree):
            if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or 0):
                span = (node.end_lineno or 0) - node.lineno
                if best is None or span <= (best.end_lineno or 0) - best.lineno:
                    best = node
        text = "" if best is None else ast.get_source_segment(self._source, best) or ""
        if not text or len(text) > _MAX_STATEMENT_CHARS or best is None:
            lines = self._source.splitlines()
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return text[:_MAX_STATEMENT_CHARS]


def _walk(tb: types.TracebackType | None) -> Iterator[tuple[types.FrameType, int]]:
    while tb is not None:
        yield tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next


def _text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        return ""
    return text if len(text) <= 500 else text[:497] + "..."
