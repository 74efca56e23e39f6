"""Strip the notebooks for git: the output policy of ``notebooks/``.

A committed notebook has no outputs and no execution counts (the tests execute every notebook),
its cells keep only their ``tags`` metadata (no execution timings), and the notebook keeps only
the kernel it runs on (no interpreter version of whoever saved it last).

    python tools/strip_notebooks.py [--check] [NOTEBOOK ...]

Without paths: every ``notebooks/*.ipynb``. ``--check`` writes nothing and exits 1, naming the
notebooks that are not stripped.
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parents[1]

#: The notebook metadata a stripped notebook keeps.
NOTEBOOK_METADATA: dict[str, Any] = {
    "kernelspec": {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    },
    "language_info": {"name": "python"},
}


def stripped(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` without outputs, execution counts and run metadata."""
    out = copy.deepcopy(nb)
    out.metadata = nbformat.from_dict(copy.deepcopy(NOTEBOOK_METADATA))  # type: ignore[no-untyped-call]
    for cell in out.cells:
        tags = cell.metadata.get("tags")
        cell.metadata = nbformat.from_dict({"tags": tags} if tags else {})  # type: ignore[no-untyped-call]
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if unstripped")
    parser.add_argument("paths", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    args = parser.parse_args(argv)
    paths = args.paths or sorted((ROOT / "notebooks").glob("*.ipynb"))
    unstripped = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
        clean = stripped(nb)
        if clean == nb:
            continue
        unstripped.append(path)
        if not args.check:
            nbformat.write(clean, path)  # type: ignore[no-untyped-call]
    verb = "not stripped" if args.check else "stripped"
    for path in unstripped:
        print(f"{verb}: {path}")
    return 1 if args.check and unstripped else 0


if __name__ == "__main__":
    raise SystemExit(main())
