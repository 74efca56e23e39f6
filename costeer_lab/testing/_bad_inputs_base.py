"""The pieces every bad-input catalogue module shares: :class:`BadInput`, the valid base spec
its spec variants start from, and helpers that build cases and write workspace files.

A catalogue module (``_bad_inputs_*.py``) defines ``CASES`` (a tuple of :class:`BadInput`),
``SPECS`` (spec file stem -> document, written to ``specs/<stem>.yaml``) and ``FILES``
(workspace-relative path -> content: ``str``, ``bytes`` or a document written as YAML);
``costeer_lab.testing._bad_inputs`` gathers them all.

Example:
    >>> case = run_case("x", "an example", "expected text")
    >>> case.argv
    ('run', 'specs/x.yaml', '--out', 'runs/new')
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "BASE_SPEC",
    "DROP",
    "PY_TASKS",
    "BadInput",
    "case",
    "factor_tasks",
    "run_case",
    "spec_variant",
    "write",
]

#: The valid spec the spec variants start from (humaneval, 4 tasks, one loop, serial).
BASE_SPEC: dict[str, Any] = {
    "name": "ux-base",
    "suite": "humaneval",
    "suite_options": {"limit": 4},
    "tasks": {"split": "test"},
    "seed_knowledge": {"split": "train"},
    "arms": [
        {"name": "none", "rag": "none"},
        {"name": "v1", "rag": "v1"},
        {"name": "v2", "rag": "v2"},
    ],
    "seeds": [0],
    "max_loop": 1,
    "parallelism": {"executor": "serial"},
}

PY_TASKS: dict[str, Any] = {
    "kind": "python_function",
    "tasks": [
        {
            "id": "add",
            "name": "add",
            "description": "Add two numbers.",
            "entry_point": "add",
            "canonical_solution": "def add(a, b):\n    return a + b\n",
            "tests": "def check(f):\n    assert f(1, 2) == 3\n",
        }
    ],
}
_GT = (
    "import pandas as pd\n"
    "panel = pd.read_parquet('daily_pv.parquet')\n"
    "close = panel['close']\n"
    "(close / close.groupby(level='instrument').shift(1)).to_frame('MOM1')"
    ".to_parquet('result.parquet')\n"
)


def factor_tasks(inputs: str) -> dict[str, Any]:
    """A factor task file with one task (MOM1) reading ``inputs`` as its panel."""
    return {
        "kind": "factor",
        "inputs": {"daily_pv.parquet": inputs},
        "tasks": [
            {"id": "MOM1", "name": "MOM1", "description": "One-day momentum.", "ground_truth": _GT}
        ],
    }


#: Marks a key :func:`spec_variant` removes.
DROP = object()


@dataclass(frozen=True)
class BadInput:
    """One bad input: ``argv`` runs in the workspace; the error must contain ``expect``."""

    name: str
    area: str
    input: str
    argv: tuple[str, ...]
    expect: str
    exit_code: int = 2
    #: Environment variables set while the command runs (name, value).
    env: tuple[tuple[str, str], ...] = ()


def spec_variant(label: str, /, **changes: Any) -> dict[str, Any]:
    spec = copy.deepcopy(BASE_SPEC)
    spec["name"] = f"ux-{label}"
    for key, value in changes.items():
        target: Any = spec
        parts = key.split("__")
        for p in parts[:-1]:
            target = target[int(p)] if isinstance(target, list) else target[p]
        last = parts[-1]
        if value is DROP:
            del target[last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return spec


def case(
    name: str,
    area: str,
    what: str,
    argv: list[str],
    expect: str,
    code: int = 2,
    env: dict[str, str] | None = None,
) -> BadInput:
    """One case: ``argv`` (after ``costeer-lab``) must fail with ``expect`` in its error."""
    return BadInput(
        name, area, what, tuple(argv), expect, code, tuple(sorted((env or {}).items()))
    )


def run_case(spec: str, what: str, expect: str, area: str = "spec") -> BadInput:
    """``run specs/<spec>.yaml --out runs/new`` must fail with ``expect``."""
    return case(
        f"spec-{spec}", area, what, ["run", f"specs/{spec}.yaml", "--out", "runs/new"], expect
    )


def write(path: Path, content: Any) -> None:
    """Write ``content`` (text, bytes, or a document as YAML) to ``path``, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
