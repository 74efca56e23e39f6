"""Cumulative success rate per attempt, one line per arm with its bootstrap CI band."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd
from matplotlib.axes import Axes

from costeer_lab.experiment import success_curve
from costeer_lab.viz._common import arm_colors, arm_styles, dodge, new_axes

__all__ = ["ArmCurve", "SuccessCurveInfo", "_get_success_curve_info", "plot_success_curve"]


class ArmCurve(NamedTuple):
    """One arm's curve: attempts 1..T and the rate with its interval at each."""

    arm: str
    attempts: tuple[int, ...]
    rate: tuple[float, ...]
    ci_low: tuple[float, ...]
    ci_high: tuple[float, ...]
    n_seeds: int


class SuccessCurveInfo(NamedTuple):
    """Curves of every arm (sorted by name) and the CI level."""

    curves: tuple[ArmCurve, ...]
    ci: float


def _get_success_curve_info(
    results: pd.DataFrame, *, n_boot: int = 1000, ci: float = 0.95, seed: int = 0
) -> SuccessCurveInfo:
    """The data drawn by :func:`plot_success_curve` (from :func:`success_curve`)."""
    table = success_curve(results, n_boot=n_boot, ci=ci, seed=seed)
    curves = []
    for arm, g in table.groupby("arm", sort=True):
        curves.append(
            ArmCurve(
                arm=str(arm),
                attempts=tuple(int(x) for x in g["attempt"]),
                rate=tuple(float(x) for x in g["success_rate"]),
                ci_low=tuple(float(x) for x in g["ci_low"]),
                ci_high=tuple(float(x) for x in g["ci_high"]),
                n_seeds=int(g["n_seeds"].iloc[0]),
            )
        )
    return SuccessCurveInfo(curves=tuple(curves), ci=ci)


def plot_success_curve(
    results: pd.DataFrame,
    *,
    ax: Axes | None = None,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> Axes:
    """Plot the cumulative success rate per attempt for each arm, with CI bands.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> from matplotlib.figure import Figure
        >>> ax = plot_success_curve(example_results(), ax=Figure().subplots(), n_boot=50)
        >>> ax.get_ylabel()
        'tasks solved (cumulative share)'
    """
    info = _get_success_curve_info(results, n_boot=n_boot, ci=ci, seed=seed)
    ax = new_axes(ax)
    arms = [c.arm for c in info.curves]
    colors, styles, shift = arm_colors(arms), arm_styles(arms), dodge(arms)
    for c in info.curves:
        color, (marker, linestyle) = colors[c.arm], styles[c.arm]
        x = [a + shift[c.arm] for a in c.attempts]  # dodged: coinciding curves stay visible
        ax.plot(
            x,
            c.rate,
            marker=marker,
            linestyle=linestyle,
            color=color,
            label=f"{c.arm} ({c.n_seeds} seed{'s' if c.n_seeds != 1 else ''})",
        )
        ax.fill_between(x, c.ci_low, c.ci_high, color=color, alpha=0.15, linewidth=0)
    ax.set_xlabel("attempt (evolution step)")
    ax.set_ylabel("tasks solved (cumulative share)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Success per attempt ({round(100 * info.ci)}% CI bands)")
    if info.curves:
        last = max(max(c.attempts) for c in info.curves)
        ax.set_xticks(range(1, last + 1))
        ax.legend(loc="lower right", fontsize="small")
    ax.grid(alpha=0.3)
    return ax
