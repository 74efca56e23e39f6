"""Token-level adaptation of code written for one task to a similar task.

The differences between the source and target tasks' formulations (and names) give a mapping of
windows (``5 → 10``), data fields (``$close → $open``) and identifiers (``MA5 → MA10``,
``Mean → Std``); the mapping is applied to the NUMBER, NAME and STRING tokens of the source code,
and to numbers that end an identifier (``close_diff10 → close_diff15``). A number is mapped only
when it is a positive whole number that the source uses as a window (or shift) and its image
one that the target uses in the same role (:func:`._windows.window_roles`): epsilons
(``1e-12``), floats, quantile levels and exponents are never substituted. Numbers are taken
from task names only when the rest of the names agree (``MA5 → MA10``, not ``MA5 →
alpha002``). Nothing else is changed, so the result is only as good as the retrieved source.
"""

from __future__ import annotations

import difflib
import io
import keyword
import re
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from costeer_lab.coders._adapt_io import adapt_io
from costeer_lab.coders._windows import is_window_literal, window_roles
from costeer_lab.records import Task, Workspace

__all__ = ["Adaptation", "adapt_code", "adapt_workspace", "derive_adaptation"]

_TOKEN = re.compile(r"\$[A-Za-z_]\w*|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_]\w*|\S")
_NAME_PART = re.compile(r"\d+(?:\.\d+)?|[A-Za-z_]+|\S")
#: Keyword arguments whose numbers are never windows or parameters of the formula.
_FIXED_KEYWORDS = frozenset({"axis", "level", "ddof", "protocol", "ndigits", "decimals"})
_FSTRING_MIDDLE = getattr(tokenize, "FSTRING_MIDDLE", None)
#: A number ending an identifier or one of its ``_`` parts (``close_diff10``, ``ma5_x``).
_NAME_NUMBER = re.compile(r"(?<=[A-Za-z_])(\d+)(?=_|$)")
#: Lower-case operator names that are also pandas/numpy methods (``Mean`` → ``.mean``); an
#: operator mapped to any other name (``Rank`` → ``Ts_Rank``) leaves the method calls alone.
_METHODS = frozenset(
    [
        "mean",
        "std",
        "var",
        "sum",
        "max",
        "min",
        "median",
        "skew",
        "kurt",
        "count",
        "rank",
        "quantile",
        "corr",
        "cov",
        "abs",
        "log",
        "exp",
        "diff",
        "shift",
        "sqrt",
        "sign",
        "cumsum",
        "cumprod",
        "prod",
    ]
)
#: Identifiers whose digits are never parameters (dtypes: ``float64``, ``int32``, ...).
_DTYPE_NAME = re.compile(r"^(u?int|float|complex|bool|str|bytes|datetime|timedelta)\d+$")


def _kind(tok: str) -> str:
    if tok.startswith("$"):
        return "field"
    if tok[0].isdigit():
        return "number"
    if tok[0].isalpha() or tok[0] == "_":
        return "name"
    return "other"


@dataclass(frozen=True)
class Adaptation:
    """A source → target rewrite: ``numbers`` by value, ``fields`` (with ``$``), ``names``.

    ``conflicts`` lists source tokens that mapped to two different targets (the first is kept).
    """

    numbers: Mapping[float, str] = field(default_factory=dict)
    fields: Mapping[str, str] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)
    conflicts: tuple[str, ...] = ()
    #: Whole phrases rewritten inside string literals (the formulation, the description).
    phrases: Mapping[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.numbers or self.fields or self.names or self.phrases)

    def describe(self) -> str:
        """Readable summary, e.g. ``5→10, $close→$open, MA5→MA10``."""
        parts = [f"{_fmt(k)}→{v}" for k, v in self.numbers.items()]
        parts += [f"{k}→{v}" for k, v in {**self.fields, **self.names}.items()]
        return ", ".join(parts) or "no change"


def _fmt(x: float) -> str:
    return str(int(x)) if x.is_integer() else repr(x)


class _Builder:
    def __init__(
        self, src_windows: Mapping[int, frozenset[str]], dst_windows: Mapping[int, frozenset[str]]
    ) -> None:
        self.src_windows, self.dst_windows = src_windows, dst_windows
        self.weak = False  # weak evidence (names) never overrides nor conflicts
        self.numbers: dict[float, str] = {}
        self.fields: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.conflicts: list[str] = []

    def add(self, src: str, dst: str) -> None:
        kind = _kind(src)
        if kind != _kind(dst) or kind == "other" or src == dst:
            return
        if self.weak and kind != "number":
            return
        if self.weak and any(len(x) > 1 and x.startswith("0") for x in (src, dst)):
            return  # zero-padded numbers in names are ids (alpha001), not parameters
        if kind == "number":  # only a window of the source becomes a window of the target
            if not (is_window_literal(src) and is_window_literal(dst)):
                return
            roles = self.src_windows.get(int(src), frozenset())
            if not roles & self.dst_windows.get(int(dst), frozenset()):
                return  # not windows, or a shift (Ref's lag) against a window length
            self._put(self.numbers, float(int(src)), str(int(dst)), src)  # "007" → "7"
        elif kind == "field":
            self._put(self.fields, src, dst, src)
        elif not keyword.iskeyword(src) and not keyword.iskeyword(dst):
            self._put(self.names, src, dst, src)

    def _put(self, table: dict[Any, str], key: Any, dst: str, label: str) -> None:
        if key in table and table[key] != dst:
            if not self.weak and label not in self.conflicts:
                self.conflicts.append(label)
            return
        table[key] = dst

    def align(self, a: list[str], b: list[str]) -> None:
        matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "replace" and i2 - i1 == j2 - j1:
                for s, t in zip(a[i1:i2], b[j1:j2], strict=True):
                    self.add(s, t)


def derive_adaptation(source: Task, target: Task) -> Adaptation:
    """The mapping that turns ``source``'s code into code for ``target``.

    Example:
        >>> a = Task("s", "MA5", "", formulation="Mean($close, 5)/$close")
        >>> b = Task("t", "MA10", "", formulation="Mean($close, 10)/$close")
        >>> derive_adaptation(a, b).describe()
        '5→10, MA5→MA10'
    """
    b = _Builder(window_roles(source), window_roles(target))
    b.align(_TOKEN.findall(source.formulation), _TOKEN.findall(target.formulation))
    # Parameters hidden in names (MA5 → MA10) only where the formulations did not decide.
    b.weak = True
    src_parts, dst_parts = _NAME_PART.findall(source.name), _NAME_PART.findall(target.name)
    if _words(src_parts) == _words(dst_parts):  # MA5 → MA10, not MA5 → alpha002
        b.align(src_parts, dst_parts)
    src_entry, dst_entry = source.extra.get("entry_point"), target.extra.get("entry_point")
    if isinstance(src_entry, str) and isinstance(dst_entry, str):
        b.add(src_entry, dst_entry)
    if source.name != target.name and source.name and target.name:
        b.names.setdefault(source.name, target.name)
    phrases = {
        src: dst
        for src, dst in (
            (source.formulation, target.formulation),
            (source.description, target.description),
        )
        if src.strip() and dst.strip() and src != dst
    }
    return Adaptation(b.numbers, b.fields, b.names, tuple(b.conflicts), phrases)


def _rewrite_string(text: str, ad: Adaptation) -> str:
    table = {**ad.fields, **{k: v for k, v in ad.names.items() if len(k) > 1}, **ad.phrases}
    table.update({k[1:]: v[1:] for k, v in ad.fields.items()})  # bare "close" → "open"
    if not table:
        return text
    keys = sorted(table, key=len, reverse=True)
    pattern = re.compile(
        "|".join(rf"(?<![A-Za-z0-9_$]){re.escape(k)}(?![A-Za-z0-9_])" for k in keys)
    )
    return pattern.sub(lambda m: table[m.group(0)], text)


def _words(parts: list[str]) -> list[str]:
    return [p.lower() for p in parts if not p[0].isdigit()]


def _rewrite_name_number(tok: str, ad: Adaptation) -> str:
    """``close_diff10`` → ``close_diff15`` when ``10 → 15`` is mapped."""
    if not ad.numbers or _DTYPE_NAME.match(tok):
        return tok

    def sub(m: re.Match[str]) -> str:
        new = ad.numbers.get(float(m.group(1)))
        return new if new is not None and new.isdigit() else m.group(1)

    return _NAME_NUMBER.sub(sub, tok)


def _rewrite_name(tok: str, prev: str, ad: Adaptation) -> str:
    if tok in ad.names:
        return ad.names[tok]
    for src, dst in ad.names.items():
        if src[:1].isupper() and tok == src.lower() and dst.lower() in _METHODS:
            return dst.lower()  # Mean → Std also rewrites .mean → .std (not .rank → .ts_rank)
    if prev != ".":
        for src, dst in ad.fields.items():
            if tok == src[1:] and dst[1:].isidentifier():
                return dst[1:]
    if prev != ".":
        return _rewrite_name_number(tok, ad)
    return tok


def adapt_code(code: str, ad: Adaptation) -> str:
    """Apply ``ad`` to the NUMBER, NAME and STRING tokens of ``code`` (comments untouched).

    Only whole-number literals are rewritten (never ``5.0``, ``1e-12`` or an exponent ``x**5``).

    Code that does not tokenize is returned unchanged.

    Example:
        >>> ad = Adaptation(numbers={5.0: "10"}, fields={"$close": "$open"})
        >>> adapt_code('x = df["$close"].rolling(5).mean()\\n', ad)
        'x = df["$open"].rolling(10).mean()\\n'
    """
    if ad.empty:
        return code
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return code
    starts = [0]
    for line in io.StringIO(code).readlines():  # the same lines tokenize sees
        starts.append(starts[-1] + len(line))
    edits: list[tuple[int, int, str]] = []
    prev, prev2 = "", ""
    for tok in tokens:
        new = tok.string
        if tok.type == tokenize.NUMBER:  # only whole numbers: 5.0, 1e-12, 0x5 are no windows
            if (
                is_window_literal(tok.string)
                and float(tok.string) in ad.numbers
                and prev != "**"
                and not (prev == "=" and prev2 in _FIXED_KEYWORDS)
            ):
                new = ad.numbers[float(tok.string)]
        elif tok.type == tokenize.NAME:
            new = _rewrite_name(tok.string, prev, ad)
        elif tok.type == tokenize.STRING or (_FSTRING_MIDDLE and tok.type == _FSTRING_MIDDLE):
            new = _rewrite_string(tok.string, ad)
        if new != tok.string:
            begin = starts[tok.start[0] - 1] + tok.start[1]
            end = starts[tok.end[0] - 1] + tok.end[1]
            edits.append((begin, end, new))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            prev2, prev = prev, tok.string
    out = code
    for begin, end, new in sorted(edits, reverse=True):
        out = out[:begin] + new + out[end:]
    return out


def adapt_workspace(ws: Workspace, source: Task, target: Task) -> tuple[Workspace, Adaptation]:
    """Adapt every ``.py`` file of ``ws`` from ``source`` to ``target`` (other files copied):
    :func:`adapt_code`, then the file and column conventions (:func:`._adapt_io.adapt_io`)."""
    ad = derive_adaptation(source, target)
    files = {
        path: adapt_io(adapt_code(text, ad), source, target) if path.endswith(".py") else text
        for path, text in ws.files.items()
    }
    return Workspace(files, ws.main_file), ad
