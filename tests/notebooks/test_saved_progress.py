"""Issue 28: a notebook executed, saved and exported to static HTML (nbconvert) keeps what it
showed — progress bars as their final lines in one output (not dozens of stderr outputs or a
stale "0 %" widget), and every widget with a static snapshot (a table, a plot) beside its view,
which an export without JavaScript cannot draw."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from .conftest import KERNEL_NAME, kernel_env

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

RUN = """
from costeer_lab.experiment import load_results, run_experiment
spec = {"name": "bars", "suite": "humaneval", "suite_options": {"limit": 2},
        "tasks": {"split": "test"}, "seed_knowledge": {"split": "train"},
        "arms": [{"name": "none"}, {"name": "v2", "rag": "v2"}], "seeds": [0, 1],
        "max_loop": 2, "parallelism": {"executor": "serial"}}
path = run_experiment(spec, OUT, progress=True)
"""
DASHBOARD = """
from costeer_lab.viz import results_dashboard
board = results_dashboard(load_results(OUT), n_boot=20)
board
"""
EXPLORER = """
from costeer_lab.viz import knowledge_explorer
knowledge_explorer(f"{OUT}/kb/v2-seed0.db")
"""


@pytest.fixture(scope="module")
def executed(
    kernel_dir: Path, cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> nbformat.NotebookNode:
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from traitlets import default

    class IsolatedKernelManager(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _only_test_kernels(self) -> KernelSpecManager:
            return KernelSpecManager(kernel_dirs=[str(kernel_dir)])

    tmp = tmp_path_factory.mktemp("export")
    nb: nbformat.NotebookNode = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    sources = [f"OUT = {json.dumps(str(tmp / 'run'))}", RUN, DASHBOARD, EXPLORER]
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]  # type: ignore[no-untyped-call]
    client = NotebookClient(
        nb,
        kernel_name=KERNEL_NAME,
        kernel_manager_class=IsolatedKernelManager,
        timeout=300,
        resources={"metadata": {"path": str(tmp)}},
    )
    client.execute(env=kernel_env(cache_dir, {}))  # stores the widget state, as nbconvert does
    return nb


def _export(nb: nbformat.NotebookNode) -> str:
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nb)  # type: ignore[no-untyped-call]
    return str(body)


def _cell_html(page: str, index: int) -> str:
    """The exported HTML of the ``index``-th code cell (0-based)."""
    cells = re.split(r'<div class="jp-Cell jp-CodeCell', page)[1:]
    return cells[index]


def test_progress_bars_are_one_output_of_final_lines(executed: nbformat.NotebookNode) -> None:
    outputs = executed.cells[1].outputs
    assert [o for o in outputs if o["output_type"] == "error"] == []
    streams = [o for o in outputs if o["output_type"] == "stream" and o["name"] == "stderr"]
    assert len(streams) <= 2, [o["text"][:80] for o in streams]  # no bar in stderr
    assert not [o for o in outputs if WIDGET_MIME in o.get("data", {})]  # no widget bar
    shown = [o["data"]["text/plain"] for o in outputs if "text/plain" in o.get("data", {})]
    assert len(shown) == 1
    lines = shown[0].splitlines()
    runs = ["none-seed0", "none-seed1", "v2-seed0", "v2-seed1"]
    assert [re.match(r"evolve (\S+):", line)[1] for line in lines] == runs  # type: ignore[index]
    assert all("100%" in line and "2/2" in line for line in lines), lines
    page = _cell_html(_export(executed), 1)
    assert page.count("evolve ") == 4  # one final line per bar in the export, nothing more
    assert "application/vnd.jupyter.stderr" not in page


def test_widgets_show_a_static_snapshot_in_the_export(executed: nbformat.NotebookNode) -> None:
    assert "application/vnd.jupyter.widget-state+json" in executed.metadata["widgets"]
    page = _export(executed)
    for index, content in ((2, "<img"), (3, "Knowledge-graph explorer")):
        cell = _cell_html(page, index)
        # the widget view is kept for a live renderer, and the snapshot beside it is static HTML
        assert 'type="application/vnd.jupyter.widget-view+json"' in cell
        snapshot = cell.split('class="costeer-snapshot"', 1)[1]
        assert content in snapshot
    dashboard = _cell_html(page, 2).split('class="costeer-snapshot"', 1)[1]
    assert "<table" in dashboard and "final_success" in dashboard  # the summary rows
    assert re.search(r"src=[\"']data:image/png;base64,[A-Za-z0-9+/]{100}", dashboard)  # plot
    explorer = _cell_html(page, 3).split('class="costeer-snapshot"', 1)[1]
    assert "<h4" in explorer and "successful implementation" in explorer  # the task pane


def test_each_widget_is_displayed_once_with_its_snapshot(executed: nbformat.NotebookNode) -> None:
    for cell in executed.cells[2:]:
        kinds = [
            "widget" if WIDGET_MIME in o.get("data", {}) else "snapshot"
            for o in cell.outputs
            if "costeer-snapshot" in o.get("data", {}).get("text/html", "")
            or WIDGET_MIME in o.get("data", {})
        ]
        assert kinds == ["widget", "snapshot"]
        widget = cell.outputs[0]["data"]
        assert 'class="costeer-static"' in widget["text/html"]  # for state-less exporters
