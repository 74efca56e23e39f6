"""Code documentation with the ast module: real files, decorators, async, nested classes,
properties, complexity, syntax errors."""

from __future__ import annotations

from pathlib import Path

import costeer_lab
from costeer_lab.context import CodeReference, Parameter, document_python

from .samples import BROKEN, SHAPES


def _doc(tmp_path: Path, text: str, name: str = "shapes.py") -> CodeReference:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return document_python(path.read_text(encoding="utf-8"), str(path))


def test_functions_parameters_and_complexity(tmp_path: Path) -> None:
    ref = _doc(tmp_path, SHAPES)
    assert ref.syntax_error is None and ref.path.endswith("shapes.py")
    assert ref.module_doc == "Shapes and their areas, for the documentation tests."
    by_name = {f.name: f for f in ref.functions}
    assert list(by_name) == ["plain", "cached", "fetch", "outer"]
    plain = by_name["plain"]
    assert plain.parameters == (
        Parameter("a", None, None, "positional"),
        Parameter("b", "int", "2", "positional"),
        Parameter("args", "str", None, "var_positional"),
        Parameter("key", "bool", "False", "keyword_only"),
        Parameter("kw", None, None, "var_keyword"),
    )
    assert plain.returns == "int" and plain.docstring == "Sum with branches."
    assert plain.signature == "plain(a, b: int = 2, *args: str, key: bool = False, **kw) -> int"
    # 1 + if + and + elif + or + for + except + conditional expression
    assert plain.complexity == 8
    assert (plain.lineno, plain.end_lineno) == (14, 25)
    assert not plain.is_async and not plain.is_method


def test_decorators_async_and_nested_functions(tmp_path: Path) -> None:
    ref = _doc(tmp_path, SHAPES)
    by_name = {f.name: f for f in ref.functions}
    assert by_name["cached"].decorators == ("functools.lru_cache(maxsize=None)",)
    assert by_name["cached"].complexity == 1 and by_name["cached"].docstring is None
    fetch = by_name["fetch"]
    assert fetch.is_async and fetch.complexity == 3
    assert fetch.parameters[0] == Parameter("url", "str", None, "positional_only")
    assert fetch.signature == "async fetch(url: str, retries: int = 3) -> bytes"
    # the branch of the nested function counts for it, not for outer
    assert by_name["outer"].complexity == 1


def test_classes_properties_and_nested_classes(tmp_path: Path) -> None:
    ref = _doc(tmp_path, SHAPES)
    (shape,) = ref.classes
    assert shape.decorators == ("dataclass(frozen=True)",) and shape.bases == ("object",)
    assert shape.docstring == "A named shape."
    methods = {m.name: m for m in shape.methods}
    assert list(methods) == ["label", "unit", "area"]
    assert methods["label"].is_property and methods["label"].docstring == "The label."
    assert shape.properties == ("label",)
    assert methods["unit"].decorators == ("staticmethod",) and not methods["unit"].is_property
    assert methods["area"].is_async and methods["area"].complexity == 4  # comp for+if, ifexp
    assert all(m.is_method and m.qualname == f"Shape.{m.name}" for m in shape.methods)
    assert shape.complexity == 1 + 1 + 4
    (meta,) = shape.classes
    assert meta.qualname == "Shape.Meta" and meta.docstring == "Nested options."
    (inner,) = meta.classes
    assert inner.qualname == "Shape.Meta.Inner"
    assert inner.methods[0].qualname == "Shape.Meta.Inner.depth"
    assert [c.qualname for c in ref.all_classes()] == ["Shape", "Shape.Meta", "Shape.Meta.Inner"]
    assert "Shape.Meta.Inner.depth" in [f.qualname for f in ref.all_functions()]


def test_imports_and_dependencies(tmp_path: Path) -> None:
    ref = _doc(tmp_path, SHAPES)
    assert ref.imports == (
        "__future__", "functools", "math", "os.path", "dataclasses", "numpy", "pandas"
    )  # fmt: skip
    assert ref.dependencies == ("numpy", "pandas")
    assert "Sum with branches." in ref.documentation and "The label." in ref.documentation


def test_syntax_error_is_reported_not_raised(tmp_path: Path) -> None:
    ref = _doc(tmp_path, BROKEN, "broken.py")
    assert ref.syntax_error is not None and ref.syntax_error.startswith("line 1: ")
    assert ref.functions == () and ref.classes == () and ref.n_lines == 2
    assert document_python("x = 1\x00").syntax_error is not None  # null byte: still no raise


def test_round_trip_through_dicts(tmp_path: Path) -> None:
    ref = _doc(tmp_path, SHAPES)
    assert CodeReference.from_dict(ref.to_dict()) == ref


def test_documents_the_real_files_of_the_package() -> None:
    """Every module of costeer_lab documents without error; known facts of two are found."""
    root = Path(costeer_lab.__file__).parent
    refs = {
        p.relative_to(root).as_posix(): document_python(p.read_text(encoding="utf-8"), str(p))
        for p in root.rglob("*.py")
    }
    assert len(refs) > 50 and all(r.syntax_error is None for r in refs.values())
    fs = refs["_fs.py"]
    writer = next(f for f in fs.functions if f.name == "atomic_writer")
    assert writer.decorators == ("contextmanager",)
    assert writer.returns == "Iterator[BinaryIO]" and writer.docstring
    limits = refs["sandbox/_limits.py"]
    result = next(c for c in limits.classes if c.name == "SandboxResult")
    assert "ok" in result.properties and result.decorators == ("dataclass(frozen=True)",)
    ctx = refs["context/_codedoc.py"]
    assert any(f.name == "document_python" for f in ctx.functions)
