"""Which input files an RD-Agent reference reads, and which of their columns (by AST).

RD-Agent's tasks read up to three HDF5 tables from their working directory: ``daily_pv.h5``
(daily prices), ``daily_f.h5`` (fundamentals) and ``high_freq.h5`` (1-minute bars). The loader
generates only the tables some reference reads, with every column it reads, so a benchmark file
whose references use other column names still runs.

* :func:`files_read` — the table names that occur as string constants in the code;
* :func:`columns_read` — per table, the string subscripts (``df["ROE"]``, ``df[["a", "b"]]``,
  ``df.loc[:, "a"]``) of frames that come from it: a name assigned from an expression that
  mentions the ``read_hdf`` of the table (or a name already derived from it) is derived from it
  too. Columns the code itself creates (``data["rank"] = ...``, ``to_frame("x")``,
  ``rename("x")``, ``assign(x=...)``, keys of a dict literal) and the index levels are not
  inputs. ``for`` targets derive from what they iterate over. A subscript of a
  frame derived from several tables goes to the one whose known
  columns hold it, else to ``daily_f.h5`` (to the daily or minute table when it starts with
  ``$``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

__all__ = ["INPUT_FILES", "columns_read", "files_read"]

#: The tables RD-Agent's factor tasks read, in the order the loader lists them.
INPUT_FILES = ("daily_pv.h5", "daily_f.h5", "high_freq.h5")
_INDEX_LEVELS = {"datetime", "instrument"}


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def files_read(code: str) -> list[str]:
    """The input tables named in ``code`` (``[]`` when it names none), in :data:`INPUT_FILES`
    order.

    Example:
        >>> files_read("import pandas as pd\\nf = pd.read_hdf('daily_f.h5')")
        ['daily_f.h5']
    """
    try:
        strings = set(_strings(ast.parse(code)))
    except SyntaxError:
        strings = {f for f in INPUT_FILES if f in code}
    return [f for f in INPUT_FILES if f in strings]


def _root(node: ast.AST) -> ast.AST:
    """The innermost object of an attribute/call/subscript chain (``a`` of ``a.b(c)[d]``)."""
    while True:
        if isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return node


def _targets(node: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]


def _sources(tree: ast.Module) -> dict[str, set[str]]:
    """Variable name → the tables its value derives from (a fixed point over assignments)."""
    derived: dict[str, set[str]] = {}
    pairs: list[tuple[list[ast.expr], ast.expr]] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign):
            pairs.append((n.targets, n.value))
        elif isinstance(n, ast.AnnAssign | ast.AugAssign) and n.value is not None:
            pairs.append(([n.target], n.value))
        elif isinstance(n, ast.For | ast.comprehension):  # for _, g in df.groupby(...)
            pairs.append(([n.target], n.iter))
    changed = True
    while changed:
        changed = False
        for targets, value in pairs:
            files = {f for f in _strings(value) if f in INPUT_FILES}
            for n in ast.walk(value):
                if isinstance(n, ast.Name):
                    files |= derived.get(n.id, set())
            if not files:
                continue
            for t in targets:
                if isinstance(t, ast.Subscript):
                    continue  # a column written into an existing frame
                for name in _targets(t):
                    if not files <= derived.get(name, set()):
                        derived.setdefault(name, set()).update(files)
                        changed = True
    return derived


def _created(tree: ast.Module) -> set[str]:
    """Columns the code creates: assigned subscripts, ``to_frame("x")``, ``rename("x")``,
    ``assign(x=...)``, the keys of a dict literal."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
            out.update(_subscript_columns(n))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr in ("to_frame", "rename") and n.args:
                first = n.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    out.add(first.value)
            if n.func.attr == "assign":
                out.update(k.arg for k in n.keywords if k.arg)
        elif isinstance(n, ast.Dict):  # pd.DataFrame({"x": ...})
            keys = [k.value for k in n.keys if isinstance(k, ast.Constant)]
            out.update(k for k in keys if isinstance(k, str))
    return out


def _subscript_columns(sub: ast.Subscript) -> list[str]:
    key = sub.slice
    parts = key.elts if isinstance(key, ast.Tuple) else [key]
    out: list[object] = []
    for part in parts:
        if isinstance(part, ast.Constant):
            out.append(part.value)
        elif isinstance(part, ast.List | ast.Tuple):
            out += [e.value for e in part.elts if isinstance(e, ast.Constant)]
    return [c for c in out if isinstance(c, str)]


def columns_read(
    code: str, known: Mapping[str, Iterable[str]] | None = None
) -> dict[str, list[str]]:
    """Table → the columns ``code`` reads from it (see the module docstring); ``known``: the
    columns each table already has (they decide where a column of a mixed frame comes from).

    Example:
        >>> code = ("import pandas as pd\\n"
        ...         "f = pd.read_hdf('daily_f.h5')\\n"
        ...         "d = f.reset_index()\\n"
        ...         "d['r'] = d.groupby('datetime')['ROE'].rank()\\n"
        ...         "x = d[['r', 'B/P']]\\n")
        >>> columns_read(code)
        {'daily_f.h5': ['B/P', 'ROE']}
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    derived = _sources(tree)
    written = _created(tree)
    known_sets = {k: set(v) for k, v in (known or {}).items()}
    out: dict[str, set[str]] = {}
    for n in ast.walk(tree):
        if not isinstance(n, ast.Subscript) or not isinstance(n.ctx, ast.Load):
            continue
        root = _root(n.value)
        files = set(derived.get(root.id, set())) if isinstance(root, ast.Name) else set()
        files |= {f for f in _strings(n.value) if f in INPUT_FILES}  # read_hdf(...)["x"]
        if not files:
            continue
        for col in _subscript_columns(n):
            if col in written or col in _INDEX_LEVELS:
                continue
            out.setdefault(_owner(col, files, known_sets), set()).add(col)
    return {f: sorted(out[f]) for f in INPUT_FILES if f in out}


def _owner(column: str, files: set[str], known: Mapping[str, set[str]]) -> str:
    if len(files) == 1:
        return next(iter(files))
    holders = [f for f in INPUT_FILES if f in files and column in known.get(f, set())]
    if holders:
        return holders[0]
    if column.startswith("$"):
        return "daily_pv.h5" if "daily_pv.h5" in files else "high_freq.h5"
    return "daily_f.h5" if "daily_f.h5" in files else sorted(files)[0]
