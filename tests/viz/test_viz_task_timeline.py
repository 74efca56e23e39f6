"""The task timeline plot: exact data from a real context, rendering to PNG."""

from __future__ import annotations

from matplotlib.figure import Figure

from costeer_lab.context import Output, RichMemoryManager
from costeer_lab.viz import (
    TaskTimelineInfo,
    TimelinePoint,
    figure_png,
    get_task_timeline_info,
    plot_task_timeline,
)

CODE = (
    '"""Adds two numbers, returning their sum as an integer value."""\n'
    "def add(a, b):\n    return a + b\n"
)


def _context() -> RichMemoryManager:
    mm = RichMemoryManager(":memory:")
    mm.create_task("Implement add in Python", task_id="t")
    mm.add_action("t", "run_python", {"path": "x.py"}, Output(False, "exit code 1"))
    mm.add_action("t", "write_file", {"path": "add.py"}, Output(True, files={"add.py": CODE}))
    return mm


def test_info_lists_actions_and_evidence_in_order() -> None:
    ctx = _context().get_task("t")
    info = get_task_timeline_info(ctx)
    # the failed run blocks completion until another run passes
    assert info == TaskTimelineInfo(
        "t",
        "open",
        ("action", "code_implementation", "documentation", "execution", "file_creation"),
        (
            TimelinePoint(0, "action", "act-0001", "run_python", False, None),
            TimelinePoint(1, "execution", "ev-0001", "execution", None, 0.2),
            TimelinePoint(2, "action", "act-0002", "write_file", True, None),
            TimelinePoint(3, "file_creation", "ev-0002", "file_creation", None, 1.0),
            TimelinePoint(4, "code_implementation", "ev-0003", "code_implementation", None, 0.9),
            TimelinePoint(5, "documentation", "ev-0004", "documentation", None, 0.8),
        ),
    )


def test_verdicts_and_rendering() -> None:
    mm = _context()
    ctx = mm.add_action(
        "t", "run_python", {"path": "add.py"}, Output(True, "ok", metadata={"returncode": 0})
    )
    assert get_task_timeline_info(ctx).verdict == "completed"
    mm.create_task("Tidy", task_id="g", task_type="general_task")
    for _ in range(3):
        stuck = mm.add_action("g", "look", {}, Output(False))
    assert get_task_timeline_info(stuck).verdict == "stopped by repeated_action"
    ax = plot_task_timeline(ctx, ax=Figure().subplots())
    assert ax.get_title() == "t: completed"
    assert len(ax.collections) == len(ctx.actions) + len(ctx.evidence)
    assert figure_png(ax).startswith(b"\x89PNG\r\n\x1a\n")
    created = plot_task_timeline(stuck)  # ax=None makes a pyplot figure
    assert [t.get_text() for t in created.get_yticklabels()] == ["action"]
