"""Show that each layer contract refuses the imports it is meant to refuse.

For each row, an offending import is appended to one module of a temporary copy of the package,
``lint-imports`` runs on that copy with the project's ``[tool.importlinter]`` configuration, and
the contracts it reports broken are recorded. The working tree is never modified. Prints a
markdown table (docs/testing.md, "Layers")::

    python tools/injected_imports.py            # every row
    python tools/injected_imports.py --rows 3   # the first three
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "costeer_lab"
FORBIDDEN = "The sandbox knows nothing of tasks, knowledge or verdicts"
VECTORS = "index, embed and sandbox are independent"
MEMORIES = "memory, docs and context are independent"
LAYERS = "Layers of shared/ARCHITECTURE.md"
CYCLES = "No import cycles between the modules of a package"
_STATUS = re.compile(r"^(\S.*?) (KEPT|BROKEN)(?: \(.*\))?$", re.MULTILINE)


@dataclass(frozen=True)
class Row:
    """One injected import: ``module`` (a file of the package) gets ``import target``."""

    module: str
    target: str
    expected: frozenset[str]

    @property
    def statement(self) -> str:
        """The line appended to the module."""
        return f"import {self.target}  # injected by tools/injected_imports.py\n"


def _row(module: str, target: str, *expected: str) -> Row:
    return Row(module, target, frozenset(expected))


ROWS: tuple[Row, ...] = (
    _row("sandbox/_limits.py", "costeer_lab.store", FORBIDDEN),
    _row("memory/_stats.py", "costeer_lab.context", MEMORIES),
    _row("index/_faiss.py", "costeer_lab.embed", VECTORS),
    _row("embed/_hashing.py", "costeer_lab.index", VECTORS, CYCLES),
    _row("sandbox/_proc.py", "costeer_lab.index", FORBIDDEN, VECTORS),
    _row("sandbox/_fs.py", "costeer_lab.embed", FORBIDDEN, VECTORS),
    _row("sandbox/_sandbox.py", "costeer_lab.records", FORBIDDEN),
    _row("index/_ops.py", "costeer_lab.sandbox", VECTORS),
    _row("embed/_cache.py", "costeer_lab.sandbox", VECTORS),
    _row("memory/_pattern.py", "costeer_lab.docs", MEMORIES),
    _row("docs/_kb.py", "costeer_lab.memory", MEMORIES),
    _row("docs/_search.py", "costeer_lab.context", MEMORIES),
    _row("context/_manager.py", "costeer_lab.memory", MEMORIES),
    _row("context/_task.py", "costeer_lab.docs", MEMORIES),
    _row("sandbox/_view.py", "costeer_lab.knowledge", FORBIDDEN, LAYERS),
    _row("sandbox/_ns.py", "costeer_lab.evaluate", FORBIDDEN, LAYERS, CYCLES),
    _row("sandbox/_allowlist.py", "costeer_lab.suites", FORBIDDEN, LAYERS, CYCLES),
    _row("sandbox/_worker.py", "costeer_lab.experiment", FORBIDDEN, LAYERS, CYCLES, VECTORS),
)


@contextmanager
def package_copy(root: Path = ROOT) -> Iterator[Path]:
    """A temporary directory holding a copy of the package and ``pyproject.toml``."""
    with tempfile.TemporaryDirectory(prefix="injected-imports-") as tmp:
        where = Path(tmp)
        shutil.copytree(
            root / PACKAGE, where / PACKAGE, ignore=shutil.ignore_patterns("__pycache__")
        )
        shutil.copy2(root / "pyproject.toml", where / "pyproject.toml")
        yield where


def lint_imports(where: Path) -> tuple[int, str]:
    """Run ``lint-imports`` on the copy in ``where``; its exit code and output."""
    exe = Path(sys.executable).with_name("lint-imports")
    command = [str(exe) if exe.exists() else "lint-imports", "--no-cache"]
    env = {"PYTHONPATH": str(where), "PATH": str(Path(sys.executable).parent)}
    done = subprocess.run(command, cwd=where, capture_output=True, text=True, env=env, check=False)
    return done.returncode, done.stdout + done.stderr


def broken_contracts(output: str) -> frozenset[str]:
    """Names of the contracts ``lint-imports`` reports as broken.

    Example:
        >>> sorted(broken_contracts("A KEPT\\nB BROKEN\\nC d BROKEN (1 ignored import)"))
        ['B', 'C d']
    """
    return frozenset(m.group(1) for m in _STATUS.finditer(output) if m.group(2) == "BROKEN")


def refused_by(where: Path, row: Row) -> frozenset[str]:
    """Inject ``row`` into the copy, lint it, restore the module; the contracts broken."""
    path = where / PACKAGE / row.module
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(original + "\n" + row.statement, encoding="utf-8")
        _, output = lint_imports(where)
    finally:
        path.write_text(original, encoding="utf-8")
    return broken_contracts(output)


def table(rows: Sequence[Row], root: Path = ROOT) -> tuple[str, bool]:
    """The markdown table of ``rows`` and whether every row was refused as expected.

    Raises:
        RuntimeError: the unmodified copy already breaks a contract (the table would mean
            nothing).
    """
    lines = [
        "| module | injected import | refused by | as expected |",
        "|---|---|---|---|",
    ]
    ok = True
    with package_copy(root) as where:
        code, output = lint_imports(where)
        if code != 0:
            raise RuntimeError(f"the unmodified package breaks a contract:\n{output}")
        for row in rows:
            got = refused_by(where, row)
            expected = got == row.expected
            ok &= expected
            names = "; ".join(sorted(got)) or "**not refused**"
            lines.append(
                f"| `{PACKAGE}/{row.module}` | `import {row.target}` | {names} | "
                f"{'yes' if expected else 'NO'} |"
            )
    return "\n".join(lines), ok


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table; exit status 1 when a row was not refused as expected."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=len(ROWS), help="run the first N rows")
    args = parser.parse_args(argv)
    text, ok = table(ROWS[: args.rows])
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
