"""Distribution of attempts to success per arm (plus tasks never solved), as grouped bars."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from costeer_lab.experiment import task_outcomes
from costeer_lab.viz._common import arm_colors, new_axes

__all__ = ["AttemptsInfo", "_get_attempts_info", "plot_attempts"]


class AttemptsInfo(NamedTuple):
    """Per arm (sorted): how many (seed, task) pairs were first solved at each attempt.

    ``attempts`` runs from 1 to the largest attempt any arm recorded; ``counts[i][j]`` belongs
    to ``arms[i]`` and ``attempts[j]``; ``never_solved[i]`` counts pairs never solved.
    """

    arms: tuple[str, ...]
    attempts: tuple[int, ...]
    counts: tuple[tuple[int, ...], ...]
    never_solved: tuple[int, ...]


def _get_attempts_info(results: pd.DataFrame) -> AttemptsInfo:
    """The data drawn by :func:`plot_attempts` (from :func:`task_outcomes`)."""
    out = task_outcomes(results)
    last = int(out["n_attempts"].max()) if len(out) else 0
    attempts = tuple(range(1, last + 1))
    arms, counts, never = [], [], []
    for arm, g in out.groupby("arm", sort=True):
        solved = g["solved_at"].dropna().astype("int64")
        arms.append(str(arm))
        counts.append(tuple(int((solved == k).sum()) for k in attempts))
        never.append(int(g["solved_at"].isna().sum()))
    return AttemptsInfo(tuple(arms), attempts, tuple(counts), tuple(never))


def plot_attempts(results: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """Bars of how many tasks each arm solved at attempt 1, 2, …, and how many it never solved.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> from matplotlib.figure import Figure
        >>> ax = plot_attempts(example_results(), ax=Figure().subplots())
        >>> [t.get_text() for t in ax.get_xticklabels()]
        ['1', '2', 'never']
    """
    info = _get_attempts_info(results)
    ax = new_axes(ax)
    labels = [str(a) for a in info.attempts] + ["never"]
    x = np.arange(len(labels), dtype=float)
    width = 0.8 / max(len(info.arms), 1)
    colors = arm_colors(info.arms)
    for i, arm in enumerate(info.arms):
        heights = [*info.counts[i], info.never_solved[i]]
        offset = (i - (len(info.arms) - 1) / 2) * width
        ax.bar(x + offset, heights, width, label=arm, color=colors[arm])
    ax.set_xticks(x, labels)
    ax.set_xlabel("attempt of first success")
    ax.set_ylabel("tasks (summed over seeds)")
    ax.set_title("Attempts to success")
    if info.arms:
        ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return ax
