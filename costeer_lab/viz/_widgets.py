"""A small ipywidgets dashboard over a results table: pick arms and a plot, see it.

The plot is rendered to PNG and placed in an ``Output`` widget as a display-data message, so the
dashboard works in Jupyter and can be driven (and tested) without a running kernel.

Example:
    >>> from costeer_lab.testing import example_results
    >>> board = results_dashboard(example_results(), n_boot=50)
    >>> board.metric.value = "attempts to success"
    >>> sorted(board.output.outputs[0]["data"])
    ['image/png', 'text/plain']
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from costeer_lab.experiment import memory_metrics, summary_table, validate_results
from costeer_lab.viz._attempts import plot_attempts
from costeer_lab.viz._common import figure_png
from costeer_lab.viz._hit_rate import plot_hit_rate
from costeer_lab.viz._kb_growth import plot_kb_growth
from costeer_lab.viz._knowledge_usage import plot_knowledge_usage
from costeer_lab.viz._static_fallback import StaticFallback
from costeer_lab.viz._success_curve import plot_success_curve

__all__ = ["ALL_ARMS", "ResultsDashboard", "results_dashboard"]

ALL_ARMS = "(all arms)"


class ResultsDashboard(StaticFallback, widgets.VBox):  # type: ignore[misc]
    """Dropdowns for the arm and the plot, an HTML summary row and an Output with the plot.

    Attributes:
        arm: Dropdown of ``ALL_ARMS`` and every arm.
        metric: Dropdown of the plot names in :attr:`plots`.
        summary: HTML widget with the summary-table rows of the chosen arm(s) (and, for arms of
            the pattern memory, their hit rate and success when used).
        output: Output widget holding the rendered plot (``image/png`` display data).
        renders: how many plots were rendered so far.
    """

    def __init__(self, results: pd.DataFrame, *, n_boot: int = 300, seed: int = 0) -> None:
        self.results = validate_results(results)
        self.n_boot, self.seed = n_boot, seed
        self.plots: dict[str, Callable[[pd.DataFrame, Axes, str | None], Axes]] = {
            "success curve": lambda r, ax, _: plot_success_curve(
                r, ax=ax, n_boot=self.n_boot, seed=self.seed
            ),
            "hit rate": lambda r, ax, _: plot_hit_rate(r, ax=ax),
            "attempts to success": lambda r, ax, _: plot_attempts(r, ax=ax),
            "knowledge-base growth": lambda r, ax, _: plot_kb_growth(r, ax=ax),
            "knowledge usage": lambda r, ax, arm: plot_knowledge_usage(r, ax=ax, arm=arm),
        }
        arms = sorted(str(a) for a in self.results["arm"].unique())
        self._summary = summary_table(self.results, n_boot=n_boot, seed=seed)
        self._memory = memory_metrics(self.results)
        self.arm = widgets.Dropdown(options=[ALL_ARMS, *arms], value=ALL_ARMS, description="arm")
        self.metric = widgets.Dropdown(
            options=list(self.plots), value="success curve", description="plot"
        )
        self.summary = widgets.HTML()
        self.output = widgets.Output()
        self.renders = 0
        super().__init__([widgets.HBox([self.arm, self.metric]), self.summary, self.output])
        self.arm.observe(self._on_change, names="value")
        self.metric.observe(self._on_change, names="value")
        self.refresh()

    def _on_change(self, change: dict[str, Any]) -> None:
        self.refresh()

    def selected(self) -> pd.DataFrame:
        """The results rows of the chosen arm (all rows for ``ALL_ARMS``)."""
        if self.arm.value == ALL_ARMS:
            return self.results
        chosen: pd.DataFrame = self.results[self.results["arm"] == self.arm.value]
        return chosen

    def refresh(self) -> None:
        """Redraw the chosen plot and the summary rows for the current selection."""
        arm = None if self.arm.value == ALL_ARMS else str(self.arm.value)
        rows = self._summary if arm is None else self._summary[self._summary["arm"] == arm]
        self.summary.value = rows.to_html(index=False, float_format=lambda x: f"{x:.3g}")
        memory = self._memory if arm is None else self._memory[self._memory["arm"] == arm]
        if not memory.empty:  # arms of the pattern memory: hit rate and success when used
            self.summary.value += "<b>Pattern memory</b>" + memory.to_html(
                index=False, float_format=lambda x: f"{x:.3g}"
            )
        fig = Figure(figsize=(7.0, 4.2), layout="constrained")
        self.plots[str(self.metric.value)](self.selected(), fig.subplots(), arm)
        png = base64.b64encode(figure_png(fig)).decode("ascii")
        title = f"{self.metric.value} — {self.arm.value}"
        self.output.outputs = (
            {
                "output_type": "display_data",
                "data": {"image/png": png, "text/plain": title},
                "metadata": {},
            },
        )
        self.renders += 1
        self._update_snapshot()

    def static_html(self) -> str:
        """The summary rows and the current plot as plain HTML (the saved-notebook fallback)."""
        img = ""
        if self.output.outputs:
            png = self.output.outputs[0]["data"]["image/png"]
            img = f"<img alt='{self.metric.value}' src='data:image/png;base64,{png}'/>"
        return f"<div><b>{self.metric.value} — {self.arm.value}</b>{self.summary.value}{img}</div>"


def results_dashboard(
    results: pd.DataFrame, *, n_boot: int = 300, seed: int = 0
) -> ResultsDashboard:
    """Build a :class:`ResultsDashboard` over ``results`` (display it in a notebook cell)."""
    return ResultsDashboard(results, n_boot=n_boot, seed=seed)
