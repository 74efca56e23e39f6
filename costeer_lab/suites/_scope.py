"""What a factor reference computes: per instrument, per date, or along the stacked rows.

A factor table is *stacked*: one row per (``datetime``, ``instrument``), sorted by date, then
instrument. A reference's steps fall in three kinds:

* ``time_series`` — per instrument over time (``groupby(level="instrument")``, a loop over the
  instrument groups, or a row operation on the wide table of ``unstack()``);
* ``cross_sectional`` — per date across instruments (``groupby(level="datetime")``);
* ``stacked_rows`` — a row-order operation (``diff``, ``pct_change``, ``shift``, ``rolling``,
  ``ewm``, ``expanding``, ``cum*``, ``rank``) on the stacked table or one of its columns
  *without* grouping: the row ``n`` above belongs to another instrument. RD-Agent's published
  Volume&Price ground truths do this.

:func:`analyse_scope` reads the code (``ast``; nothing runs) and lists the steps in the order
they run;
:func:`scope_conflict` tells whether a declared scope contradicts them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

__all__ = [
    "ScopeAnalysis",
    "ScopeMismatchWarning",
    "ScopeStep",
    "analyse_scope",
    "scope_conflict",
]

ROW_OPS = frozenset({"diff", "pct_change", "shift", "cumsum", "cumprod", "cummax", "cummin"})
WINDOW_OPS = frozenset({"rolling", "ewm", "expanding"})
_READERS = frozenset({"read_hdf", "read_parquet", "read_csv", "read_feather"})
_WIDE = frozenset({"unstack", "pivot", "pivot_table"})
_GROUP_APPLY = frozenset({"apply", "transform", "agg", "aggregate", "pipe"})


class ScopeMismatchWarning(UserWarning):
    """A task's declared scope contradicts what its reference computes."""


@dataclass(frozen=True)
class ScopeStep:
    """One step of a reference: its kind, the operation and what it applies to.

    Example:
        >>> step = ScopeStep("stacked_rows", "pct_change(5)", ("$close",), 3, "pct_change")
        >>> step.describe()[:36]
        'pct_change(5) of the "$close" values'
    """

    kind: str  # time_series, cross_sectional, stacked_rows
    op: str  # the call as written, e.g. "rolling(10).mean()"
    columns: tuple[str, ...]  # input columns the operand is computed from
    line: int
    method: str = ""
    order: str = "datetime"  # the stacked order: "datetime" or "instrument" first

    def describe(self) -> str:
        """The step in words (what the contract states)."""
        subject = _subject(self.columns)
        if self.kind == "time_series":
            return (
                f'{self.op} of {subject} per instrument (grouped by "instrument", in date order)'
            )
        if self.kind == "cross_sectional":
            return f'{self.op} of {subject} per date across instruments (grouped by "datetime")'
        order = "(datetime, instrument)" if self.order == "datetime" else "(instrument, datetime)"
        head = (
            f"{self.op} of {subject} over the whole table in {order} row order, WITHOUT grouping"
        )
        if self.method == "rank":
            return f"{head}: the rank is taken over all rows (every date and instrument)"
        if self.method in WINDOW_OPS or self.method.startswith("cum"):
            return (
                f"{head}: the window runs over the rows above, which belong to other instruments"
            )
        n = _lag(self.op)
        rows = "the row above it" if n == "1" else f"the row {n} rows above it"
        if self.order == "instrument":
            return (
                f"{head}: each value is compared with {rows}, the same instrument's earlier "
                f"date except in an instrument's first rows, which reach the previous instrument"
            )
        return f"{head}: each value is compared with {rows}, which belongs to another instrument"


@dataclass(frozen=True)
class ScopeAnalysis:
    """The steps of a reference, in source order, and the scope they add up to.

    Example:
        >>> a = analyse_scope("import pandas as pd\\ndf = pd.read_hdf('x.h5')\\n"
        ...                   "f = df['$close'].pct_change(5)")
        >>> a.scope, a.kinds
        ('stacked_rows', frozenset({'stacked_rows'}))
    """

    steps: tuple[ScopeStep, ...] = ()

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(s.kind for s in self.steps)

    @property
    def scope(self) -> str:
        """``stacked_rows`` when any step crosses instruments by row order; else ``both``,
        ``time_series``, ``cross_sectional``, or ``elementwise`` (no step at all)."""
        kinds = self.kinds
        if "stacked_rows" in kinds:
            return "stacked_rows"
        if kinds == {"time_series", "cross_sectional"}:
            return "both"
        return next(iter(kinds)) if kinds else "elementwise"

    def describe(self) -> list[str]:
        """One sentence per step."""
        return [s.describe() for s in self.steps]


def scope_conflict(declared: str, analysis: ScopeAnalysis) -> str | None:
    """Why a declared scope contradicts the reference's steps, or ``None`` when it does not.

    ``both`` admits time-series and cross-sectional steps; any declared scope admits a
    reference with no step; only ``stacked_rows`` admits a row-order step across instruments.

    Example:
        >>> scope_conflict("time_series", ScopeAnalysis((ScopeStep("stacked_rows", "diff(1)",
        ...                ("$close",), 4, "diff"),)))[:47]
        'the reference applies diff(1) of the "$close" v'
    """
    allowed = {
        "time_series": {"time_series"},
        "cross_sectional": {"cross_sectional"},
        "both": {"time_series", "cross_sectional"},
        "stacked_rows": {"time_series", "cross_sectional", "stacked_rows"},
        "elementwise": set(),
    }.get(declared, set())
    for step in analysis.steps:
        if step.kind not in allowed:
            return f"the reference applies {step.describe()} (line {step.line})"
    if declared == "stacked_rows" and analysis.steps and "stacked_rows" not in analysis.kinds:
        return "the reference has no row-order step across instruments"
    return None


def analyse_scope(code: str) -> ScopeAnalysis:
    """The steps of a reference's source (see the module docstring).

    A file that does not parse has no steps (the evaluator reports the syntax error).

    Example:
        >>> code = ("import pandas as pd\\ndf = pd.read_hdf('daily_pv.h5', key='data')\\n"
        ...         "r = df['$close'].groupby(level='instrument').shift(1)\\n"
        ...         "f = r.groupby(level='datetime').rank(pct=True)")
        >>> [(s.kind, s.op) for s in analyse_scope(code).steps]
        [('time_series', 'shift(1)'), ('cross_sectional', 'rank(pct=True)')]
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ScopeAnalysis()
    walker = _Walker(tree)
    walker.block(tree.body, {})
    return ScopeAnalysis(tuple(walker.steps.values()))


# -- the walker ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Val:
    """What an expression holds: stacked rows, a wide table, a group, a GroupBy object."""

    kind: str  # stacked | wide | group | groupby
    group: str = ""  # time_series / cross_sectional / other (group, groupby)
    columns: frozenset[str] = frozenset()
    frame: bool = False  # an input table: a constant subscript names an input column
    order: str = "datetime"


_Env = dict[str, "_Val | None"]


@dataclass
class _Walker:
    tree: ast.Module
    steps: dict[tuple[int, int, int, int], ScopeStep] = field(default_factory=dict)
    funcs: dict[str, ast.FunctionDef] = field(default_factory=dict)
    depth: int = 0

    def __post_init__(self) -> None:
        self.parents = {c: p for p in ast.walk(self.tree) for c in ast.iter_child_nodes(p)}
        self.consts = {
            t.id: ast.unparse(n.value)
            for n in ast.walk(self.tree)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
            for t in n.targets
            if isinstance(t, ast.Name)
        }

    def block(self, body: list[ast.stmt], env: _Env) -> _Val | None:
        returned: _Val | None = None
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef):
                self.funcs[stmt.name] = stmt
            elif isinstance(stmt, ast.Assign):
                val = self.expr(stmt.value, env)
                for target in stmt.targets:
                    self.assign(target, val, env)
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
                self.assign(stmt.target, self.expr(stmt.value, env), env)
            elif isinstance(stmt, ast.For):
                it = self.expr(stmt.iter, env)
                inner = replace(it, kind="group") if it and it.kind == "groupby" else None
                names = stmt.target.elts if isinstance(stmt.target, ast.Tuple) else [stmt.target]
                self.assign(names[-1], inner, env)
                returned = self.block(stmt.body, env) or returned
            elif isinstance(stmt, ast.Return) and stmt.value is not None:
                returned = self.expr(stmt.value, env) or returned
            elif isinstance(stmt, ast.Expr):
                self.expr(stmt.value, env)
            else:  # if / with / try / while: their bodies run in the same namespace
                for name in ("body", "orelse", "finalbody"):
                    returned = self.block(getattr(stmt, name, []), env) or returned
                for handler in getattr(stmt, "handlers", []):
                    returned = self.block(handler.body, env) or returned
        return returned

    def assign(self, target: ast.expr, val: _Val | None, env: _Env) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = val
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            key = _const(target.slice)
            if key is not None and val is not None:
                env[f"{target.value.id}[{key}]"] = replace(val, frame=False)

    def record(self, kind: str, node: ast.Call, method: str, val: _Val) -> None:
        op = _op_text(node, method, self.parents, self.consts)
        step = ScopeStep(kind, op, tuple(sorted(val.columns)), node.lineno, method, val.order)
        key = (node.lineno, node.col_offset, node.end_lineno or 0, node.end_col_offset or 0)
        self.steps.setdefault(key, step)

    def call_local(
        self, func: ast.FunctionDef | ast.Lambda, args: list[_Val | None]
    ) -> _Val | None:
        if self.depth > 8:
            return None
        params = [a.arg for a in func.args.args]
        env: _Env = dict(zip(params, args, strict=False))
        self.depth += 1
        try:
            if isinstance(func, ast.Lambda):
                return self.expr(func.body, env)
            return self.block(func.body, env)
        finally:
            self.depth -= 1

    def expr(self, node: ast.expr, env: _Env) -> _Val | None:
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, ast.Subscript):
            base = self.expr(node.value, env)
            self.expr(node.slice, env)
            key = _const(node.slice)
            if isinstance(node.value, ast.Name) and key is not None:
                local = env.get(f"{node.value.id}[{key}]")
                if local is not None:
                    return local
            keys = _keys(node.slice)
            if base is not None and base.frame and keys:
                return replace(base, columns=keys, frame=False)
            return base
        if isinstance(node, ast.Attribute):
            return self.expr(node.value, env)
        if isinstance(node, ast.Lambda):
            return None
        vals = [self.expr(c, env) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
        return _merge(vals)

    def call(self, node: ast.Call, env: _Env) -> _Val | None:
        args = [self.expr(a, env) for a in node.args if not isinstance(a, ast.Lambda)]
        for kw in node.keywords:
            self.expr(kw.value, env)
        func = node.func
        if isinstance(func, ast.Name):
            local = self.funcs.get(func.id)
            if local is not None:
                return self.call_local(local, args)
            return _merge(args)
        if not isinstance(func, ast.Attribute):
            return None
        method = func.attr
        if method in _READERS:
            return _Val("stacked", frame=True)
        recv = self.expr(func.value, env)
        if method == "append" and isinstance(func.value, ast.Name) and args:
            env[func.value.id] = _merge([env.get(func.value.id), *args])
        if recv is None:
            return _merge(args)
        if method == "groupby":
            kind = _group_kind(node)
            return _Val("groupby", kind, recv.columns, recv.frame, recv.order)
        if recv.kind == "groupby":
            return self.grouped(node, method, recv, env)
        if recv.kind == "stacked":
            return self.stacked(node, method, recv)
        if recv.kind == "wide":
            if method == "stack":
                return _Val("stacked", columns=recv.columns)
            if method in ROW_OPS | WINDOW_OPS | {"rank"}:
                kind = "cross_sectional" if _axis(node) == 1 else "time_series"
                self.record(kind, node, method, recv)
            return recv
        if recv.kind == "group" and method in ROW_OPS | WINDOW_OPS | {"rank"}:
            self.record(recv.group, node, method, recv)
        return recv

    def grouped(self, node: ast.Call, method: str, recv: _Val, env: _Env) -> _Val | None:
        out = _Val("stacked", columns=recv.columns, order=recv.order)
        if method in _GROUP_APPLY and node.args:
            fn = node.args[0]
            target = fn if isinstance(fn, ast.Lambda) else None
            if isinstance(fn, ast.Name):
                target = self.funcs.get(fn.id)  # type: ignore[assignment]
            before = len(self.steps)
            if target is not None:
                self.call_local(target, [_Val("group", recv.group, recv.columns)])
            if len(self.steps) == before and recv.group != "other":
                self.record(recv.group, node, method, recv)
            return out
        if method in WINDOW_OPS | ROW_OPS | {"rank"} or method in _GROUP_APPLY:
            if recv.group != "other":
                self.record(recv.group, node, method, recv)
            return out
        if method in {"mean", "std", "sum", "min", "max", "median", "var", "count"}:
            return out
        return recv  # g["col"], g[["a", "b"]] keep the grouping

    def stacked(self, node: ast.Call, method: str, recv: _Val) -> _Val:
        if method in _WIDE:
            return _Val("wide", columns=recv.columns)
        if method in {"swaplevel", "reorder_levels"}:
            return replace(recv, order="instrument" if recv.order == "datetime" else "datetime")
        if method == "sort_index":
            level = set().union(*(_strings(a) for a in [*node.args, *node.keywords]))
            if level & {"instrument", "1"}:
                return replace(recv, order="instrument")
            return replace(recv, order="datetime") if level & {"datetime", "0"} else recv
        if method in ROW_OPS | WINDOW_OPS | {"rank"} and _axis(node) != 1:
            self.record("stacked_rows", node, method, recv)
        return recv


# -- small helpers ------------------------------------------------------------------------------
def _merge(vals: list[_Val | None]) -> _Val | None:
    known = [v for v in vals if v is not None and v.kind in {"stacked", "wide", "group"}]
    if not known:
        return None
    cols = frozenset().union(*(v.columns for v in known))
    return replace(known[0], columns=cols, frame=known[0].frame and len(known) == 1)


def _const(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _keys(node: ast.expr) -> frozenset[str]:
    items = node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node]
    return frozenset(k for k in (_const(i) for i in items) if k is not None)


def _strings(node: ast.AST) -> set[str]:
    return {
        str(n.value)
        for n in ast.walk(node)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, (str, int))
        and not isinstance(n.value, bool)
    }


def _group_kind(node: ast.Call) -> str:
    keys = set()
    for arg in node.args:
        keys |= _strings(arg)
    for kw in node.keywords:
        if kw.arg in {"level", "by", None}:
            keys |= _strings(kw.value)
    inst = bool(keys & {"instrument", "1"})
    date = bool(keys & {"datetime", "date", "0"})
    if inst == date:
        return "other"
    return "time_series" if inst else "cross_sectional"


def _axis(node: ast.Call) -> int:
    for kw in node.keywords:
        if kw.arg == "axis" and isinstance(kw.value, ast.Constant):
            return 1 if kw.value.value in (1, "columns") else 0
    return 0


def _op_text(
    node: ast.Call, method: str, parents: dict[ast.AST, ast.AST], consts: dict[str, str]
) -> str:
    if method in _GROUP_APPLY:
        return f"{method}(a function)"
    text = f"{method}({_args(node, consts)})"
    attr = parents.get(node)
    call = parents.get(attr) if isinstance(attr, ast.Attribute) else None
    if method in WINDOW_OPS and isinstance(attr, ast.Attribute) and isinstance(call, ast.Call):
        text += f".{attr.attr}({_args(call, consts)})"
    return text


def _args(node: ast.Call, consts: dict[str, str]) -> str:
    def show(a: ast.expr) -> str:
        if isinstance(a, ast.Name) and a.id in consts:
            return consts[a.id]
        if isinstance(a, (ast.Constant, ast.UnaryOp)):
            return ast.unparse(a)
        return "another series"

    parts = [show(a) for a in node.args]
    parts += [f"{k.arg}={show(k.value)}" for k in node.keywords if k.arg]
    return ", ".join(parts)


def _lag(op: str) -> str:
    """The lag of a ``shift``/``diff``/``pct_change`` call as written: its first positional
    argument or its ``periods=``, else 1.

    Example:
        >>> _lag("pct_change(fill_method=None)"), _lag("diff(periods=5)"), _lag("shift(2)")
        ('1', '5', '2')
    """
    args = [a.strip() for a in op[op.find("(") + 1 : op.rfind(")")].split(",") if a.strip()]
    for arg in args:
        if arg.startswith("periods="):
            return arg.removeprefix("periods=")
    positional = [a for a in args if "=" not in a]
    return positional[0] if positional else "1"


def _subject(columns: tuple[str, ...]) -> str:
    if not columns:
        return "an intermediate value"
    if len(columns) == 1:
        return f'the "{columns[0]}" values'
    names = ", ".join(f'"{c}"' for c in columns)
    return f"a value computed from {names}"
