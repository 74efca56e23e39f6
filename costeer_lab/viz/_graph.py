"""Drawing a typed knowledge graph and exporting it as one self-contained HTML page.

Nodes carry a ``kind`` attribute among :data:`NODE_KINDS`; a ``label`` or ``name`` attribute, when
present, is shown instead of the node id. The layout is a seeded spring layout.

Example:
    >>> import networkx as nx
    >>> G = nx.Graph()
    >>> G.add_node("c1", kind="component"); G.add_node("t1", kind="task_description")
    >>> G.add_edge("t1", "c1")
    >>> get_knowledge_graph_info(G).kind_counts
    (('component', 1), ('task_description', 1))
"""

from __future__ import annotations

import html
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import networkx as nx
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from costeer_lab._fs import atomic_write_bytes
from costeer_lab.errors import InvalidInputError
from costeer_lab.graph import NODE_KINDS
from costeer_lab.viz._common import figure_png, new_axes, png_data_uri

__all__ = [
    "DEFAULT_KIND_COLORS",
    "NODE_KINDS",
    "KnowledgeGraphInfo",
    "draw_knowledge_graph",
    "export_graph_html",
    "get_knowledge_graph_info",
]


DEFAULT_KIND_COLORS: dict[str, str] = {
    "component": "#55a868",
    "task_description": "#4c72b0",
    "task_trace": "#8172b3",
    "task_success_implement": "#ccb974",
    "error": "#c44e52",
}
_OTHER = "#999999"


class KnowledgeGraphInfo(NamedTuple):
    """Node and edge counts; kinds in :data:`NODE_KINDS` order, then other kinds sorted."""

    n_nodes: int
    n_edges: int
    kind_counts: tuple[tuple[str, int], ...]


def _kind(data: Mapping[str, Any]) -> str:
    return str(data.get("kind", "unknown"))


def _label(node: Any, data: Mapping[str, Any], width: int = 24) -> str:
    text = str(data.get("label") or data.get("name") or node)
    return text if len(text) <= width else text[: width - 1] + "…"


def get_knowledge_graph_info(G: nx.Graph) -> KnowledgeGraphInfo:
    """Counts drawn in the legend of :func:`draw_knowledge_graph`."""
    if not isinstance(G, nx.Graph):
        raise InvalidInputError(f"expected a networkx graph, got {type(G).__name__}")
    counts = Counter(_kind(d) for _, d in G.nodes(data=True))
    order = [k for k in NODE_KINDS if k in counts] + sorted(
        k for k in counts if k not in NODE_KINDS
    )
    return KnowledgeGraphInfo(
        G.number_of_nodes(), G.number_of_edges(), tuple((k, counts[k]) for k in order)
    )


def draw_knowledge_graph(
    G: nx.Graph,
    *,
    ax: Axes | None = None,
    kinds_colors: Mapping[str, str] = DEFAULT_KIND_COLORS,
    with_labels: bool | None = None,
    seed: int = 0,
) -> Axes:
    """Draw ``G`` with nodes coloured by their ``kind`` and a legend of kind counts.

    Args:
        G: a networkx graph (directed or not) whose nodes have a ``kind`` attribute.
        ax: axes to draw on; a new figure when None.
        kinds_colors: colour per kind; other kinds are grey.
        with_labels: draw node labels; by default only when the graph has at most 40 nodes.
        seed: seed of the spring layout.

    Example:
        >>> import networkx as nx
        >>> from matplotlib.figure import Figure
        >>> G = nx.path_graph(3); nx.set_node_attributes(G, "component", "kind")
        >>> draw_knowledge_graph(G, ax=Figure().subplots()).get_title()
        'Knowledge graph: 3 nodes, 2 edges'
    """
    info = get_knowledge_graph_info(G)
    ax = new_axes(ax, figsize=(8.0, 6.0))
    ax.set_axis_off()
    ax.set_title(f"Knowledge graph: {info.n_nodes} nodes, {info.n_edges} edges")
    if info.n_nodes == 0:
        ax.text(0.5, 0.5, "empty graph", ha="center", va="center", transform=ax.transAxes)
        return ax
    pos = nx.spring_layout(G, seed=seed)
    nx.draw_networkx_edges(G, pos, ax=ax, alpha=0.3, width=0.8)
    node_size = 300 if info.n_nodes <= 40 else max(20, 6000 // info.n_nodes)
    handles = []
    for kind, n in info.kind_counts:
        nodes = [v for v, d in G.nodes(data=True) if _kind(d) == kind]
        color = kinds_colors.get(kind, _OTHER)
        nx.draw_networkx_nodes(
            G, pos, nodelist=nodes, node_color=color, node_size=node_size, ax=ax
        )
        handles.append(
            Line2D([], [], marker="o", linestyle="", color=color, label=f"{kind} ({n})")
        )
    if with_labels if with_labels is not None else info.n_nodes <= 40:
        labels = {v: _label(v, d) for v, d in G.nodes(data=True)}
        nx.draw_networkx_labels(G, pos, labels=labels, font_size=7, ax=ax)
    ax.legend(handles=handles, loc="best", fontsize="small", title="node kind")
    return ax


def export_graph_html(
    G: nx.Graph,
    path: str | os.PathLike[str],
    *,
    title: str = "Knowledge graph",
    kinds_colors: Mapping[str, str] = DEFAULT_KIND_COLORS,
    max_rows: int = 1000,
    seed: int = 0,
) -> Path:
    """Write one self-contained HTML page: the drawing as an inline PNG and a table of nodes.

    The page loads nothing from elsewhere (no scripts, no external URLs). The file is replaced
    atomically. Returns the path written.
    """
    fig = Figure(figsize=(10.0, 7.5), layout="constrained")
    draw_knowledge_graph(G, ax=fig.subplots(), kinds_colors=kinds_colors, seed=seed)
    png = figure_png(fig)
    info = get_knowledge_graph_info(G)
    counts = "".join(f"<li>{html.escape(k)}: {n}</li>" for k, n in info.kind_counts)
    rows = []
    nodes = sorted(G.nodes(data=True), key=lambda item: (_kind(item[1]), str(item[0])))
    for node, data in nodes[:max_rows]:
        rows.append(
            f"<tr><td>{html.escape(str(node))}</td><td>{html.escape(_kind(data))}</td>"
            f"<td>{G.degree(node)}</td><td>{html.escape(_label(node, data, width=80))}</td></tr>"
        )
    more = f"<p>Showing {max_rows} of {info.n_nodes} nodes.</p>" if info.n_nodes > max_rows else ""
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:70em}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 6px;font-size:90%}}
img{{max-width:100%}}</style></head>
<body><h1>{html.escape(title)}</h1>
<p>{info.n_nodes} nodes, {info.n_edges} edges.</p><ul>{counts}</ul>
<img alt="knowledge graph drawing" src="{png_data_uri(png)}">
<h2>Nodes</h2>{more}
<table><thead><tr><th>id</th><th>kind</th><th>degree</th><th>label</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table>
</body></html>
"""
    return atomic_write_bytes(path, page.encode("utf-8"))
