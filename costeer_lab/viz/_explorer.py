"""Widgets over a knowledge base: the knowledge-graph explorer and the query playground.

Both read a store (a ``.db`` path, URL or :class:`BaseStore`), show everything as HTML panes,
and carry a static fallback (:mod:`costeer_lab.viz._static_fallback`): a saved or exported
notebook (nbconvert, a repository viewer) still shows what they showed.

Example:
    >>> from costeer_lab.store import NodeRecord, SQLiteStore
    >>> st = SQLiteStore(":memory:")
    >>> st.put_nodes([NodeRecord("td:1", "task_description", "name: add",
    ...     {"task": {"id": "t1", "name": "add", "description": "Add two numbers."}})])
    >>> ex = knowledge_explorer(st)
    >>> ex.task.value, "Add two numbers." in ex.detail.value
    ('t1', True)
    >>> "text/html" in ex._repr_mimebundle_()
    True
"""

from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as widgets

from costeer_lab.store import BaseStore, open_existing_store
from costeer_lab.viz._explorer_data import (
    TaskKnowledge,
    get_task_knowledge,
    knowledge_label,
    list_tasks,
)
from costeer_lab.viz._static_fallback import StaticFallback

__all__ = [
    "KnowledgeExplorer",
    "QueryPlayground",
    "StaticFallback",
    "knowledge_explorer",
    "query_playground",
    "task_knowledge_html",
]

_PRE = (
    "<pre style='max-height:18em;overflow:auto;background:#f6f8fa;padding:6px;"
    "white-space:pre-wrap;font-size:85%'>{}</pre>"
)


def _store(store: BaseStore | str | Path) -> BaseStore:
    return store if isinstance(store, BaseStore) else open_existing_store(store)


def task_knowledge_html(k: TaskKnowledge) -> str:
    """The explorer's detail pane for one task (also usable on its own)."""
    parts = [
        f"<h4 style='margin:4px 0'>{html.escape(k.name)} "
        f"<small>({html.escape(k.task_id)})</small></h4>",
        f"<p>{html.escape(k.description[:600])}</p>",
        f"<p><b>{len(k.traces)}</b> attempt trace(s), <b>{len(k.errors)}</b> error(s), "
        f"<b>{len(k.components)}</b> component(s), successful implementation: "
        f"<b>{'yes' if k.success_code is not None else 'no'}</b></p>",
    ]
    if k.components:
        chips = " ".join(
            f"<code style='background:#eef;padding:1px 4px'>{html.escape(c)}</code>"
            for c in k.components
        )
        parts.append(f"<p>Components: {chips}</p>")
    for i, t in enumerate(k.traces, 1):
        verdict = (
            "<span style='color:#1a7f37'>passed</span>"
            if t.success
            else "<span style='color:#cf222e'>failed</span>"
        )
        parts.append(f"<h5 style='margin:6px 0'>Attempt trace {i}: {verdict}</h5>")
        if t.errors:
            parts.append("<p>Errors: " + "; ".join(html.escape(e) for e in t.errors) + "</p>")
        parts.append(_PRE.format(html.escape(t.code)))
        if t.feedback:
            parts.append(
                f"<details><summary>feedback</summary>{_PRE.format(html.escape(t.feedback))}</details>"
            )
    if k.errors:
        items = "".join(f"<li><code>{html.escape(e)}</code></li>" for e in k.errors)
        parts.append(f"<h5 style='margin:6px 0'>Errors hit</h5><ul>{items}</ul>")
    if k.success_code is not None:
        parts.append("<h5 style='margin:6px 0'>Successful implementation</h5>")
        parts.append(_PRE.format(html.escape(k.success_code)))
    return "\n".join(parts)


class KnowledgeExplorer(StaticFallback, widgets.VBox):  # type: ignore[misc]
    """Pick a task → its traces, errors, components and successful implementation.

    Attributes:
        task: Dropdown of the KB's tasks (label ``name (id)``, value the task id).
        detail: HTML pane for the chosen task.
    """

    def __init__(self, store: BaseStore | str | Path) -> None:
        self.store = _store(store)
        tasks = list_tasks(self.store)
        options = [(t.label, t.task_id) for t in tasks]
        self.task = widgets.Dropdown(
            options=options, description="task", layout=widgets.Layout(width="36em")
        )
        self.detail = widgets.HTML()
        header = widgets.HTML(
            f"<b>Knowledge-graph explorer</b> — {len(tasks)} task(s) in "
            f"<code>{html.escape(getattr(self.store, 'path', '') or '')}</code>"
        )
        super().__init__([header, self.task, self.detail])
        self.add_class("costeer-knowledge-explorer")
        self.task.observe(lambda _: self.refresh(), names="value")
        self.refresh()

    def refresh(self) -> None:
        """Show the chosen task (or say the KB holds none)."""
        if self.task.value is None:
            self.detail.value = "<p>This knowledge base describes no task yet.</p>"
        else:
            knowledge = get_task_knowledge(self.store, self.task.value)
            self.detail.value = task_knowledge_html(knowledge)
        self._update_snapshot()

    def static_html(self) -> str:
        return f"<div><b>Knowledge-graph explorer</b>{self.detail.value}</div>"


class QueryPlayground(StaticFallback, widgets.VBox):  # type: ignore[misc]
    """Type a task description or an error → what each query kind returns, with scores.

    Attributes:
        text: the query text; k: results per kind; results: HTML pane of one table per kind.
    """

    def __init__(self, store: BaseStore | str | Path, *, text: str = "", k: int = 3) -> None:
        from costeer_lab.graph import NODE_KINDS, collection_name
        from costeer_lab.knowledge._kb_v1 import KB1_COLLECTION

        self.store = _store(store)
        names = {kind: collection_name(kind) for kind in NODE_KINDS} | {"kb1": KB1_COLLECTION}
        self.kinds = [kd for kd, c in names.items() if self.store.collection_info(c) is not None]
        self.text = widgets.Textarea(
            value=text,
            placeholder="a task description or an error message",
            layout=widgets.Layout(width="40em", height="4em"),
        )
        self.k = widgets.BoundedIntText(value=k, min=1, max=50, description="k")
        self.button = widgets.Button(description="search", button_style="primary")
        self.results = widgets.HTML()
        super().__init__(
            [
                widgets.HTML("<b>Query playground</b>"),
                self.text,
                widgets.HBox([self.k, self.button]),
                self.results,
            ]
        )
        self.add_class("costeer-query-playground")
        self.button.on_click(lambda _: self.search())
        self.search()

    def search(self) -> None:
        """Run the query against every kind with vectors and show the tables."""
        self.results.value = self._search_html()
        self._update_snapshot()

    def _search_html(self) -> str:
        from costeer_lab.knowledge import kb_search

        query = self.text.value.strip()
        if not query:
            return "<p>Type a query and press <i>search</i>.</p>"
        if not self.kinds:
            return "<p>This store holds no embedded knowledge.</p>"
        parts = []
        for kind in self.kinds:
            hits = kb_search(self.store, query, k=int(self.k.value), kind=kind)
            rows = "".join(
                f"<tr><td>{h['score']:.3f}</td>"
                f"<td>{html.escape(knowledge_label(self.store, h['id']))}</td>"
                f"<td>{html.escape(' '.join(str(h['content']).split())[:120])}</td></tr>"
                for h in hits
            )
            parts.append(
                f"<h5 style='margin:6px 0'>{html.escape(kind)} ({len(hits)})</h5>"
                "<table><tr><th>score</th><th>knowledge</th><th>content</th></tr>"
                f"{rows}</table>"
            )
        return "\n".join(parts)

    def static_html(self) -> str:
        q = html.escape(self.text.value)
        return f"<div><b>Query playground</b>: <i>{q}</i>{self.results.value}</div>"


def knowledge_explorer(store: BaseStore | str | Path) -> KnowledgeExplorer:
    """A :class:`KnowledgeExplorer` over a KB store (a ``.db`` path must exist)."""
    return KnowledgeExplorer(store)


def query_playground(store: BaseStore | str | Path, text: str = "", k: int = 3) -> QueryPlayground:
    """A :class:`QueryPlayground` over a KB store, optionally with a first query."""
    return QueryPlayground(store, text=text, k=k)
