"""``make mutation`` covers what it claims: every module it runs is one mutmut mutates, and every
module of the memories (issue 26: memory, docs, context) with code is in its list."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _make_list(name: str, text: str) -> list[str]:
    match = re.search(rf"^{name} :=(.*?)(?=^\S)", text, flags=re.S | re.M)
    assert match, f"no {name} in the Makefile"
    return re.findall(r"costeer_lab(?:\.\w+)+", match.group(1))


def _has_code(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for n in ast.walk(tree))


def test_every_module_make_mutation_runs_is_mutated_by_mutmut() -> None:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    modules = _make_list("VERDICT", text) + _make_list("MEMORIES", text)
    modules += _make_list("MUTATE", text)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["mutmut"]["only_mutate"]
    for module in modules:
        path = module.replace(".", "/")
        assert f"{path}.py" in globs or f"{path}/*" in globs, f"{module} not in only_mutate"


def test_every_memory_docs_and_context_module_with_code_is_in_the_list() -> None:
    listed = set(_make_list("MEMORIES", (ROOT / "Makefile").read_text(encoding="utf-8")))
    for pkg in ("memory", "docs", "context"):
        for f in sorted((ROOT / "costeer_lab" / pkg).glob("*.py")):
            if f.name != "__init__.py" and _has_code(f):
                assert f"costeer_lab.{pkg}.{f.stem}" in listed, f"{pkg}/{f.name} not in MEMORIES"
