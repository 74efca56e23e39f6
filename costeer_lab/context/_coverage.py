"""Which tests reference a function or class: a static scan of test files (nothing is run).

A test is a function named ``test*`` (top level, or a method of a class named ``Test*``) in a
file named ``test_*.py`` or ``*_test.py``. It references a function or class when the name
appears in its body as a name (``gcd(...)``) or an attribute (``shapes.Shape``,
``obj.area()``). A method is matched by its own name, so two classes' methods of one name are
both counted: this is evidence of coverage, not a measurement of it.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path, PurePosixPath

from costeer_lab.context._codedoc import ClassDoc, CodeReference, FunctionDoc

__all__ = ["find_test_references", "is_test_file", "read_tests", "with_test_coverage"]


def is_test_file(path: str) -> bool:
    """Whether ``path`` names a test file (``test_*.py`` or ``*_test.py``).

    Example:
        >>> is_test_file("tests/test_gcd.py"), is_test_file("gcd_test.py"), is_test_file("gcd.py")
        (True, True, False)
    """
    name = PurePosixPath(path).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _tests(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    out: list[tuple[str, ast.AST]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            out.append((node.name, node))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            out += [
                (f"{node.name}::{m.name}", m)
                for m in node.body
                if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
                and m.name.startswith("test")
            ]
    return out


def find_test_references(tests: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Name → ids (``path::test``) of the tests whose bodies use that name (names sorted).

    ``tests`` maps each test file's path to its source; files that do not parse are skipped.

    Example:
        >>> find_test_references({"test_m.py": "def test_add():\\n    assert m.add(1, 2) == 3\\n"})
        {'add': ('test_m.py::test_add',), 'm': ('test_m.py::test_add',)}
    """
    found: dict[str, dict[str, None]] = {}
    for path, source in tests.items():
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for test_name, node in _tests(tree):
            for sub in ast.walk(node):
                name = (
                    sub.id if isinstance(sub, ast.Name)
                    else sub.attr if isinstance(sub, ast.Attribute) else None
                )  # fmt: skip
                if name is not None:
                    found.setdefault(name, {})[f"{path}::{test_name}"] = None
    return {name: tuple(found[name]) for name in sorted(found)}


def read_tests(folder: str | os.PathLike[str]) -> dict[str, str]:
    """The test files under ``folder`` (recursively): path relative to it → source."""
    root = Path(folder)
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if is_test_file(rel):
            out[rel] = path.read_text(encoding="utf-8", errors="replace")
    return out


def _function(fn: FunctionDoc, refs: Mapping[str, tuple[str, ...]]) -> FunctionDoc:
    return replace(fn, tested_by=refs.get(fn.name, ()))


def _class(cls: ClassDoc, refs: Mapping[str, tuple[str, ...]]) -> ClassDoc:
    return replace(
        cls,
        tested_by=refs.get(cls.name, ()),
        methods=tuple(_function(m, refs) for m in cls.methods),
        classes=tuple(_class(c, refs) for c in cls.classes),
    )


def with_test_coverage(
    ref: CodeReference, tests: Mapping[str, str] | str | os.PathLike[str]
) -> CodeReference:
    """``ref`` with ``tested_by`` filled on every function, method and class.

    Args:
        ref: the documentation of a file (:func:`document_python`).
        tests: test file path → source, or a tests folder to scan (:func:`read_tests`).

    Example:
        >>> from costeer_lab.context import document_python
        >>> SRC = "def add(a, b):\\n    return a + b\\n\\ndef sub(a, b):\\n    pass\\n"
        >>> ref = document_python(SRC)
        >>> tests = {"test_calc.py": "def test_add():\\n    assert add(1, 2) == 3\\n"}
        >>> [(f.name, f.tested_by) for f in with_test_coverage(ref, tests).functions]
        [('add', ('test_calc.py::test_add',)), ('sub', ())]
    """
    sources = tests if isinstance(tests, Mapping) else read_tests(tests)
    refs = find_test_references(sources)
    return replace(
        ref,
        functions=tuple(_function(f, refs) for f in ref.functions),
        classes=tuple(_class(c, refs) for c in ref.classes),
    )
