"""Retrieval hit rate per arm and query kind, as grouped bars."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from costeer_lab.experiment import QUERY_KINDS, hit_rate
from costeer_lab.viz._common import new_axes

__all__ = ["HitRateInfo", "_get_hit_rate_info", "plot_hit_rate"]

_KIND_COLORS = {
    "similar": "#4c72b0",
    "former_trace": "#dd8452",
    "component": "#55a868",
    "error": "#c44e52",
}


class HitRateInfo(NamedTuple):
    """Arms that queried (sorted), kinds that ran (in QUERY_KINDS order), rates[arm][kind].

    ``rates`` is NaN and ``n_queries`` 0 where an arm never ran a kind.
    """

    arms: tuple[str, ...]
    kinds: tuple[str, ...]
    rates: tuple[tuple[float, ...], ...]
    n_queries: tuple[tuple[int, ...], ...]
    threshold: float


def _get_hit_rate_info(results: pd.DataFrame, *, threshold: float = 0.5) -> HitRateInfo:
    """The data drawn by :func:`plot_hit_rate` (from :func:`hit_rate`)."""
    table = hit_rate(results, threshold=threshold)
    arms = tuple(sorted(str(a) for a in table["arm"].unique()))
    present = set(table["query_kind"])
    kinds = tuple(k for k in QUERY_KINDS if k in present)
    lookup = {
        (str(r["arm"]), str(r["query_kind"])): (float(r["hit_rate"]), int(r["n_queries"]))
        for r in table.to_dict("records")
    }
    rates = tuple(
        tuple(lookup[a, k][0] if (a, k) in lookup else float("nan") for k in kinds) for a in arms
    )
    counts = tuple(tuple(lookup[a, k][1] if (a, k) in lookup else 0 for k in kinds) for a in arms)
    return HitRateInfo(arms, kinds, rates, counts, float(threshold))


def plot_hit_rate(
    results: pd.DataFrame, *, ax: Axes | None = None, threshold: float = 0.5
) -> Axes:
    """Grouped bars: for each arm, the hit rate of each query kind (score >= ``threshold``).

    Example:
        >>> from costeer_lab.testing import example_results
        >>> from matplotlib.figure import Figure
        >>> ax = plot_hit_rate(example_results(), ax=Figure().subplots())
        >>> [t.get_text() for t in ax.get_xticklabels()]
        ['rag']
    """
    info = _get_hit_rate_info(results, threshold=threshold)
    ax = new_axes(ax)
    x = np.arange(len(info.arms), dtype=float)
    width = 0.8 / max(len(info.kinds), 1)
    for j, kind in enumerate(info.kinds):
        heights = [row[j] for row in info.rates]
        offset = (j - (len(info.kinds) - 1) / 2) * width
        bars = ax.bar(
            x + offset,
            np.nan_to_num(heights),
            width,
            label=kind,
            color=_KIND_COLORS.get(kind, "#8172b3"),
        )
        labels = [f"n={n[j]}" if n[j] else "" for n in info.n_queries]
        ax.bar_label(bars, labels=labels, fontsize="x-small", padding=2)
    ax.set_xticks(x, info.arms)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel(f"share of queries with a hit (score >= {info.threshold:g})")
    ax.set_title("Retrieval hit rate by query kind")
    if info.kinds:
        ax.legend(title="query kind", fontsize="small")
    else:
        ax.text(
            0.5,
            0.5,
            "no arm ran a knowledge query",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
    ax.grid(axis="y", alpha=0.3)
    return ax
