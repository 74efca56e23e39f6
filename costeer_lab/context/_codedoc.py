"""Code documentation extracted from Python source with the :mod:`ast` module.

:func:`document_python` never executes the code it reads and never raises on bad source: a file
with a syntax error comes back as a :class:`CodeReference` whose ``syntax_error`` says where.

Cyclomatic complexity (McCabe) of a function is 1 plus its decision points: each ``if``/``elif``,
conditional expression, ``for``/``while`` loop, ``except`` clause, ``case`` of a ``match``,
``assert``, comprehension ``for`` and ``if``, and each extra operand of ``and``/``or``. Nested
functions and classes count for themselves, not for the function that holds them.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from costeer_lab.context._examples import docstring_examples

__all__ = ["ClassDoc", "CodeReference", "FunctionDoc", "Parameter", "document_python"]

_DECISIONS = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.Assert)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass(frozen=True)
class Parameter:
    """One parameter of a function: name, annotation and default as source text, and kind
    (``positional_only``, ``positional``, ``var_positional``, ``keyword_only`` or
    ``var_keyword``)."""

    name: str
    annotation: str | None = None
    default: str | None = None
    kind: str = "positional"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "annotation": self.annotation,
            "default": self.default,
            "kind": self.kind,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Parameter:
        return cls(d["name"], d.get("annotation"), d.get("default"), d.get("kind", "positional"))


@dataclass(frozen=True)
class FunctionDoc:
    """A documented function or method (``qualname`` is dotted: ``Outer.Inner.method``).

    ``examples`` are the usage examples of its docstring (:func:`docstring_examples`);
    ``tested_by`` the tests that reference it (``path::test``), filled by
    :func:`with_test_coverage`.
    """

    name: str
    qualname: str
    parameters: tuple[Parameter, ...] = ()
    returns: str | None = None
    docstring: str | None = None
    lineno: int = 0
    end_lineno: int = 0
    complexity: int = 1
    decorators: tuple[str, ...] = ()
    is_async: bool = False
    is_method: bool = False
    is_property: bool = False
    examples: tuple[str, ...] = ()
    tested_by: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "qualname": self.qualname,
            "parameters": [p.to_dict() for p in self.parameters],
            "returns": self.returns,
            "docstring": self.docstring,
            "lineno": self.lineno,
            "end_lineno": self.end_lineno,
            "complexity": self.complexity,
            "decorators": list(self.decorators),
            "is_async": self.is_async,
            "is_method": self.is_method,
            "is_property": self.is_property,
            "examples": list(self.examples),
            "tested_by": list(self.tested_by),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FunctionDoc:
        return cls(
            name=d["name"],
            qualname=d.get("qualname", d["name"]),
            parameters=tuple(Parameter.from_dict(p) for p in d.get("parameters", ())),
            returns=d.get("returns"),
            docstring=d.get("docstring"),
            lineno=int(d.get("lineno", 0)),
            end_lineno=int(d.get("end_lineno", 0)),
            complexity=int(d.get("complexity", 1)),
            decorators=tuple(d.get("decorators", ())),
            is_async=bool(d.get("is_async", False)),
            is_method=bool(d.get("is_method", False)),
            is_property=bool(d.get("is_property", False)),
            examples=tuple(d.get("examples", ())),
            tested_by=tuple(d.get("tested_by", ())),
        )

    @property
    def signature(self) -> str:
        """``name(a: int, b=2) -> str`` as written in the source."""
        parts = []
        for p in self.parameters:
            text = {"var_positional": "*", "var_keyword": "**"}.get(p.kind, "") + p.name
            if p.annotation:
                text += f": {p.annotation}"
            if p.default is not None:
                text += f" = {p.default}" if p.annotation else f"={p.default}"
            parts.append(text)
        ret = f" -> {self.returns}" if self.returns else ""
        return f"{'async ' if self.is_async else ''}{self.name}({', '.join(parts)}){ret}"


@dataclass(frozen=True)
class ClassDoc:
    """A documented class: its methods (properties flagged), nested classes and complexity
    (the sum of its methods' complexities; 0 for a class without methods); ``examples`` and
    ``tested_by`` as in :class:`FunctionDoc`."""

    name: str
    qualname: str
    bases: tuple[str, ...] = ()
    decorators: tuple[str, ...] = ()
    docstring: str | None = None
    lineno: int = 0
    end_lineno: int = 0
    methods: tuple[FunctionDoc, ...] = ()
    classes: tuple[ClassDoc, ...] = ()
    complexity: int = 0
    examples: tuple[str, ...] = ()
    tested_by: tuple[str, ...] = ()

    @property
    def properties(self) -> tuple[str, ...]:
        """Names of the methods decorated as properties."""
        return tuple(m.name for m in self.methods if m.is_property)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "qualname": self.qualname,
            "bases": list(self.bases),
            "decorators": list(self.decorators),
            "docstring": self.docstring,
            "lineno": self.lineno,
            "end_lineno": self.end_lineno,
            "methods": [m.to_dict() for m in self.methods],
            "classes": [c.to_dict() for c in self.classes],
            "complexity": self.complexity,
            "examples": list(self.examples),
            "tested_by": list(self.tested_by),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ClassDoc:
        return cls(
            name=d["name"],
            qualname=d.get("qualname", d["name"]),
            bases=tuple(d.get("bases", ())),
            decorators=tuple(d.get("decorators", ())),
            docstring=d.get("docstring"),
            lineno=int(d.get("lineno", 0)),
            end_lineno=int(d.get("end_lineno", 0)),
            methods=tuple(FunctionDoc.from_dict(m) for m in d.get("methods", ())),
            classes=tuple(ClassDoc.from_dict(c) for c in d.get("classes", ())),
            complexity=int(d.get("complexity", 0)),
            examples=tuple(d.get("examples", ())),
            tested_by=tuple(d.get("tested_by", ())),
        )


@dataclass(frozen=True)
class CodeReference:
    """The documentation of one Python file.

    Attributes:
        path: the file's path (as given).
        module_doc: the module docstring.
        functions: top-level functions (methods live in their :class:`ClassDoc`).
        classes: top-level classes (nested ones inside them).
        imports: imported module names, in order of appearance, without duplicates.
        dependencies: top-level packages imported that are not in the standard library.
        syntax_error: ``"line N: message"`` when the source does not parse (nothing else is
            filled then), else ``None``.
        n_lines: number of lines of the source.
    """

    path: str
    module_doc: str | None = None
    functions: tuple[FunctionDoc, ...] = ()
    classes: tuple[ClassDoc, ...] = ()
    imports: tuple[str, ...] = ()
    dependencies: tuple[str, ...] = ()
    syntax_error: str | None = None
    n_lines: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)

    def all_functions(self) -> list[FunctionDoc]:
        """Top-level functions and the methods of every class, nested ones included."""
        out = list(self.functions)
        stack = list(self.classes)
        while stack:
            cls = stack.pop(0)
            out.extend(cls.methods)
            stack.extend(cls.classes)
        return out

    def all_classes(self) -> list[ClassDoc]:
        """Every class, nested ones included (outer before inner)."""
        out: list[ClassDoc] = []
        stack = list(self.classes)
        while stack:
            cls = stack.pop(0)
            out.append(cls)
            stack.extend(cls.classes)
        return out

    @property
    def documentation(self) -> str:
        """The module, class and function docstrings joined ('' when there are none)."""
        docs = [self.module_doc or ""]
        docs += [c.docstring or "" for c in self.all_classes()]
        docs += [f.docstring or "" for f in self.all_functions()]
        return "\n\n".join(d for d in docs if d)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "module_doc": self.module_doc,
            "functions": [f.to_dict() for f in self.functions],
            "classes": [c.to_dict() for c in self.classes],
            "imports": list(self.imports),
            "dependencies": list(self.dependencies),
            "syntax_error": self.syntax_error,
            "n_lines": self.n_lines,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeReference:
        return cls(
            path=d["path"],
            module_doc=d.get("module_doc"),
            functions=tuple(FunctionDoc.from_dict(f) for f in d.get("functions", ())),
            classes=tuple(ClassDoc.from_dict(c) for c in d.get("classes", ())),
            imports=tuple(d.get("imports", ())),
            dependencies=tuple(d.get("dependencies", ())),
            syntax_error=d.get("syntax_error"),
            n_lines=int(d.get("n_lines", 0)),
            extra=dict(d.get("extra", {})),
        )


def _complexity(node: ast.AST) -> int:
    """Decision points inside ``node``, not entering nested scopes."""
    count = 0
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _SCOPES):
            continue
        if isinstance(child, _DECISIONS):
            count += 1
        elif isinstance(child, ast.BoolOp):
            count += len(child.values) - 1
        elif isinstance(child, ast.comprehension):
            count += 1 + len(child.ifs)
        elif isinstance(child, ast.match_case):
            count += 1
        count += _complexity(child)
    return count


def _parameters(args: ast.arguments) -> tuple[Parameter, ...]:
    def text(node: ast.expr | None) -> str | None:
        return None if node is None else ast.unparse(node)

    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    out = []
    for i, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        kind = "positional_only" if i < len(args.posonlyargs) else "positional"
        out.append(Parameter(arg.arg, text(arg.annotation), text(default), kind))
    if args.vararg is not None:
        out.append(
            Parameter(args.vararg.arg, text(args.vararg.annotation), None, "var_positional")
        )
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append(Parameter(arg.arg, text(arg.annotation), text(kw_default), "keyword_only"))
    if args.kwarg is not None:
        out.append(Parameter(args.kwarg.arg, text(args.kwarg.annotation), None, "var_keyword"))
    return tuple(out)


def _function(
    node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, method: bool
) -> FunctionDoc:
    decorators = tuple(ast.unparse(d) for d in node.decorator_list)
    is_property = any(
        d in ("property", "functools.cached_property", "cached_property")
        or d.endswith((".setter", ".getter", ".deleter"))
        for d in decorators
    )
    return FunctionDoc(
        name=node.name,
        qualname=prefix + node.name,
        parameters=_parameters(node.args),
        returns=None if node.returns is None else ast.unparse(node.returns),
        docstring=ast.get_docstring(node),
        lineno=node.lineno,
        end_lineno=node.end_lineno or node.lineno,
        complexity=1 + _complexity(node),
        decorators=decorators,
        is_async=isinstance(node, ast.AsyncFunctionDef),
        is_method=method,
        is_property=method and is_property,
        examples=docstring_examples(ast.get_docstring(node)),
    )


def _class(node: ast.ClassDef, prefix: str) -> ClassDoc:
    qual = prefix + node.name
    methods: list[FunctionDoc] = []
    nested: list[ClassDoc] = []
    for child in node.body:
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            methods.append(_function(child, qual + ".", method=True))
        elif isinstance(child, ast.ClassDef):
            nested.append(_class(child, qual + "."))
    return ClassDoc(
        name=node.name,
        qualname=qual,
        bases=tuple(ast.unparse(b) for b in node.bases),
        decorators=tuple(ast.unparse(d) for d in node.decorator_list),
        docstring=ast.get_docstring(node),
        lineno=node.lineno,
        end_lineno=node.end_lineno or node.lineno,
        methods=tuple(methods),
        classes=tuple(nested),
        complexity=sum(m.complexity for m in methods),
        examples=docstring_examples(ast.get_docstring(node)),
    )


def _imports(tree: ast.Module) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                seen.setdefault(alias.name, None)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            seen.setdefault(node.module, None)
    return tuple(seen)


def document_python(source: str, path: str = "<string>") -> CodeReference:
    """Document Python ``source``: functions, classes, imports, docstrings, complexity.

    Args:
        source: the file's text (never executed).
        path: the file's path, recorded in the result.

    Returns:
        A :class:`CodeReference`; when the source does not parse, one with ``syntax_error`` set.

    Example:
        >>> ref = document_python("def f(x: int = 1) -> int:\\n    '''Twice.'''\\n    return x\\n")
        >>> ref.functions[0].signature, ref.functions[0].docstring
        ('f(x: int = 1) -> int', 'Twice.')
        >>> document_python("def broken(:\\n").syntax_error
        'line 1: invalid syntax'
    """
    n_lines = len(source.splitlines())
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        return CodeReference(path, syntax_error=f"line {exc.lineno}: {exc.msg}", n_lines=n_lines)
    except ValueError as exc:  # null bytes in the source
        return CodeReference(path, syntax_error=f"line 0: {exc}", n_lines=n_lines)
    functions: list[FunctionDoc] = []
    classes: list[ClassDoc] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.append(_function(node, "", method=False))
        elif isinstance(node, ast.ClassDef):
            classes.append(_class(node, ""))
    imports = _imports(tree)
    stdlib = sys.stdlib_module_names
    deps = dict.fromkeys(m.split(".")[0] for m in imports if m.split(".")[0] not in stdlib)
    return CodeReference(
        path=path,
        module_doc=ast.get_docstring(tree),
        functions=tuple(functions),
        classes=tuple(classes),
        imports=imports,
        dependencies=tuple(deps),
        n_lines=n_lines,
    )
