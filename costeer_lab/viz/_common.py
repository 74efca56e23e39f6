"""Shared plotting helpers: axes creation, stable arm colours, PNG rendering.

Plot functions never call ``plt.show()``. With ``ax=None`` they create a figure through
``matplotlib.pyplot`` (so notebooks display it); code that renders many figures (the report, the
dashboard) builds a :class:`matplotlib.figure.Figure` itself and passes its axes.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["arm_colors", "arm_styles", "dodge", "figure_png", "new_axes", "png_data_uri"]

_PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip


def new_axes(ax: Axes | None, figsize: tuple[float, float] = (6.4, 4.0)) -> Axes:
    """``ax`` itself, or the axes of a new pyplot figure of ``figsize`` inches."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, created = plt.subplots(figsize=figsize, layout="constrained")
    return created


def arm_colors(arms: Sequence[str]) -> dict[str, str]:
    """A colour per arm, assigned in sorted-name order so every plot agrees.

    Example:
        >>> arm_colors(["rag", "no_knowledge"])
        {'no_knowledge': '#1f77b4', 'rag': '#ff7f0e'}
    """
    return {a: _PALETTE[i % len(_PALETTE)] for i, a in enumerate(sorted(set(arms)))}


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
_LINESTYLES = ("-", "--", "-.", ":")


def arm_styles(arms: Sequence[str]) -> dict[str, tuple[str, str]]:
    """A ``(marker, linestyle)`` per arm (sorted-name order), so curves that coincide stay
    distinguishable in print and for colour-blind readers.

    Example:
        >>> arm_styles(["rag", "no_knowledge"])
        {'no_knowledge': ('o', '-'), 'rag': ('s', '--')}
    """
    return {
        a: (_MARKERS[i % len(_MARKERS)], _LINESTYLES[i % len(_LINESTYLES)])
        for i, a in enumerate(sorted(set(arms)))
    }


def dodge(arms: Sequence[str], width: float = 0.18) -> dict[str, float]:
    """A small x offset per arm (centred on 0) so identical curves do not hide each other.

    Example:
        >>> dodge(["a", "b", "c"])
        {'a': -0.09, 'b': 0.0, 'c': 0.09}
    """
    names = sorted(set(arms))
    if len(names) < 2:
        return {a: 0.0 for a in names}
    step = width / (len(names) - 1)
    return {a: round(-width / 2 + i * step, 6) for i, a in enumerate(names)}


def figure_png(fig: Figure | Axes, *, dpi: int = 100) -> bytes:
    """Render a figure (or an axes' figure) to PNG bytes in memory, without software metadata."""
    figure = fig.get_figure() if isinstance(fig, Axes) else fig
    if not isinstance(figure, Figure):
        raise TypeError(f"expected a matplotlib Figure or Axes, got {type(fig).__name__}")
    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def png_data_uri(png: bytes) -> str:
    """``data:image/png;base64,...`` for embedding a PNG in HTML."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
