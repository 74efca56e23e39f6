"""A notebook saved after a run keeps the progress bars' final lines as plain output, not
widget placeholders that show a stale "0 %" once the kernel is gone."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from .conftest import KERNEL_NAME

CELL = """
from costeer_lab.experiment import run_experiment
spec = {"name": "bars", "suite": "humaneval", "suite_options": {"limit": 3},
        "tasks": {"split": "test"}, "seed_knowledge": {"split": "train"},
        "arms": [{"name": "none"}], "max_loop": 2, "parallelism": {"executor": "serial"}}
run_experiment(spec, OUT, progress=True)
"""


def test_progress_bars_are_saved_as_their_final_text(kernel_dir: Path, tmp_path: Path) -> None:
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from traitlets import default

    class IsolatedKernelManager(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _only_test_kernels(self) -> KernelSpecManager:
            return KernelSpecManager(kernel_dirs=[str(kernel_dir)])

    nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    nb.cells = [
        nbformat.v4.new_code_cell(f"OUT = {json.dumps(str(tmp_path / 'run'))}"),  # type: ignore[no-untyped-call]
        nbformat.v4.new_code_cell(CELL),  # type: ignore[no-untyped-call]
    ]
    client = NotebookClient(
        nb,
        kernel_name=KERNEL_NAME,
        kernel_manager_class=IsolatedKernelManager,
        timeout=300,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    outputs = nb.cells[1].outputs
    assert not [
        o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    final = text.split("\r")[-2] if "\r" in text else text
    assert "evolve none-seed0" in text and "2/2" in text, text[-500:]
    assert "0%" not in final
