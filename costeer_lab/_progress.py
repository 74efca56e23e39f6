"""Progress bars that stay readable in a terminal, a notebook and an exported notebook.

In a terminal (and anywhere outside a Jupyter kernel) :func:`progress_bar` is a plain text
``tqdm`` bar on stderr. In a Jupyter kernel a text bar becomes dozens of stderr outputs once the
notebook is saved or exported (every redraw is its own output, ``\\r`` is not replayed), and
tqdm's widget bar is saved as a stale "0 %" placeholder. There the bars of one cell share a
single ``text/plain`` output updated in place (a display id): one line per finished bar, plus
the running one; a saved or exported notebook holds exactly that final text.

Example:
    >>> bar = progress_bar(total=2, desc="demo", disable=True)
    >>> bar.update(2); bar.close()
"""

from __future__ import annotations

import sys
import threading
from typing import Any, ClassVar

from tqdm import tqdm

__all__ = ["in_kernel", "progress_bar"]


def in_kernel() -> bool:
    """Whether this process is a Jupyter kernel (IPython with a kernel attached)."""
    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class _CellBoard:
    """The one progress output of the running cell: finished lines and the current line."""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _cell: ClassVar[object] = None
    _handle: ClassVar[Any] = None
    _done: ClassVar[list[str]] = []

    @classmethod
    def show(cls, line: str, *, finished: bool = False) -> None:
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        cell = getattr(shell, "execution_count", None)
        with cls._lock:
            if cell != cls._cell or cls._handle is None:
                cls._cell, cls._done, cls._handle = cell, [], None
            lines = [*cls._done, line] if line else list(cls._done)
            if finished and line:
                cls._done = [*cls._done, line]
            if not lines:
                return
            data = {"text/plain": "\n".join(lines)}
            if cls._handle is None:
                cls._handle = display(data, raw=True, display_id=True)  # type: ignore[no-untyped-call]
            else:
                cls._handle.update(data, raw=True)


class _BarLine:
    """A file for tqdm: keeps the bar's last non-blank line and shows it on the cell board."""

    encoding = "utf-8"

    def __init__(self) -> None:
        self.line = ""

    def write(self, text: str) -> int:
        last = next((p.strip() for p in reversed(text.split("\r")) if p.strip()), "")
        if last and last != self.line:
            self.line = last
            _CellBoard.show(last)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class _KernelBar(tqdm):  # type: ignore[type-arg]
    """A tqdm bar drawn on the cell board; its final line stays when it closes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._line = _BarLine()
        self._closed_line = False
        kwargs["file"] = self._line
        kwargs.setdefault("ncols", 100)
        super().__init__(*args, **kwargs)

    def close(self) -> None:
        if not self.disable and not self._closed_line:
            self.refresh()  # the final counts, even when the last update was rate-limited
        super().close()
        if not self._closed_line and self._line.line:
            self._closed_line = True
            _CellBoard.show(self._line.line, finished=True)


def progress_bar(**kwargs: Any) -> tqdm:  # type: ignore[type-arg]
    """A tqdm bar (same arguments): text on stderr, or the cell's progress output in Jupyter."""
    if in_kernel() and not kwargs.get("disable", False) and "file" not in kwargs:
        return _KernelBar(**kwargs)
    return tqdm(**kwargs)
