"""Knowledge-graph drawing and the self-contained HTML export."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

from costeer_lab.errors import InvalidInputError
from costeer_lab.viz import (
    DEFAULT_KIND_COLORS,
    NODE_KINDS,
    draw_knowledge_graph,
    export_graph_html,
    figure_png,
    get_knowledge_graph_info,
)

PNG = b"\x89PNG\r\n\x1a\n"


def _graph() -> nx.Graph:
    G = nx.Graph()
    G.add_node("task:MA5", kind="task_description", name="MA5 moving average")
    G.add_node("impl:MA5", kind="task_success_implement")
    G.add_node("trace:MA5#1", kind="task_trace")
    G.add_node("comp:mean", kind="component", label="rolling mean")
    G.add_node("comp:<div>", kind="component")
    G.add_node("err:KeyError", kind="error")
    G.add_node("odd", kind="experimental")
    G.add_edges_from(
        [
            ("task:MA5", "impl:MA5"),
            ("task:MA5", "trace:MA5#1"),
            ("task:MA5", "comp:mean"),
            ("trace:MA5#1", "err:KeyError"),
            ("comp:<div>", "comp:mean"),
        ]
    )
    return G


def test_info_counts_kinds_in_canonical_order() -> None:
    info = get_knowledge_graph_info(_graph())
    assert (info.n_nodes, info.n_edges) == (7, 5)
    assert info.kind_counts == (
        ("component", 2),
        ("task_description", 1),
        ("task_trace", 1),
        ("task_success_implement", 1),
        ("error", 1),
        ("experimental", 1),
    )
    assert set(DEFAULT_KIND_COLORS) == set(NODE_KINDS)
    with pytest.raises(InvalidInputError, match="expected a networkx graph"):
        get_knowledge_graph_info({"a": 1})


def test_draw_colours_nodes_by_kind() -> None:
    fig = Figure()
    ax = draw_knowledge_graph(_graph(), ax=fig.subplots(), kinds_colors={"error": "#ff0000"})
    assert ax.get_title() == "Knowledge graph: 7 nodes, 5 edges"
    box = ax.get_legend()
    assert box is not None
    legend = [t.get_text() for t in box.get_texts()]
    assert legend[0] == "component (2)" and legend[-1] == "experimental (1)"
    # one scatter collection per kind; the error node is red, kinds without a colour are grey
    nodes = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(nodes) == 6
    faces = [tuple(np.asarray(c.get_facecolor())[0][:3]) for c in nodes]
    assert faces[4] == (1.0, 0.0, 0.0) and faces[5] == (0.6, 0.6, 0.6)
    labels = {t.get_text() for t in ax.texts}
    assert {"MA5 moving average", "rolling mean", "odd"} <= labels
    assert figure_png(fig).startswith(PNG)


def test_draw_directed_and_empty_graphs() -> None:
    D = nx.DiGraph(_graph())
    ax = draw_knowledge_graph(D, ax=Figure().subplots(), with_labels=False)
    assert len(ax.texts) == 0
    ax = draw_knowledge_graph(nx.Graph(), ax=Figure().subplots())
    assert [t.get_text() for t in ax.texts] == ["empty graph"]
    assert draw_knowledge_graph(_graph()).get_figure() is not None  # ax=None


def test_layout_is_seeded() -> None:
    a = figure_png(draw_knowledge_graph(_graph(), ax=Figure().subplots(), seed=3))
    b = figure_png(draw_knowledge_graph(_graph(), ax=Figure().subplots(), seed=3))
    assert a == b


def test_export_graph_html(tmp_path: Path) -> None:
    out = export_graph_html(_graph(), tmp_path / "sub" / "kg.html", title="KG <test>")
    assert out == tmp_path / "sub" / "kg.html"
    page = out.read_text(encoding="utf-8")
    assert "<title>KG &lt;test&gt;</title>" in page
    assert "comp:&lt;div&gt;" in page and "<div>" not in page.split("<body>")[1].replace(
        "comp:&lt;div&gt;", ""
    )
    assert "http://" not in page and "https://" not in page and "<script" not in page
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 1 and base64.b64decode(images[0]).startswith(PNG)
    assert page.count("<tr><td>") == 7
    assert "<td>task:MA5</td><td>task_description</td><td>3</td>" in page
    assert [p.name for p in out.parent.iterdir()] == ["kg.html"]


def test_export_graph_html_limits_rows(tmp_path: Path) -> None:
    G = nx.path_graph(30)
    nx.set_node_attributes(G, "component", "kind")
    page = export_graph_html(G, tmp_path / "big.html", max_rows=10).read_text()
    assert page.count("<tr><td>") == 10 and "Showing 10 of 30 nodes." in page
