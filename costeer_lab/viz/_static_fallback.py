"""Widgets that survive a saved or exported notebook: a static snapshot next to the live view.

A notebook executed by nbclient (``jupyter nbconvert --execute``) or saved with its widget state
is exported with the widget view preferred over any ``text/html`` in the same output, and that
view is drawn by JavaScript fetched from the web: offline, or in a viewer without it, the widget
is blank. So a :class:`StaticFallback` widget displays two outputs:

1. the widget view, whose bundle also carries ``text/html`` (:meth:`static_html`, marked
   ``costeer-static``) for exporters that have no widget state;
2. a snapshot: the same HTML in its own output, captioned, with a style rule that hides it when
   the output before it shows a drawn widget (``.widget-box``) or the bundle's own HTML, so a
   live notebook and a state-less export show it once. Viewers that drop styles show both.

The snapshot is updated in place (a display id) whenever the widget redraws, so a notebook
saved after exploring shows the last view.

Example:
    >>> class Card(StaticFallback):
    ...     def static_html(self) -> str:
    ...         return "<p>hello</p>"
    >>> "costeer-snapshot" in snapshot_html(Card().static_html())
    True
"""

from __future__ import annotations

from typing import Any

__all__ = ["SNAPSHOT_CLASS", "StaticFallback", "snapshot_html"]

#: Class of the snapshot output's outer element.
SNAPSHOT_CLASS = "costeer-snapshot"

_HIDE = (
    "<style>.jp-OutputArea-child:has(.widget-box,.costeer-static)+.jp-OutputArea-child "
    f".{SNAPSHOT_CLASS},.output_area:has(.widget-box,.costeer-static)+.output_area "
    f".{SNAPSHOT_CLASS}{{display:none}}</style>"
)


def snapshot_html(inner: str) -> str:
    """The snapshot output: a caption, ``inner`` and the rule that hides it next to a widget."""
    return (
        f'{_HIDE}<div class="{SNAPSHOT_CLASS}"><p style="color:#666;font-size:85%;margin:2px 0">'
        "Snapshot of the widget as last drawn (the widget itself needs a running kernel):</p>"
        f"{inner}</div>"
    )


class StaticFallback:
    """Mixin: the notebook output of a widget also holds ``text/html`` (:meth:`static_html`),
    and displaying it adds a snapshot output that survives export (see the module doc)."""

    _snapshot: Any = None

    def static_html(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data: dict[str, Any] = dict(super()._repr_mimebundle_(**kwargs) or {})  # type: ignore[misc]
        data["text/plain"] = f"<{type(self).__name__}: run the notebook to interact>"
        data["text/html"] = f'<div class="costeer-static">{self.static_html()}</div>'
        return data

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)  # type: ignore[no-untyped-call]
        snapshot = {"text/html": snapshot_html(self.static_html())}
        self._snapshot = display(snapshot, raw=True, display_id=True)  # type: ignore[no-untyped-call]

    def _update_snapshot(self) -> None:
        """Redraw the snapshot output after the widget changed (no-op before it is shown)."""
        if self._snapshot is not None:
            self._snapshot.update({"text/html": snapshot_html(self.static_html())}, raw=True)
