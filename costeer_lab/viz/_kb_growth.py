"""Knowledge-base size per attempt, one line per arm with the min–max range over seeds."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator

from costeer_lab.experiment import kb_growth
from costeer_lab.viz._common import arm_colors, arm_styles, dodge, new_axes

__all__ = ["KbArm", "KbGrowthInfo", "_get_kb_growth_info", "plot_kb_growth"]


class KbArm(NamedTuple):
    """One arm: mean, min and max knowledge-base nodes over seeds at each attempt."""

    arm: str
    attempts: tuple[int, ...]
    mean: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]


class KbGrowthInfo(NamedTuple):
    """Every arm, sorted by name."""

    arms: tuple[KbArm, ...]


def _get_kb_growth_info(results: pd.DataFrame) -> KbGrowthInfo:
    """The data drawn by :func:`plot_kb_growth` (from :func:`kb_growth`)."""
    table = kb_growth(results)
    arms = []
    for arm, g in table.groupby("arm", sort=True):
        arms.append(
            KbArm(
                arm=str(arm),
                attempts=tuple(int(x) for x in g["attempt"]),
                mean=tuple(float(x) for x in g["kb_nodes"]),
                low=tuple(float(x) for x in g["kb_nodes_min"]),
                high=tuple(float(x) for x in g["kb_nodes_max"]),
            )
        )
    return KbGrowthInfo(tuple(arms))


def plot_kb_growth(results: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Plot knowledge-base nodes after each attempt (mean over seeds, band = min..max).

    Example:
        >>> from costeer_lab.testing import example_results
        >>> from matplotlib.figure import Figure
        >>> plot_kb_growth(example_results(), ax=Figure().subplots()).get_ylabel()
        'knowledge-base nodes'
    """
    info = _get_kb_growth_info(results)
    ax = new_axes(ax)
    arms = [a.arm for a in info.arms]
    colors, styles, shift = arm_colors(arms), arm_styles(arms), dodge(arms)
    for a in info.arms:
        marker, linestyle = styles[a.arm]
        x = [v + shift[a.arm] for v in a.attempts]
        ax.plot(x, a.mean, marker=marker, linestyle=linestyle, color=colors[a.arm], label=a.arm)
        ax.fill_between(a.attempts, a.low, a.high, color=colors[a.arm], alpha=0.2, linewidth=0)
    ax.set_xlabel("attempt (evolution step)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("knowledge-base nodes")
    ax.set_title("Knowledge-base growth (band: min–max over seeds)")
    if info.arms:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax
