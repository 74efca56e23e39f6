"""Planted mistakes in an RD-Agent reference, for ``factor_bench --rdagent-file``.

Each mistake turns a reference (``gt_code``) into a wrong candidate:

* ``fill`` — the written result with missing values filled with 0;
* ``shift`` — the written result one day later per instrument (a look-back error);
* ``window`` — the first integer window of a ``rolling``/``shift``/``pct_change``/``diff``/
  ``ewm`` call changed (``n`` → ``n + 1``; a call without one gets ``2``; a window held in a
  module-level name is changed where it is assigned);
* ``sign`` — the written result negated;
* ``cross_instrument`` — each value taken from the neighbouring instrument of the same date
  (the written result shifted by one row within each date);
* ``grouping`` — the grouping of the reference's row-order steps toggled in the code: a
  ``shift``/``diff``/``pct_change``/``rolling``/``ewm`` grouped by instrument is applied to the
  stacked table instead, and one applied to the stacked table is grouped by instrument
  (``None`` when the code has neither; a toggled step that cannot run counts as crashed).

Mistakes on the written result append a few lines that read the output file, change it and
write it back; ``window`` edits the code (``None`` when it has no such call).

Example:
    >>> plant("window", "x = s.rolling(5).mean()\\n", "result.h5")
    'x = s.rolling(6).mean()'
    >>> plant("window", "x = s.sum()\\n", "result.h5") is None
    True
    >>> plant("grouping", "x = s.groupby(level='instrument').diff(2)\\n", "result.h5")
    'x = s.diff(2)'
    >>> plant("grouping", "x = s.pct_change(5)\\n", "result.h5")
    "x = s.groupby(level='instrument').pct_change(5)"
"""

from __future__ import annotations

import ast

__all__ = ["MISTAKES", "plant"]

MISTAKES = ("fill", "shift", "window", "sign", "cross_instrument", "grouping")
_ON_RESULT = {
    "fill": "_r.fillna(0)",
    "shift": '_r.sort_index().groupby(level="instrument").shift(1)',
    "sign": "-_r",
    "cross_instrument": '_r.sort_index().groupby(level="datetime").shift(1)',
}
_WINDOW_CALLS = ("rolling", "shift", "pct_change", "diff", "ewm")
_WINDOW_KEYWORDS = ("window", "periods", "span")


def _window_arg(call: ast.Call) -> tuple[ast.Call, ast.expr | None, str | None]:
    """(call, its window argument or None, the keyword holding it or None)."""
    if call.args:
        return call, call.args[0], None
    for kw in call.keywords:
        if kw.arg in _WINDOW_KEYWORDS:
            return call, kw.value, kw.arg
    return call, None, None


def _module_ints(tree: ast.Module) -> dict[str, ast.Constant]:
    out = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and type(node.value.value) is int
        ):
            out[node.targets[0].id] = node.value
    return out


def _change_window(code: str) -> str | None:
    tree = ast.parse(code)
    names = _module_ints(tree)
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in _WINDOW_CALLS
    ]
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    for call in calls:
        _, arg, _kw = _window_arg(call)
        if arg is None:
            if call.func.attr == "ewm":  # type: ignore[attr-defined]
                continue
            call.args.insert(0, ast.Constant(2))
            return ast.unparse(tree)
        if isinstance(arg, ast.Constant) and type(arg.value) is int and arg.value != 0:
            arg.value += 1
            return ast.unparse(tree)
        if isinstance(arg, ast.Name) and arg.id in names:
            held = names[arg.id]
            held.value = int(held.value) + 1  # type: ignore[arg-type]
            return ast.unparse(tree)
    return None


def _by_instrument(call: ast.Call) -> bool:
    """Whether ``call`` is a ``groupby`` on the instrument (a level or a column)."""
    keys = [*call.args, *(kw.value for kw in call.keywords if kw.arg in ("level", "by"))]
    return any(isinstance(k, ast.Constant) and k.value in ("instrument", 1) for k in keys)


def _grouped_names(tree: ast.Module) -> set[str]:
    """Names bound to a ``groupby(...)`` result (``g = df.groupby(level="instrument")``)."""
    return {
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and isinstance(n.value, ast.Call)
        and isinstance(n.value.func, ast.Attribute)
        and n.value.func.attr == "groupby"
        for t in n.targets
        if isinstance(t, ast.Name)
    }


class _ToggleGrouping(ast.NodeTransformer):
    """Toggles the first row-order step's grouping (see ``grouping`` above). Steps on a name
    bound to a ``groupby`` and steps inside a function or lambda (applied per group) are left
    alone: their grouping is not visible at the call."""

    def __init__(self, grouped: set[str]) -> None:
        self.done = False
        self.grouped = grouped

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if self.done or not isinstance(func, ast.Attribute) or func.attr not in _WINDOW_CALLS:
            return node
        inner = func.value
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and inner.func.attr == "groupby"
        ):
            if _by_instrument(inner):
                func.value = inner.func.value  # grouped by instrument -> the stacked table
                self.done = True
            return node
        base = inner.value if isinstance(inner, ast.Subscript) else inner
        if isinstance(base, ast.Call) or (isinstance(base, ast.Name) and base.id in self.grouped):
            return node  # a column of a grouped frame: left alone
        group = ast.Call(
            ast.Attribute(inner, "groupby", ast.Load()),
            [],
            [ast.keyword("level", ast.Constant("instrument"))],
        )
        func.value = group  # the stacked table -> grouped by instrument
        self.done = True
        return node


def _toggle_grouping(code: str) -> str | None:
    tree = ast.parse(code)
    toggle = _ToggleGrouping(_grouped_names(tree))
    tree = toggle.visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree)) if toggle.done else None


def plant(mistake: str, code: str, output_file: str) -> str | None:
    """The reference ``code`` with ``mistake`` planted (``None``: it does not apply)."""
    if mistake == "window":
        return _change_window(code)
    if mistake == "grouping":
        return _toggle_grouping(code)
    transform = _ON_RESULT[mistake]
    return (
        f"{code.rstrip()}\n\n"
        "import pandas as _pd\n"
        f"_r = _pd.read_hdf({output_file!r})\n"
        f"_r = {transform}\n"
        f'_r.to_hdf({output_file!r}, key="data", mode="w")\n'
    )
