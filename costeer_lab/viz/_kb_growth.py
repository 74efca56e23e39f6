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
    """One arm in one stage: mean, min and max knowledge-base nodes over seeds at each attempt.

    ``steps`` number the attempts across stages in sequence (equal to ``attempts`` without
    stages); ``stage`` is ``""`` without stages.
    """

    arm: str
    attempts: tuple[int, ...]
    mean: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    stage: str = ""
    steps: tuple[int, ...] = ()


class KbGrowthInfo(NamedTuple):
    """Every (arm, stage), arms sorted by name, each arm's stages in the order they ran;
    ``stages``: (where it starts on the x axis, name) of every stage, empty without stages."""

    arms: tuple[KbArm, ...]
    stages: tuple[tuple[float, str], ...] = ()


def _get_kb_growth_info(results: pd.DataFrame) -> KbGrowthInfo:
    """The data drawn by :func:`plot_kb_growth` (from :func:`kb_growth`)."""
    table = kb_growth(results)
    arms = []
    starts: dict[str, int] = {}
    for (arm, stage), g in table.groupby(["arm", "stage"], sort=False):
        steps = tuple(int(x) for x in g["step"])
        starts[str(stage)] = min(starts.get(str(stage), steps[0]), steps[0])
        arms.append(
            KbArm(
                arm=str(arm),
                attempts=tuple(int(x) for x in g["attempt"]),
                mean=tuple(float(x) for x in g["kb_nodes"]),
                low=tuple(float(x) for x in g["kb_nodes_min"]),
                high=tuple(float(x) for x in g["kb_nodes_max"]),
                stage=str(stage),
                steps=steps,
            )
        )
    ordered = sorted(starts.items(), key=lambda kv: kv[1])
    stages = tuple((start - 0.5, name) for name, start in ordered if name)
    return KbGrowthInfo(tuple(arms), stages)


def plot_kb_growth(results: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Plot knowledge-base nodes after each attempt (mean over seeds, band = min..max).

    Stages are drawn in sequence, one line per (arm, stage), with a dashed line where a stage
    starts (a stage that carries knowledge starts from a copy of the previous stage's KB).

    Example:
        >>> from costeer_lab.testing import example_results
        >>> from matplotlib.figure import Figure
        >>> plot_kb_growth(example_results(), ax=Figure().subplots()).get_ylabel()
        'knowledge-base nodes'
    """
    info = _get_kb_growth_info(results)
    ax = new_axes(ax)
    arms = sorted({a.arm for a in info.arms})
    colors, styles, shift = arm_colors(arms), arm_styles(arms), dodge(arms)
    labelled: set[str] = set()
    for a in info.arms:
        marker, linestyle = styles[a.arm]
        steps = a.steps or a.attempts
        x = [v + shift[a.arm] for v in steps]
        label = None if a.arm in labelled else a.arm
        labelled.add(a.arm)
        ax.plot(x, a.mean, marker=marker, linestyle=linestyle, color=colors[a.arm], label=label)
        ax.fill_between(steps, a.low, a.high, color=colors[a.arm], alpha=0.2, linewidth=0)
    for i, (start, name) in enumerate(info.stages):
        if i:  # where a later stage starts
            ax.axvline(start, color="0.4", linestyle="--", linewidth=1, gid="stage-start")
        ax.annotate(
            f"stage {name}",
            (start, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, -12),
            textcoords="offset points",
            fontsize="small",
            color="0.3",
        )
    staged = bool(info.stages)
    ax.set_xlabel(
        "attempt (evolution step; stages in sequence)" if staged else "attempt (evolution step)"
    )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("knowledge-base nodes")
    ax.set_title("Knowledge-base growth (band: min–max over seeds)")
    if info.arms:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax
