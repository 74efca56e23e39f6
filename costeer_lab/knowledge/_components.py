"""Component analysis: the operators, functions and data fields a task is made of.

Components are canonical strings ``op:<name>`` (operators and functions, lower case, synonyms
folded: ``Mean``, ``np.mean`` and "average" are all ``op:mean``), ``field:<name>`` (data fields:
``$close``, ``df["close"]``), ``type:<name>`` (annotated types of a signature) and
``category:<name>``. Tasks sharing components are linked through ``component`` nodes.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from costeer_lab.records import Task

__all__ = ["BuiltinComponentExtractor", "ComponentExtractor", "normalize_component"]

#: Description words naming an operator, folded to one canonical name.
_OPERATOR_WORDS: dict[str, str] = {
    **{
        w: w
        for w in (
            "mean",
            "std",
            "sum",
            "max",
            "min",
            "rank",
            "corr",
            "slope",
            "rsquare",
            "resi",
            "quantile",
            "median",
            "count",
            "delta",
            "ref",
            "log",
            "abs",
            "sign",
            "ema",
            "wma",
            "idxmax",
            "idxmin",
            "sort",
            "reverse",
            "filter",
            "split",
            "join",
            "replace",
            "round",
            "product",
            "gcd",
            "lcm",
            "fibonacci",
            "prime",
            "palindrome",
            "factorial",
            "modulo",
            "digits",
            "vowels",
            "binary",
            "parentheses",
            "intersection",
            "union",
            "unique",
            "zip",
            "shift",
            "rolling",
            "cumsum",
            "diff",
            "ratio",
            "variance",
            "skew",
            "kurt",
        )
    },
    "average": "mean",
    "deviation": "std",
    "maximum": "max",
    "minimum": "min",
    "highest": "max",
    "lowest": "min",
    "correlation": "corr",
    "regression": "slope",
    "sorted": "sort",
    "sorting": "sort",
    "reversed": "reverse",
    "logarithm": "log",
    "absolute": "abs",
    "counts": "count",
    "summation": "sum",
    "total": "sum",
    "primes": "prime",
    "digit": "digits",
    "vowel": "vowels",
    "moving": "rolling",
    "window": "rolling",
    "lag": "ref",
    "difference": "diff",
    "residual": "resi",
}
_FIELD_WORDS = frozenset({"open", "high", "low", "close", "volume", "vwap"})
_OP_ALIASES = {"average": "mean", "stddev": "std", "less": "min", "greater": "max"}
_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")
#: ``([A-Za-z_][\w.]*)\(`` (a name right before ``(``) with the same matches, tried only where a
#: run of ``[\w.]`` starts (its leading digits and dots skipped): the plain pattern, tried at
#: every letter, rescanned each word to its end (a description's prose has many words and few
#: calls; a third of the time of reading one).
_TIGHT_CALL = re.compile(r"(?<![\w.])(?:[^\WA-Za-z_]|\.)*([A-Za-z_][\w.]*)\(")
_FIELD = re.compile(r"\$([A-Za-z_]\w*)")
_BACKTICK = re.compile(r"`([A-Za-z_][\w.]*)`")
_WORD = re.compile(r"[A-Za-z]+")
_IGNORED_CALLS = frozenset({"def", "print", "if", "for", "while", "return", "lambda", "and", "or"})


@functools.lru_cache(maxsize=16_384)  # a task names a few of a small vocabulary
def normalize_component(kind: str, name: str) -> str:
    """Canonical component string: ``normalize_component("op", "np.Mean") == "op:mean"``."""
    base = name.rsplit(".", 1)[-1].strip().lower().lstrip("$")
    if kind == "op":
        base = _OP_ALIASES.get(base, base)
    return f"{kind}:{base}"


@runtime_checkable
class ComponentExtractor(Protocol):
    """Names the components of a task (and, when given, of an implementation of it)."""

    def extract(self, task: Task, code: str | None = None) -> list[str]:
        """Sorted, distinct component strings (see :func:`normalize_component`)."""
        ...


def _from_formula(text: str) -> Iterable[str]:
    for m in _FIELD.finditer(text):
        yield normalize_component("field", m.group(1))
    for m in _CALL.finditer(text):
        if m.group(1) not in _IGNORED_CALLS:
            yield normalize_component("op", m.group(1))


def _from_signature(text: str) -> Iterable[str]:
    """Annotated types of a Python signature (``def f(x: List[int]) -> str:``)."""
    src = text.strip()
    if not src.startswith(("def ", "async def ")):
        return
    try:
        tree = ast.parse(src.rstrip(":") + ":\n    pass\n" if not src.endswith("pass") else src)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.FunctionDef) and (
            ann := node.annotation if isinstance(node, ast.arg) else node.returns
        ):
            for sub in ast.walk(ann):
                if isinstance(sub, ast.Name):
                    yield normalize_component("type", sub.id)


def _from_description(text: str, with_fields: bool) -> Iterable[str]:
    for m in _FIELD.finditer(text):
        yield normalize_component("field", m.group(1))
    for m in _TIGHT_CALL.finditer(text):
        if m.group(1) not in _IGNORED_CALLS:
            yield normalize_component("op", m.group(1))
    for m in _BACKTICK.finditer(text):
        yield normalize_component("op", m.group(1))
    operators = _OPERATOR_WORDS
    for w in _WORD.findall(text):
        low = w.lower()
        op = operators.get(low)
        if op is not None:
            yield normalize_component("op", op)
        elif with_fields and low in _FIELD_WORDS and w == low:
            yield normalize_component("field", low)


def _from_code(code: str) -> Iterable[str]:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        yield from _from_formula(code)
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name and name not in _IGNORED_CALLS:
                yield normalize_component("op", name)
        elif isinstance(node, ast.Subscript):
            s = node.slice
            if isinstance(s, ast.Constant) and isinstance(s.value, str) and s.value.isidentifier():
                yield normalize_component("field", s.value)


class BuiltinComponentExtractor:
    """Deterministic component extractor (tokenization and the ``ast`` module, no LLM).

    Reads the formulation (``$fields`` and ``Operator(`` calls, or the annotated types of a
    Python signature), the variables, the description (calls, back-quoted names, operator and
    field words — the latter only for tasks whose formulation names ``$fields``) and, when
    given, the code (called functions and methods, ``df["field"]``). The task category is a
    component too, so every categorised task has at least one.

    Example:
        >>> t = Task("a/MA5", "MA5", "Average close", formulation="Mean($close, 5)/$close")
        >>> BuiltinComponentExtractor().extract(t)
        ['field:close', 'op:mean']
    """

    def extract(self, task: Task, code: str | None = None) -> list[str]:
        """Components of ``task`` (and of ``code`` when given), sorted and distinct."""
        found: set[str] = set()
        found.update(_from_formula(task.formulation))
        found.update(_from_signature(task.formulation))
        for name in task.variables:
            if name.startswith("$"):
                found.add(normalize_component("field", name))
            elif name.isidentifier() and name[0].isupper():
                found.add(normalize_component("op", name))
        has_fields = any(c.startswith("field:") for c in found)
        found.update(_from_description(task.description, has_fields))
        if code:
            found.update(_from_code(code))
        if task.category:
            found.add(normalize_component("category", task.category))
        return sorted(c for c in found if not c.endswith(":"))
