"""Reusable templates from code: comments and docstrings stripped, layout normalised, literals
abstracted.

A template is what two implementations of the same idea share. ``make_template`` parses the code
with :mod:`ast` and prints it back with :func:`ast.unparse`, which drops comments and normalises
whitespace and quoting; before printing, docstrings are removed, string literals become
``'<str>'`` and numbers other than ``0``, ``1`` and ``2`` become ``<num>`` (column names, window
lengths and thresholds are what differs between tasks, not the technique).
"""

from __future__ import annotations

import ast

from costeer_lab.errors import MemoryRefusedError

__all__ = ["make_template"]

_KEPT_NUMBERS = (0, 1, 2)


class _Abstract(ast.NodeTransformer):
    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return ast.copy_location(ast.Constant("<str>"), node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, str | bytes):
            return ast.copy_location(ast.Constant("<str>"), node)
        if isinstance(value, bool) or value is None or value is Ellipsis:
            return node
        if isinstance(value, int | float | complex) and value not in _KEPT_NUMBERS:
            return ast.copy_location(ast.Name("<num>", ast.Load()), node)
        return node


def _strip_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            first = body[0] if body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]


def make_template(code: str) -> str:
    """The reusable template of Python ``code``.

    Raises:
        MemoryRefusedError: ``code`` is not valid Python (kind ``"syntax"``).

    Example:
        >>> print(make_template('''
        ... def factor(df):  # momentum
        ...     \"\"\"20-day momentum.\"\"\"
        ...     return df["close"] / df["close"].shift(20) - 1
        ... '''))
        def factor(df):
            return df['<str>'] / df['<str>'].shift(<num>) - 1
    """
    if not isinstance(code, str):
        raise MemoryRefusedError(f"code must be a str, got {type(code).__name__}", kind="invalid")
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise MemoryRefusedError(
            f"code does not parse as Python (line {exc.lineno}: {exc.msg}); only working code "
            "is stored as a pattern",
            kind="syntax",
        ) from None
    _strip_docstrings(tree)
    tree = _Abstract().visit(tree)
    return ast.unparse(tree).strip()
