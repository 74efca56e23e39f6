"""``tools/strip_notebooks.py``: the output policy's tool strips what the policy test refuses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat

from .test_notebooks import NOTEBOOK_METADATA

ROOT = Path(__file__).resolve().parents[2]


def _strip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "strip_notebooks.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _executed_notebook(path: Path) -> None:
    """A notebook as JupyterLab saves it after a run: outputs, counts, timings, versions."""
    nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    params = nbformat.v4.new_code_cell("N = 1")  # type: ignore[no-untyped-call]
    params.metadata = {"tags": ["parameters"], "execution": {"iopub.status.busy": "2025"}}
    params.execution_count = 1
    shown = nbformat.v4.new_code_cell("print(N)")  # type: ignore[no-untyped-call]
    shown.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]  # type: ignore[no-untyped-call]
    shown.execution_count = 2
    nb.cells = [nbformat.v4.new_markdown_cell("# 01 · x"), params, shown]  # type: ignore[no-untyped-call]
    nb.metadata = {
        "kernelspec": NOTEBOOK_METADATA["kernelspec"],
        "language_info": {"name": "python", "version": "3.11.7"},
    }
    nbformat.write(nb, path)  # type: ignore[no-untyped-call]


def test_check_names_an_unstripped_notebook_and_the_tool_strips_it(tmp_path: Path) -> None:
    path = tmp_path / "01_x.ipynb"
    _executed_notebook(path)
    check = _strip("--check", str(path))
    assert check.returncode == 1 and f"not stripped: {path}" in check.stdout
    assert _strip(str(path)).returncode == 0
    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    assert nb.metadata == NOTEBOOK_METADATA
    assert [c.metadata for c in nb.cells] == [{}, {"tags": ["parameters"]}, {}]
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    assert [c.source for c in nb.cells] == ["# 01 · x", "N = 1", "print(N)"]  # code kept
    assert _strip("--check", str(path)).returncode == 0


def test_the_committed_notebooks_are_stripped() -> None:
    check = _strip("--check")
    assert check.returncode == 0, check.stdout
