"""Static checks of a task file's tasks: what can be told without running anything.

Every check raises ``ValueError`` with one line that names the field (``tasks[2].tests``) and
the task (``task 'add'``); :class:`~costeer_lab.suites._taskfile.TaskFile` turns it into an
:class:`~costeer_lab.errors.InvalidInputError` naming the file. Running each reference against
its own tests is the experiment preflight's job
(:mod:`costeer_lab.experiment._reference_check`).

Example:
    >>> check_entry_point("os.system", "tasks[0]", "t")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: tasks[0].entry_point (task 't'): 'os.system' is not a function name; ...
"""

from __future__ import annotations

import ast
import keyword
import unicodedata
from collections.abc import Sequence
from pathlib import PurePosixPath

__all__ = [
    "check_entry_point",
    "check_file_name",
    "check_label",
    "check_reference",
    "check_tests",
    "check_unique_names",
    "defined_names",
]


def check_label(value: str, field: str) -> None:
    """An id or a name is shown on one line: no control character (newline, tab, NUL, …).

    Example:
        >>> check_label("humaneval/0", "tasks[0].id")
        >>> check_label("a\\nb", "tasks[0].id")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: tasks[0].id: 'a\\nb' contains a control character (U+000A); ...
    """
    bad = next((c for c in value if unicodedata.category(c) == "Cc"), None)
    if bad is not None:
        raise ValueError(
            f"{field}: {value[:60]!r} contains a control character (U+{ord(bad):04X}); "
            "ids and names are shown on one line"
        )


def check_unique_names(names: Sequence[str]) -> None:
    """Two tasks with one ``name`` would be indistinguishable in prompts, results and reports.

    Example:
        >>> check_unique_names(["add", "sub", "add"])
        Traceback (most recent call last):
        ...
        ValueError: tasks[2].name: duplicate task name 'add' (also tasks[0].name)
    """
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first:
            raise ValueError(
                f"tasks[{i}].name: duplicate task name {name!r} (also tasks[{first[name]}].name)"
            )
        first[name] = i


def check_entry_point(entry: str, where: str, task_id: str) -> None:
    """The entry point is the name of a function: a Python identifier, not a keyword."""
    if not entry.isidentifier() or keyword.iskeyword(entry):
        raise ValueError(
            f"{where}.entry_point (task {task_id!r}): {entry!r} is not a function name; "
            "expected a Python identifier such as 'add'"
        )


def check_file_name(name: str, field: str) -> None:
    """A file name a candidate reads or writes: relative, inside its work directory.

    Example:
        >>> check_file_name("../x.parquet", "output_file")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: output_file: '../x.parquet' leaves the candidate's work directory; ...
    """
    pure = PurePosixPath(name)
    if (
        not name.strip()
        or "\\" in name
        or "\x00" in name
        or pure.is_absolute()
        or ".." in pure.parts
        or str(pure) == "."
    ):
        raise ValueError(
            f"{field}: {name!r} leaves the candidate's work directory; expected a relative "
            "file name such as 'result.parquet'"
        )


def _syntax_error(exc: SyntaxError, parts: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """``(field, "line N: message")`` of a syntax error in the concatenation of ``parts``
    (field, text), the line counted within the field that holds it."""
    line = exc.lineno or 1
    for field, text in parts:
        n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if line <= n or field == parts[-1][0]:
            return field, f"line {line}: {exc.msg}"
        line -= n
    return parts[-1][0], f"line {line}: {exc.msg}"


def _parse(parts: Sequence[tuple[str, str]], where: str, task_id: str, what: str) -> ast.Module:
    source = "".join(text for _, text in parts)
    verb = "do" if what.endswith("tests") else "does"
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        field, detail = _syntax_error(exc, parts)
        raise ValueError(
            f"{where}.{field} (task {task_id!r}): {what} {verb} not compile: {detail}"
        ) from None
    except ValueError as exc:  # a NUL byte in the source
        raise ValueError(f"{where}.{parts[-1][0]} (task {task_id!r}): {what}: {exc}") from None


def defined_names(tree: ast.Module) -> set[str]:
    """Names a module binds at its top level (functions, classes, assignments, imports).

    Example:
        >>> sorted(defined_names(ast.parse("import os\\ndef f(): pass\\ng = f")))
        ['f', 'g', 'os']
    """
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
            continue
        for sub in ast.walk(node):  # also inside top-level if / try / with blocks
            if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add(sub.name)
            elif isinstance(sub, ast.Import | ast.ImportFrom):
                out.update((a.asname or a.name).split(".")[0] for a in sub.names)
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                out.add(sub.id)
    return out


def check_reference(
    parts: Sequence[tuple[str, str]], entry: str, where: str, task_id: str
) -> None:
    """The reference solution (``parts``: field name, text — ``prompt`` then
    ``canonical_solution``, or ``ground_truth``) compiles and defines ``entry``.

    Example:
        >>> check_reference([("prompt", "def add(a, b):\\n"), ("canonical_solution",
        ...     "    return a +\\n")], "add", "tasks[0]", "add")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: tasks[0].canonical_solution (task 'add'): ... does not compile: line 1: ...
    """
    tree = _parse(parts, where, task_id, "the reference solution")
    names = defined_names(tree)
    if entry not in names and "*" not in names:  # a star import may define it
        fields = " + ".join(f for f, _ in parts)
        shown = ", ".join(repr(n) for n in sorted(names)[:8]) or "nothing"
        raise ValueError(
            f"{where}.entry_point (task {task_id!r}): {entry!r} is not defined by the reference "
            f"solution ({fields}), which defines {shown}"
        )


def check_tests(tests: str, where: str, task_id: str) -> None:
    """The hidden tests compile and define ``check(candidate)`` at their top level.

    Example:
        >>> check_tests("assert True\\n", "tasks[0]", "add")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: tasks[0].tests (task 'add'): the tests define no check(candidate) function; ...
    """
    tree = _parse([("tests", tests)], where, task_id, "the tests")
    checks = [
        n
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == "check"
    ]
    if not checks:
        raise ValueError(
            f"{where}.tests (task {task_id!r}): the tests define no check(candidate) function; "
            "hidden tests are a function check(candidate) that asserts on candidate's results"
        )
    args = checks[-1].args
    if not (args.posonlyargs or args.args or args.vararg):
        raise ValueError(
            f"{where}.tests (task {task_id!r}): check() takes no argument; it is called as "
            "check(candidate)"
        )
