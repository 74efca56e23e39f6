"""The discovery version of the hidden tests: an ``ast`` transform that lets one pass collect
as many calls of the candidate's function as it can.

* ``assert test, msg`` becomes ``try: test`` / ``except Exception: pass``: the test expression
  is evaluated (its calls are recorded) and never stops the pass.
* Inside functions, every other statement is guarded against ``PendingError`` — raised when
  the test converts an answer that is not known yet (``if got != want:``, ``for x in got:``):
  the statement is skipped and the names it would bind become ``PENDING``, so later calls that
  depend on them are left for the next round instead of being made with stale arguments.

The transform never changes what the replay runs: the verdict comes from the original tests.
"""

from __future__ import annotations

import ast

__all__ = ["PENDING_ERROR_NAME", "PENDING_NAME", "SWALLOWED_NAME", "discovery_tree"]

#: Names the discovery scope binds: ``Exception``, ``PENDING`` and its ``PendingError``.
SWALLOWED_NAME = "__costeer_discovery_swallows__"
PENDING_NAME = "__costeer_pending__"
PENDING_ERROR_NAME = "__costeer_pending_error__"

_UNGUARDED = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
    ast.Pass,
    ast.Break,
    ast.Continue,
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.comprehension)


def _bound_names(stmt: ast.stmt) -> list[str]:
    """Names a statement binds in its own scope (not inside nested functions or classes)."""
    names: dict[str, None] = {}
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names[node.id] = None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names[child.name] = None
            elif not isinstance(child, _SCOPES):
                todo.append(child)
    return sorted(names)


def _is_probe(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Try) and any(
        isinstance(h.type, ast.Name) and h.type.id == SWALLOWED_NAME for h in stmt.handlers
    )


def _guard(stmt: ast.stmt) -> ast.stmt:
    if isinstance(stmt, _UNGUARDED) or _is_probe(stmt):
        return stmt
    for field in ("body", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            setattr(stmt, field, [_guard(s) for s in block])
    for handler in getattr(stmt, "handlers", ()):
        handler.body = [_guard(s) for s in handler.body]
    for case in getattr(stmt, "cases", ()):
        case.body = [_guard(s) for s in case.body]
    names = _bound_names(stmt)
    fallback: list[ast.stmt] = (
        [ast.Assign([ast.Name(n, ast.Store()) for n in names], ast.Name(PENDING_NAME, ast.Load()))]
        if names
        else [ast.Pass()]
    )
    guarded = ast.Try(
        body=[stmt],
        handlers=[ast.ExceptHandler(ast.Name(PENDING_ERROR_NAME, ast.Load()), None, fallback)],
        orelse=[],
        finalbody=[],
    )
    return ast.copy_location(guarded, stmt)


class _Discovery(ast.NodeTransformer):
    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        probe = ast.Try(
            body=[ast.Expr(node.test)],
            handlers=[ast.ExceptHandler(ast.Name(SWALLOWED_NAME, ast.Load()), None, [ast.Pass()])],
            orelse=[],
            finalbody=[],
        )
        return ast.copy_location(probe, node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)  # asserts and nested functions first
        node.body = [_guard(s) for s in node.body]
        return node


def discovery_tree(tests: str, filename: str) -> ast.Module:
    """The discovery version of ``tests`` (see the module docstring).

    Example:
        >>> tree = discovery_tree("def check(c):\\n    if c(1) != 2:\\n        x = 3\\n", "t")
        >>> print(ast.unparse(tree))
        def check(c):
            try:
                if c(1) != 2:
                    try:
                        x = 3
                    except __costeer_pending_error__:
                        x = __costeer_pending__
            except __costeer_pending_error__:
                x = __costeer_pending__
    """
    tree = ast.parse(tests, filename)
    _Discovery().visit(tree)  # the module node itself is kept; its statements are changed
    return ast.fix_missing_locations(tree)
