"""Retrieval hit rate per arm and query kind, as grouped bars.

A hit is a returned item that is relevant to the target task (ground truth recorded when the
query ran, see :func:`costeer_lab.experiment.hit_rate`); the share of queries that merely
returned something is drawn as an outline behind each bar, so the two are never confused.
"""

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

    ``rates`` (hit rates: relevant item returned, over judged queries) and ``returned``
    (returned-something rates, best score ``>= threshold``) are NaN and ``n_queries`` 0 where
    an arm never ran a kind; ``rates`` is NaN too where no query was judged.
    """

    arms: tuple[str, ...]
    kinds: tuple[str, ...]
    rates: tuple[tuple[float, ...], ...]
    n_queries: tuple[tuple[int, ...], ...]
    threshold: float
    returned: tuple[tuple[float, ...], ...] = ()


def _get_hit_rate_info(results: pd.DataFrame, *, threshold: float = 0.5) -> HitRateInfo:
    """The data drawn by :func:`plot_hit_rate` (from :func:`hit_rate`)."""
    table = hit_rate(results, threshold=threshold)
    arms = tuple(sorted(str(a) for a in table["arm"].unique()))
    present = set(table["query_kind"])
    kinds = tuple(k for k in QUERY_KINDS if k in present)
    nan = float("nan")
    lookup = {
        (str(r["arm"]), str(r["query_kind"])): (
            float(r["hit_rate"]),
            int(r["n_queries"]),
            float(r["returned_rate"]),
        )
        for r in table.to_dict("records")
    }
    rates = tuple(tuple(lookup[a, k][0] if (a, k) in lookup else nan for k in kinds) for a in arms)
    counts = tuple(tuple(lookup[a, k][1] if (a, k) in lookup else 0 for k in kinds) for a in arms)
    returned = tuple(
        tuple(lookup[a, k][2] if (a, k) in lookup else nan for k in kinds) for a in arms
    )
    return HitRateInfo(arms, kinds, rates, counts, float(threshold), returned)


def plot_hit_rate(
    results: pd.DataFrame, *, ax: Axes | None = None, threshold: float = 0.5
) -> Axes:
    """Grouped bars: for each arm, the hit rate of each query kind (a relevant item came back),
    with the returned rate (best score >= ``threshold``) as an outline behind it.

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
        ax.bar(
            x + offset,
            np.nan_to_num([row[j] for row in info.returned]),
            width,
            fill=False,
            edgecolor=_KIND_COLORS.get(kind, "#8172b3"),
            linestyle="--",
        )
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
    ax.set_ylabel("share of queries with a relevant item (hit)")
    ax.set_title(
        f"Retrieval hit rate by query kind (outline: returned, score >= {info.threshold:g})"
    )
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
