"""The stand-in for the candidate's function while the hidden tests run in the trusted process.

A :class:`Proxy` answers each call from a memo of the candidate's answers, keyed by the
:class:`Call` (the canonical plain-data encoding of its arguments). In discovery passes an
unknown call returns :data:`PENDING`; in replay passes it stops the pass. Answers come back as
fresh builtin values, or as the candidate's exception made again here from builtin types.
"""

from __future__ import annotations

import builtins
import json
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from costeer_lab.evaluate._plaindata import PlainDataError, decode, encode
from costeer_lab.evaluate._pyfunc_answers import Answer

__all__ = [
    "PENDING",
    "Call",
    "CandidateError",
    "Control",
    "InvalidTests",
    "PendingError",
    "Proxy",
    "UnsupportedReturnValue",
    "describe_value",
]


class CandidateError(Exception):
    """The candidate raised an exception that is not a builtin ``Exception`` type."""


class UnsupportedReturnValue(Exception):
    """The candidate returned a value that is not plain data."""


class PendingError(TypeError):
    """A discovery pass tried to use an answer that is not known yet."""


class Control(BaseException):
    """Ends a pass (a ``BaseException`` so that the tests' ``except Exception`` lets it by)."""


class _Pending:
    """The answer of a call that has not been made yet (discovery passes only)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<pending answer>"

    def __hash__(self) -> int:
        return 0

    def _same(self, *args: object, **kwargs: object) -> _Pending:
        return self

    def _refuse(self, *args: object) -> Any:
        raise PendingError("the answer is not known yet")


_UNARY = "eq ne lt le gt ge neg pos abs invert round trunc floor ceil getitem call getattr"
_BINARY = "add sub mul truediv floordiv mod pow and or xor lshift rshift matmul divmod"
_REFUSING = "bool iter len contains index int float complex str format bytes setitem delitem"
for _name in _UNARY.split() + _BINARY.split() + ["r" + b for b in _BINARY.split()]:
    setattr(_Pending, f"__{_name}__", _Pending._same)  # arithmetic and comparisons stay pending
for _name in _REFUSING.split():
    setattr(_Pending, f"__{_name}__", _Pending._refuse)  # conversions end the statement

#: The answer of a call not made yet, in discovery passes.
PENDING = _Pending()


@dataclass(frozen=True)
class Call:
    """One call of the candidate's function, as plain data.

    Attributes:
        key: canonical JSON of ``encoded`` (the memo key).
        encoded: ``[args, kwargs]`` encodings (see :mod:`~costeer_lab.evaluate._plaindata`).
    """

    key: str
    encoded: Any

    @classmethod
    def of(cls, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Call:
        """Record a call (raises ``PlainDataError`` when an argument is not plain data)."""
        encoded = encode([list(args), dict(kwargs)])
        return cls(json.dumps(encoded, sort_keys=True, separators=(",", ":")), encoded)

    def describe(self, name: str, limit: int = 300) -> str:
        """``name(arg, …, key=value)`` with long arguments abbreviated."""
        args, kwargs = decode(self.encoded)
        parts = [_short_repr(a) for a in args] + [
            f"{k}={_short_repr(v)}" for k, v in kwargs.items()
        ]
        text = f"{name}({', '.join(parts)})"
        return text if len(text) <= limit else text[: limit - 4] + "...)"


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict = 4, 12, 12, 8
_REPR.maxset = _REPR.maxfrozenset = 12
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 80


def _short_repr(value: object) -> str:
    try:
        return _REPR.repr(value)
    except ValueError:  # an int beyond the str() digit limit
        return f"<int of {value.bit_length()} bits>" if isinstance(value, int) else "<value>"


def describe_value(value: object) -> str:
    """Abbreviated repr of a returned value (feedback text)."""
    return _short_repr(value)


class InvalidTests(Control):
    """The hidden tests cannot be run this way (the message says why)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Proxy:
    """Stands in for the candidate's function during a pass."""

    def __init__(
        self, name: str, memo: Mapping[str, Answer], discovery: bool, max_calls: int
    ) -> None:
        self.__name__ = self.__qualname__ = name
        self._memo, self._discovery, self._max_calls = memo, discovery, max_calls
        self.new: dict[str, Call] = {}
        self.log: list[tuple[Call, Answer]] = []
        self.raised: BaseException | None = None
        self.stopped: Control | None = None  # kept in case the tests swallow it

    def _stop(self, exc: Control) -> Control:
        self.stopped = self.stopped or exc
        return exc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.stopped is not None:
            raise self.stopped
        try:
            call = Call.of(args, kwargs)
        except PlainDataError as exc:
            if exc.value_type is _Pending and self._discovery:
                return PENDING
            raise self._stop(
                InvalidTests(
                    f"the hidden tests call {self.__name__}() with an argument that is not plain "
                    f"data and cannot be sent to the candidate's process: {exc}",
                )
            ) from None
        answer = self._memo.get(call.key)
        if answer is None:
            if call.key not in self.new:
                if len(self._memo) + len(self.new) >= self._max_calls:
                    raise self._stop(
                        InvalidTests(
                            f"the hidden tests make more than {self._max_calls} distinct calls "
                            f"of {self.__name__}()",
                        )
                    )
                self.new[call.key] = call
            if self._discovery:
                return PENDING
            raise self._stop(Control("need calls"))
        self.log.append((call, answer))
        if answer.kind == "value":
            return answer.value()
        if answer.kind == "missing":
            if self._discovery:
                return PENDING
            raise self._stop(Control("no answer"))
        if answer.kind == "raised":
            self.raised = _trusted_exception(answer)
        else:
            self.raised = UnsupportedReturnValue(
                f"returned a {answer.type_name!r}, which is not plain data (return None, bool, "
                "int, float, str, bytes, complex, or lists, tuples, dicts, sets of them)"
            )
        raise self.raised


def _trusted_exception(answer: Answer) -> Exception:
    """The builtin exception named by the candidate (or its builtin base), made here."""
    message = answer.message
    for name in (answer.type_name, answer.base):
        cls = getattr(builtins, name, None) if name.isidentifier() else None
        if isinstance(cls, type) and issubclass(cls, Exception):
            try:
                return cls(message)
            except Exception:  # a constructor with other arguments (UnicodeDecodeError)
                break
    return CandidateError(f"{answer.type_name}: {message}" if message else answer.type_name)
