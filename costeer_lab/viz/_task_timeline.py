"""A task context's timeline: actions (squares, green when they succeeded) and the evidence
each yielded (dots in one lane per evidence type, sized and shaded by confidence)."""

from __future__ import annotations

from typing import NamedTuple

from matplotlib.axes import Axes

from costeer_lab.context import TaskContext, timeline
from costeer_lab.viz._common import new_axes

__all__ = ["TaskTimelineInfo", "TimelinePoint", "_get_task_timeline_info", "plot_task_timeline"]

ACTION_LANE = "action"


class TimelinePoint(NamedTuple):
    """One record drawn: its position (``order`` of record), lane, id, type and outcome
    (``success`` for actions, ``confidence`` for evidence)."""

    order: int
    lane: str
    id: str
    type: str
    success: bool | None
    confidence: float | None


class TaskTimelineInfo(NamedTuple):
    """What :func:`plot_task_timeline` draws: lanes bottom-up (``action`` first, then the
    evidence types present, sorted), the points, and the verdict of the title."""

    task_id: str
    verdict: str
    lanes: tuple[str, ...]
    points: tuple[TimelinePoint, ...]


def _get_task_timeline_info(ctx: TaskContext) -> TaskTimelineInfo:
    """The data drawn by :func:`plot_task_timeline` (from ``costeer_lab.context.timeline``)."""
    rows = timeline(ctx)
    types = sorted({r["type"] for r in rows if r["kind"] == "evidence"})
    points = tuple(
        TimelinePoint(
            i,
            ACTION_LANE if r["kind"] == "action" else r["type"],
            r["id"],
            r["type"],
            r["success"],
            r["confidence"],
        )
        for i, r in enumerate(rows)
    )
    if ctx.complete:
        verdict = "completed"
    elif ctx.stop_reason:
        verdict = f"stopped by {ctx.stop_reason.split(':', 1)[0]}"
    else:
        verdict = "open"
    return TaskTimelineInfo(ctx.task_id, verdict, (ACTION_LANE, *types), points)


def plot_task_timeline(ctx: TaskContext, *, ax: Axes | None = None) -> Axes:
    """Draw a task's actions and evidence in the order they were recorded.

    Example:
        >>> from matplotlib.figure import Figure
        >>> from costeer_lab.context import Output, RichMemoryManager
        >>> mm = RichMemoryManager(":memory:")
        >>> _ = mm.create_task("What is 6 * 7?", task_id="q")
        >>> ctx = mm.add_action("q", "answer", {}, Output(True, "42"))
        >>> ax = plot_task_timeline(ctx, ax=Figure().subplots())
        >>> [t.get_text() for t in ax.get_yticklabels()], ax.get_title()
        (['action', 'synthesis'], 'q: completed')
    """
    info = _get_task_timeline_info(ctx)
    ax = new_axes(ax, figsize=(9.0, 0.6 * len(info.lanes) + 1.4))
    for p in info.points:
        y = info.lanes.index(p.lane)
        if p.lane == ACTION_LANE:
            color = "tab:green" if p.success else "tab:red"
            ax.scatter(p.order, y, marker="s", s=140, color=color, zorder=3)
            label = p.type
        else:
            conf = p.confidence or 0.0
            ax.scatter(p.order, y, s=40 + 160 * conf, color="tab:blue", alpha=0.35 + 0.65 * conf)
            label = f"{conf:.1f}"
        ax.annotate(
            label, (p.order, y), textcoords="offset points", xytext=(0, 9), ha="center",
            fontsize=8,
        )  # fmt: skip
    ax.set_yticks(range(len(info.lanes)), info.lanes)
    ax.set_ylim(-0.6, len(info.lanes) - 0.3)
    ax.set_xlabel("order of record (squares: actions; dots: evidence, sized by confidence)")
    ax.set_title(f"{info.task_id}: {info.verdict}")
    ax.grid(axis="x", alpha=0.3)
    return ax
