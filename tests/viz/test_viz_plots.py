"""Plot data (exact, on the hand-checkable example table) and rendering to PNG in memory."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from costeer_lab.errors import InvalidInputError
from costeer_lab.testing import example_results, make_row, synthetic_results
from costeer_lab.viz import (
    ArmCurve,
    KbArm,
    arm_colors,
    figure_png,
    get_attempts_info,
    get_hit_rate_info,
    get_kb_growth_info,
    get_knowledge_usage_info,
    get_success_curve_info,
    plot_attempts,
    plot_hit_rate,
    plot_kb_growth,
    plot_knowledge_usage,
    plot_success_curve,
)

PNG = b"\x89PNG\r\n\x1a\n"
PLOTS: list[Callable[..., Axes]] = [
    plot_success_curve,
    plot_hit_rate,
    plot_attempts,
    plot_kb_growth,
    plot_knowledge_usage,
]


def test_success_curve_info_exact() -> None:
    info = get_success_curve_info(example_results(), n_boot=1000, seed=0)
    # one seed: tasks are resampled; with two tasks the resampled shares are 0, 1/2, 1 with
    # probabilities 1/4, 1/2, 1/4, so the 95% interval is [0, 1] unless both tasks agree
    assert info.ci == 0.95
    assert info.curves == (
        ArmCurve("no_knowledge", (1, 2), (0.5, 1.0), (0.0, 1.0), (1.0, 1.0), 1),
        ArmCurve("rag", (1, 2), (0.5, 0.5), (0.0, 0.0), (1.0, 1.0), 1),
    )


def test_hit_rate_info_exact() -> None:
    info = get_hit_rate_info(example_results(), threshold=0.5)
    assert info.arms == ("rag",)
    assert info.kinds == ("similar", "error")
    assert info.rates == ((0.5, 0.0),)
    assert info.returned == ((0.5, 0.0),)
    assert info.n_queries == ((2, 1),)
    assert info.threshold == 0.5


def test_hit_rate_info_missing_kind_is_nan() -> None:
    rows = [
        make_row("a", 0, "t", 1, True, retrieved={"component": [("c", 0.9, True)]}),
        make_row("b", 0, "t", 1, True, retrieved={"former_trace": [("f", 0.1, False)]}),
        make_row("b", 0, "u", 1, True, retrieved={"former_trace": [("g", 0.9)]}),
    ]
    info = get_hit_rate_info(pd.DataFrame(rows))
    assert info.kinds == ("former_trace", "component")
    assert math.isnan(info.rates[0][0]) and info.rates[0][1] == 1.0
    assert info.rates[1][0] == 0.0 and math.isnan(info.rates[1][1])  # "g" is not judged
    assert info.returned[1][0] == 0.5  # but it returned something (score 0.9)
    assert info.n_queries == ((0, 1), (2, 0))


def test_attempts_info_exact() -> None:
    info = get_attempts_info(example_results())
    assert info.arms == ("no_knowledge", "rag")
    assert info.attempts == (1, 2)
    assert info.counts == ((1, 1), (1, 0))
    assert info.never_solved == (0, 1)


def test_kb_growth_info_exact() -> None:
    info = get_kb_growth_info(example_results())
    assert info.arms == (
        KbArm("no_knowledge", (1, 2), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0), "", (1, 2)),
        KbArm("rag", (1, 2), (4.0, 6.0), (4.0, 6.0), (4.0, 6.0), "", (1, 2)),
    )
    assert info.stages == ()


def test_knowledge_usage_info_exact() -> None:
    info = get_knowledge_usage_info(example_results())
    assert info.item_ids == ("k1", "k2")
    assert info.n_uses == (1, 1)
    assert info.success_when_used == (1.0, 0.0)
    assert get_knowledge_usage_info(example_results(), top_n=1).item_ids == ("k1",)
    assert get_knowledge_usage_info(example_results(), arm="no_knowledge").item_ids == ()
    with pytest.raises(InvalidInputError, match="arm 'bogus' is not in the results"):
        get_knowledge_usage_info(example_results(), arm="bogus")
    with pytest.raises(InvalidInputError, match="top_n"):
        get_knowledge_usage_info(example_results(), top_n=0)


@pytest.mark.parametrize("plot", PLOTS, ids=lambda f: f.__name__)
def test_plot_renders_png_on_given_axes(plot: Callable[..., Axes]) -> None:
    fig = Figure()
    ax = fig.subplots()
    kwargs: dict[str, Any] = {"n_boot": 100} if plot is plot_success_curve else {}
    assert plot(synthetic_results(n_seeds=2, n_tasks=5), ax=ax, **kwargs) is ax
    png = figure_png(fig)
    assert png.startswith(PNG) and len(png) > 5000
    assert ax.get_title()


@pytest.mark.parametrize("plot", PLOTS, ids=lambda f: f.__name__)
def test_plot_creates_a_figure_when_ax_is_none(plot: Callable[..., Axes]) -> None:
    ax = plot(example_results())
    assert isinstance(ax, Axes) and ax.get_figure() is not None
    assert figure_png(ax).startswith(PNG)


def test_success_curve_draws_one_line_and_band_per_arm() -> None:
    ax = plot_success_curve(example_results(), ax=Figure().subplots(), n_boot=50)
    assert len(ax.get_lines()) == 2
    assert len(ax.collections) == 2
    colors = arm_colors(["no_knowledge", "rag"])
    assert [line.get_color() for line in ax.get_lines()] == [colors["no_knowledge"], colors["rag"]]
    legend = ax.get_legend()
    assert legend is not None
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["no_knowledge (1 seed)", "rag (1 seed)"]


def _bars(ax: Axes) -> list[Rectangle]:
    assert all(isinstance(p, Rectangle) for p in ax.patches)
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def test_bar_plots_draw_expected_bars() -> None:
    ax = plot_hit_rate(example_results(), ax=Figure().subplots())
    filled = [round(p.get_height(), 6) for p in _bars(ax) if p.get_fill()]
    outlines = [round(p.get_height(), 6) for p in _bars(ax) if not p.get_fill()]
    assert filled == [0.5, 0.0] and outlines == [0.5, 0.0]  # hits, and returned
    ax = plot_attempts(example_results(), ax=Figure().subplots())
    heights = [p.get_height() for p in _bars(ax)]
    assert heights == [1, 1, 0, 1, 0, 1]  # no_knowledge (1, 2, never), then rag
    fig = Figure()
    ax = plot_knowledge_usage(example_results(), ax=fig.subplots())
    assert [p.get_width() for p in _bars(ax)] == [1, 1]
    assert len(fig.axes) == 2  # the colour bar


def test_plots_without_knowledge_say_so() -> None:
    no_kb = example_results().query("arm == 'no_knowledge'")
    ax = plot_hit_rate(no_kb, ax=Figure().subplots())
    assert [t.get_text() for t in ax.texts] == ["no arm ran a knowledge query"]
    ax = plot_knowledge_usage(no_kb, ax=Figure().subplots())
    assert [t.get_text() for t in ax.texts] == ["no knowledge was retrieved or used"]


def test_arm_colors_are_stable() -> None:
    assert arm_colors(["b", "a"]) == arm_colors(["a", "b", "a"])
    assert len(set(arm_colors([str(i) for i in range(10)]).values())) == 10
