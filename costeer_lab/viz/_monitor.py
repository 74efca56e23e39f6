"""A dashboard that follows a running experiment: it polls the run's knowledge bases for
committed steps (:func:`~costeer_lab.experiment.live_results`) and redraws when rows arrive.

Example:
    >>> import tempfile
    >>> mon = follow_experiment(tempfile.mkdtemp(), interval_s=None)
    >>> mon.poll(), mon.n_rows, "waiting" in mon.status.value
    (False, 0, True)
"""

from __future__ import annotations

import html
import os
import threading
from pathlib import Path

import ipywidgets as widgets

from costeer_lab.experiment import live_results, load_results
from costeer_lab.viz._static_fallback import StaticFallback
from costeer_lab.viz._widgets import ResultsDashboard

__all__ = ["ExperimentMonitor", "follow_experiment"]


class ExperimentMonitor(StaticFallback, widgets.VBox):  # type: ignore[misc]
    """A status line and a :class:`ResultsDashboard` over the rows committed so far.

    Attributes:
        status: HTML line (rows, arms, finished or not). dashboard: the current dashboard or
        ``None`` before the first step. finished: ``results.parquet`` has been written.
    """

    def __init__(self, out_dir: str | os.PathLike[str], *, n_boot: int = 200) -> None:
        self.out_dir = Path(out_dir)
        self.n_boot = n_boot
        self.n_rows = 0
        self.finished = False
        self.dashboard: ResultsDashboard | None = None
        self.status = widgets.HTML()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        super().__init__([self.status])
        self._set_status()

    def _set_status(self) -> None:
        where = html.escape(str(self.out_dir))
        if self.n_rows == 0:
            self.status.value = f"<p>waiting for the first step in <code>{where}</code> …</p>"
            return
        state = "finished" if self.finished else "running"
        self.status.value = (
            f"<p><b>{state}</b>: {self.n_rows} attempt(s) in <code>{where}</code></p>"
        )

    def poll(self) -> bool:
        """Read the run once; redraw when there are new rows. Returns whether it redrew."""
        final = (self.out_dir / "results.parquet").is_file()
        rows = load_results(self.out_dir) if final else live_results(self.out_dir)
        changed = len(rows) != self.n_rows or (final and not self.finished)
        self.finished = final
        if changed and len(rows):
            old = self.dashboard
            board = ResultsDashboard(rows, n_boot=self.n_boot)
            if old is not None:  # keep the reader's choices
                if old.arm.value in board.arm.options:
                    board.arm.value = old.arm.value
                board.metric.value = old.metric.value
            self.dashboard = board
            self.children = [self.status, board]
        self.n_rows = len(rows)
        self._set_status()
        self._update_snapshot()
        return changed and bool(len(rows))

    def start(self, interval_s: float = 2.0) -> None:
        """Poll every ``interval_s`` seconds in a background thread until the run finishes."""

        def loop() -> None:
            while not self._stop.is_set() and not self.finished:
                self.poll()
                self._stop.wait(interval_s)

        self._thread = threading.Thread(target=loop, name="costeer-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop polling (the last view stays)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def static_html(self) -> str:
        inner = self.dashboard.static_html() if self.dashboard is not None else ""
        return f"<div>{self.status.value}{inner}</div>"


def follow_experiment(
    out_dir: str | os.PathLike[str], *, interval_s: float | None = 2.0, n_boot: int = 200
) -> ExperimentMonitor:
    """An :class:`ExperimentMonitor` over ``out_dir``, polling every ``interval_s`` seconds
    (``None``: call :meth:`ExperimentMonitor.poll` yourself)."""
    monitor = ExperimentMonitor(out_dir, n_boot=n_boot)
    if interval_s is not None:
        monitor.start(interval_s)
    return monitor
