"""``import costeer_lab.viz`` leaves ipywidgets alone; a widget name imports it on first use."""

from __future__ import annotations

import subprocess
import sys

import costeer_lab.viz

WIDGET_NAMES = {
    "ALL_ARMS",
    "ExperimentMonitor",
    "KnowledgeExplorer",
    "QueryPlayground",
    "ResultsDashboard",
    "StaticFallback",
    "follow_experiment",
    "knowledge_explorer",
    "query_playground",
    "results_dashboard",
    "task_knowledge_html",
}


def _modules_after(code: str) -> set[str]:
    """The ``ipywidgets*`` modules a fresh interpreter holds after running ``code``."""
    listing = "print(','.join(m for m in sys.modules if m.startswith('ipywidgets')))"
    probe = f"{code}\nimport sys\n{listing}"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return {m for m in out.stdout.strip().split(",") if m}


def test_importing_viz_does_not_import_ipywidgets() -> None:
    assert _modules_after("import costeer_lab.viz") == set()
    assert _modules_after("from costeer_lab.viz import plot_hit_rate, in_repo") == set()


def test_a_widget_name_imports_ipywidgets_when_used() -> None:
    assert "ipywidgets" in _modules_after("from costeer_lab.viz import results_dashboard")


def test_every_widget_is_listed_and_resolves() -> None:
    assert WIDGET_NAMES <= set(costeer_lab.viz.__all__) <= set(dir(costeer_lab.viz))
    for name in WIDGET_NAMES:
        value = getattr(costeer_lab.viz, name)
        assert getattr(value, "__module__", "costeer_lab.viz._").startswith("costeer_lab.viz._")
