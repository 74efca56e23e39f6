"""Which integers of a task are windows (the only constants adaptation may substitute).

A number in a formulation is a **window** when it is a whole positive integer argument of a
rolling or shift operator (``Mean($close, 20)``, ``Ref($close, 1)``, ``Quantile($close, 20,
0.8)`` → ``20`` only), or when the task's public fields name it as a window
(``extra["window"]``, a variable described as a window/look-back/period, ``"20-day"`` in the
description). A task that has no formulation and is not a function task may carry its window
at the end of its name (``MA5``); a number in the name of a task whose formulation does not
use it as a window (``alpha002``), or of a function task (``HumanEval/12``), is no window.
Floats, epsilons (``1e-12``), quantile levels, exponents (``Power(x, 2)``, ``x**2``) and
arguments of element-wise operators are never windows.
"""

from __future__ import annotations

import re

from costeer_lab.coders._contracts import task_family
from costeer_lab.records import Task

__all__ = [
    "ROLLING_OPERATORS",
    "SHIFT_OPERATORS",
    "is_window_literal",
    "window_roles",
    "window_values",
]

#: Operators (lower case) whose integer arguments are windows or shifts; ``ts_*`` and names
#: containing ``rolling`` also count.
ROLLING_OPERATORS = frozenset(
    {
        "ref", "delay", "delta", "mean", "sma", "ema", "wma", "std", "var", "sum", "max",
        "min", "med", "median", "mad", "skew", "kurt", "slope", "rsquare", "resi",
        "quantile", "rank", "idxmax", "idxmin", "argmax", "argmin", "corr", "cov", "count",
        "prod", "product", "decay_linear", "decaylinear", "ma", "shift", "diff", "pct_change",
    }
)  # fmt: skip
#: Rolling operators whose integer argument is a shift (a lag), not a window length; a shift
#: is only ever mapped to a shift (``Ref($close, 1)`` never becomes a 10-day window).
SHIFT_OPERATORS = frozenset({"ref", "delay", "delta", "shift", "diff", "pct_change"})
_TOKEN = re.compile(r"\$[A-Za-z_]\w*|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_]\w*|\*\*|\S")
_WINDOW_WORDS = re.compile(r"\b(?:window|look-?back|periods?|horizon|lag)\b", re.IGNORECASE)
_NAME_END = re.compile(r"(?<=[A-Za-z_])([1-9]\d*)$")
_INT = re.compile(r"(?<![\d.eE])\d+(?![\d.eE])")
_DAYS = re.compile(
    r"(?<![\d.])(\d+)(?:[- ](?:trading|business|calendar))?[- ](?:days?|bars?|periods?)\b"
    r"|\bwindow(?: length| size| of)?:? (\d+)\b",
    re.IGNORECASE,
)


def is_window_literal(text: str) -> bool:
    """True for a literal that may be a window: a positive whole number written with digits
    only (no point, exponent, sign or base prefix; ``007`` in a formulation is 7).

    Example:
        >>> [is_window_literal(t) for t in ("20", "007", "1e-12", "0.5", "2.0", "0", "0x5")]
        [True, True, False, False, False, False, False]
    """
    return text.isascii() and text.isdigit() and int(text) > 0


def _rolling(name: str) -> bool:
    low = name.lower()
    return low in ROLLING_OPERATORS or low.startswith("ts_") or "rolling" in low


def _formula_windows(formula: str) -> dict[int, set[str]]:
    toks = _TOKEN.findall(formula)
    calls: list[str] = []  # the operator of each open parenthesis ("" = grouping)
    out: dict[int, set[str]] = {}
    for i, tok in enumerate(toks):
        if tok == "(":
            prev = toks[i - 1] if i else ""
            calls.append(prev if prev[:1].isalpha() or prev[:1] == "_" else "")
        elif tok == ")":
            if calls:
                calls.pop()
        elif is_window_literal(tok) and calls and _rolling(calls[-1]):
            before = toks[i - 1] if i else ""
            after = toks[i + 1] if i + 1 < len(toks) else ""
            if before in ("(", ",") and after in (")", ","):  # a whole argument, not x*2
                role = "shift" if calls[-1].lower() in SHIFT_OPERATORS else "window"
                out.setdefault(int(tok), set()).add(role)
    return out


def window_roles(task: Task) -> dict[int, frozenset[str]]:
    """Each integer ``task`` uses as a window, with its roles: ``"window"`` (a window length)
    and/or ``"shift"`` (the lag of ``Ref``/``Delta``/...). See the module docstring.

    Example:
        >>> t = Task("t", "CNTP20", "", formulation="Mean($close>Ref($close, 1), 20)")
        >>> {k: sorted(v) for k, v in sorted(window_roles(t).items())}
        {1: ['shift'], 20: ['window']}
    """
    out = _formula_windows(task.formulation)
    named: set[int] = set()
    window = task.extra.get("window")
    if isinstance(window, int) and not isinstance(window, bool) and window > 0:
        named.add(window)
    for name, text in task.variables.items():
        if _WINDOW_WORDS.search(f"{name} {text}"):
            named.update(int(m) for m in _INT.findall(str(text)) if int(m) > 0)
    for m in _DAYS.finditer(task.description):
        value = int(m.group(1) or m.group(2))
        if value > 0:
            named.add(value)
    if not out and not named and not task.formulation.strip():
        end = _NAME_END.search(task.name)
        if end and task_family(task) != "function":
            named.add(int(end.group(1)))
    for value in named:
        out.setdefault(value, set()).add("window")
    return {k: frozenset(v) for k, v in out.items()}


def window_values(task: Task) -> frozenset[int]:
    """The integers ``task`` uses as windows or shifts (the keys of :func:`window_roles`).

    Example:
        >>> t = Task("t", "RSV20", "", formulation="($close-Min($low, 20))/(Max($high, 20)"
        ...          "-Min($low, 20)+1e-12) + Power($close, 2) + Quantile($close, 5, 0.8)")
        >>> sorted(window_values(t))
        [5, 20]
        >>> sorted(window_values(Task("u", "X", "Mean over a 10-day window", extra={"window": 3})))
        [3, 10]
    """
    return frozenset(window_roles(task))
