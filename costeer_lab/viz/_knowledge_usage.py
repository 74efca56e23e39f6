"""The most used knowledge items: horizontal bars of usage, coloured by success-when-used."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple

import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment import knowledge_usage
from costeer_lab.viz._common import new_axes

__all__ = ["KnowledgeUsageInfo", "_get_knowledge_usage_info", "plot_knowledge_usage"]


class KnowledgeUsageInfo(NamedTuple):
    """The ``top_n`` most used items (most used first) with their success-when-used."""

    item_ids: tuple[str, ...]
    n_uses: tuple[int, ...]
    success_when_used: tuple[float, ...]
    arm: str | None
    source: str


def _get_knowledge_usage_info(
    results: pd.DataFrame,
    *,
    top_n: int = 15,
    arm: str | None = None,
    source: Literal["both", "retrieved", "used"] = "both",
) -> KnowledgeUsageInfo:
    """The data drawn by :func:`plot_knowledge_usage` (from :func:`knowledge_usage`)."""
    if not isinstance(top_n, int) or top_n < 1:
        raise InvalidInputError(f"top_n must be a positive int, got {top_n!r}")
    if arm is not None:
        arms = sorted(str(a) for a in results["arm"].unique())
        if arm not in arms:
            raise InvalidInputError(f"arm {arm!r} is not in the results (arms: {arms})")
        results = results[results["arm"] == arm]
    table = knowledge_usage(results, source=source, by_arm=False).head(top_n)
    return KnowledgeUsageInfo(
        item_ids=tuple(str(x) for x in table["item_id"]),
        n_uses=tuple(int(x) for x in table["n_uses"]),
        success_when_used=tuple(float(x) for x in table["success_when_used"]),
        arm=arm,
        source=source,
    )


def plot_knowledge_usage(
    results: pd.DataFrame,
    *,
    ax: Axes | None = None,
    top_n: int = 15,
    arm: str | None = None,
    source: Literal["both", "retrieved", "used"] = "both",
    labels: Mapping[str, str] | None = None,
) -> Axes:
    """Horizontal bars of the ``top_n`` most used items, coloured by success when used.

    ``labels`` maps item ids to tick labels (the report names the task a hashed graph node
    belongs to); other ids are shown shortened.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> from matplotlib.figure import Figure
        >>> ax = plot_knowledge_usage(example_results(), ax=Figure().subplots())
        >>> [t.get_text() for t in ax.get_yticklabels()]
        ['k1', 'k2']
    """
    info = _get_knowledge_usage_info(results, top_n=top_n, arm=arm, source=source)
    ax = new_axes(ax, figsize=(6.4, max(3.0, 0.3 * len(info.item_ids) + 1.5)))
    cmap, norm = colormaps["RdYlGn"], Normalize(0.0, 1.0)
    y = list(range(len(info.item_ids)))
    ax.barh(y, info.n_uses, color=[cmap(norm(s)) for s in info.success_when_used])
    names = labels or {}
    ax.set_yticks(y, [_short(names.get(i, i), 48 if i in names else 32) for i in info.item_ids])
    ax.invert_yaxis()
    ax.set_xlabel(f"rows using the item ({info.source})")
    scope = f"arm {info.arm!r}" if info.arm else "all arms"
    ax.set_title(f"Most used knowledge ({scope})")
    figure = ax.get_figure()
    if figure is not None:
        figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, label="success when used")
    if not info.item_ids:
        ax.text(
            0.5,
            0.5,
            "no knowledge was retrieved or used",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
    ax.grid(axis="x", alpha=0.3)
    return ax


def _short(item_id: str, width: int = 32) -> str:
    """A tick label for a knowledge id: ``kind:3f2a9c…`` stays readable, hashes are cut."""
    return item_id if len(item_id) <= width else item_id[: width - 1] + "…"
