"""List every package's ``__all__`` names with where they are used (docs/api.md).

A name is *used* by Python code that imports it from the package or one of its modules
(``from costeer_lab.knowledge import open_kb``, ``from costeer_lab.knowledge._kb_v2 import …``)
and *mentioned* by the docs, the README or a notebook that names it (word match). Columns:

* ``internal``: modules of the package itself (its ``__init__`` excluded);
* ``packages``: other packages of ``costeer_lab`` (the top level's lazy exports included);
* ``tests``, ``benchmarks``, ``tools``: Python files there;
* ``notebooks``, ``docs``: ``notebooks/*.ipynb``; ``docs/*.md``, ``README.md``.

``python tools/public_surface.py`` prints the markdown table and the counts;
``--only-internal`` lists the names no one outside the package uses or documents.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import pkgutil
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "costeer_lab"
WHERE = ("internal", "packages", "tests", "benchmarks", "tools", "notebooks", "docs")
#: Users outside the package: a name any of them uses or mentions is public.
OUTSIDE = WHERE[1:]


@dataclass
class Surface:
    """One public name of a package and the places that use it."""

    package: str
    name: str
    used_in: dict[str, set[str]] = field(default_factory=lambda: {w: set() for w in WHERE})

    @property
    def outside(self) -> bool:
        """Used or mentioned anywhere outside the package but its tests."""
        return any(self.used_in[w] for w in OUTSIDE if w != "tests")

    @property
    def category(self) -> str:
        """``public`` (used outside), ``tests-only``, ``internal`` or ``unused``."""
        if self.outside:
            return "public"
        if self.used_in["tests"]:
            return "tests-only"
        return "internal" if self.used_in["internal"] else "unused"


def packages(root: Path = ROOT) -> list[str]:
    """Public subpackages and modules of the package that declare ``__all__``.

    The package is imported from ``root`` (not from wherever the environment installed it).
    """
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    module = importlib.import_module(PACKAGE)
    out = []
    for info in pkgutil.iter_modules(module.__path__, prefix=f"{PACKAGE}."):
        short = info.name.rsplit(".", 1)[-1]
        if short.startswith("_"):
            continue
        if hasattr(importlib.import_module(info.name), "__all__"):
            out.append(info.name)
    return sorted(out)


def _imported_names(tree: ast.AST, package: str) -> Iterator[str]:
    """Names imported from ``package`` or its modules (``from costeer_lab.x._y import N``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module == package or node.module.startswith(package + "."):
                yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute):
            base = ast.unparse(node.value)
            if base == package:
                yield node.attr


def _where(path: Path, root: Path) -> str | None:
    rel = path.relative_to(root).parts
    return {
        PACKAGE: "packages",
        "tests": "tests",
        "benchmarks": "benchmarks",
        "tools": "tools",
    }.get(rel[0])


def _python_files(root: Path) -> Iterator[Path]:
    for top in (PACKAGE, "tests", "benchmarks", "tools"):
        yield from sorted((root / top).rglob("*.py"))


def _text_files(root: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        yield "notebooks", path
    for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        if path.is_file() and path.name != "api.md":  # api.md documents this very policy
            yield "docs", path


def survey(names: Iterable[Surface], root: Path = ROOT) -> list[Surface]:
    """Fill ``used_in`` of every name (file paths relative to ``root``)."""
    items = list(names)
    by_package: dict[str, list[Surface]] = {}
    for s in items:
        by_package.setdefault(s.package, []).append(s)
    for path in _python_files(root):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = str(path.relative_to(root))
        for package, group in by_package.items():
            imported = set(_imported_names(tree, package))
            if not imported:
                continue
            pkg_dir = package.replace(".", "/") + "/"
            if rel.startswith(pkg_dir):
                if rel == pkg_dir + "__init__.py":
                    continue
                kind = "internal"
            else:
                kind = _where(path, root) or "packages"
            for s in group:
                if s.name in imported:
                    s.used_in[kind].add(rel)
    for kind, path in _text_files(root):
        text = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(root))
        for s in items:
            if re.search(rf"(?<![\w.]){re.escape(s.name)}\b", text):
                s.used_in[kind].add(rel)
    return items


def surface(root: Path = ROOT, skip: Sequence[str] = ()) -> list[Surface]:
    """Every ``__all__`` name of every public package (but ``skip``), surveyed."""
    names = [
        Surface(p, n)
        for p in packages(root)
        if p not in skip
        for n in importlib.import_module(p).__all__
        if not n.startswith("__")
    ]
    return survey(names, root)


def markdown(items: Sequence[Surface]) -> str:
    """A table: package, name, category, then the number of files per place."""
    head = "| package | name | category | " + " | ".join(WHERE) + " |"
    lines = [head, "|" + "---|" * (3 + len(WHERE))]
    for s in items:
        counts = " | ".join(str(len(s.used_in[w])) for w in WHERE)
        lines.append(f"| {s.package} | `{s.name}` | {s.category} | {counts} |")
    return "\n".join(lines)


def counts(items: Sequence[Surface]) -> dict[str, int]:
    """How many names fall in each category (and in all)."""
    out = {"all": len(items)}
    for s in items:
        out[s.category] = out.get(s.category, 0) + 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table (or the names only the package uses) and the counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only-internal", action="store_true", help="names no one else uses")
    parser.add_argument("--skip", nargs="*", default=[], help="packages to leave out")
    args = parser.parse_args(argv)
    items = surface(skip=args.skip)
    shown = [s for s in items if not s.outside] if args.only_internal else items
    print(markdown(shown))
    print()
    print(", ".join(f"{k}: {v}" for k, v in sorted(counts(items).items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
