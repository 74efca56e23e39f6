"""Graph operations as plain functions over a networkx graph whose nodes carry a ``kind``.

Similarity search by content goes through a :class:`~costeer_lab.index.VectorCollection` (one per
node kind, FAISS underneath), never through a Python loop over nodes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import networkx as nx

from costeer_lab.errors import InvalidInputError, NotFoundError

if TYPE_CHECKING:
    from costeer_lab.index import VectorCollection

__all__ = [
    "constrained_query",
    "intersection",
    "neighbors_within",
    "nodes_of_kind",
    "similar_nodes",
]


def _kinds(kinds: str | Collection[str] | None) -> frozenset[str] | None:
    if kinds is None:
        return None
    return frozenset([kinds]) if isinstance(kinds, str) else frozenset(kinds)


def _check_node(G: nx.Graph, node: str) -> None:
    if node not in G:
        raise NotFoundError(f"node {node!r:.80} is not in the graph ({G.number_of_nodes()} nodes)")


def nodes_of_kind(G: nx.Graph, kind: str) -> list[str]:
    """Ids of the nodes of one kind, in insertion order.

    Example:
        >>> G = nx.Graph(); G.add_node("a", kind="error"); G.add_node("b", kind="component")
        >>> nodes_of_kind(G, "error")
        ['a']
    """
    return [n for n, k in G.nodes(data="kind") if k == kind]


def neighbors_within(
    G: nx.Graph, node: str, depth: int = 1, kinds: str | Collection[str] | None = None
) -> dict[str, int]:
    """Nodes at most ``depth`` steps from ``node`` (itself excluded) → their distance.

    Args:
        G: the graph.
        node: start node.
        depth: maximum number of steps (>= 1).
        kinds: keep only nodes of these kinds (paths may pass through any kind).

    Raises:
        NotFoundError: ``node`` is not in ``G``.

    Example:
        >>> G = nx.path_graph(["a", "b", "c"]); nx.set_node_attributes(G, "component", "kind")
        >>> neighbors_within(G, "a", depth=2)
        {'b': 1, 'c': 2}
    """
    _check_node(G, node)
    if depth < 1:
        raise InvalidInputError(f"depth must be >= 1, got {depth}")
    wanted = _kinds(kinds)
    kind_of = G.nodes
    if depth == 1:
        found = {n: 1 for n in G.adj[node]}
    else:
        found = dict(nx.single_source_shortest_path_length(G, node, cutoff=depth))
    found.pop(node, None)
    if wanted is None:
        return found
    return {n: d for n, d in found.items() if kind_of[n].get("kind") in wanted}


def intersection(
    G: nx.Graph,
    starts: Iterable[str],
    depth: int = 1,
    kinds: str | Collection[str] | None = None,
) -> set[str]:
    """Nodes within ``depth`` steps of *every* start node (starts themselves excluded).

    Smaller neighbourhoods are intersected first, so the cost follows the rarest start.

    Example:
        >>> G = nx.Graph([("t1", "c1"), ("t1", "c2"), ("t2", "c1")])
        >>> sorted(intersection(G, ["c1", "c2"]))
        ['t1']
    """
    start_list = list(dict.fromkeys(starts))
    if not start_list:
        return set()
    for s in start_list:
        _check_node(G, s)
    if depth == 1:
        hoods: list[Collection[str]] = sorted((G.adj[s] for s in start_list), key=len)
    else:
        hoods = sorted((neighbors_within(G, s, depth) for s in start_list), key=len)
    result = set(hoods[0])
    for hood in hoods[1:]:
        result.intersection_update(hood)
        if not result:
            break
    result.difference_update(start_list)
    wanted = _kinds(kinds)
    if wanted is not None:
        result = {n for n in result if G.nodes[n].get("kind") in wanted}
    return result


def constrained_query(
    G: nx.Graph,
    starts: Iterable[str],
    *,
    kinds: str | Collection[str] | None = None,
    max_depth: int = 1,
    limit: int | None = None,
    require_all: bool = False,
    where: Mapping[str, Any] | None = None,
) -> list[tuple[str, int]]:
    """Nodes reachable from the starts, constrained by kind, distance, attributes and count.

    Args:
        G: the graph.
        starts: start nodes.
        kinds: keep only these node kinds.
        max_depth: maximum distance from a start.
        limit: keep at most this many (closest first, ties by id).
        require_all: reachable from every start (intersection) instead of any (union).
        where: node attributes that must equal these values.

    Returns:
        ``(node, distance)`` pairs, closest first; distance is the minimum over starts.

    Example:
        >>> G = nx.Graph([("t1", "c1"), ("t2", "c1")])
        >>> nx.set_node_attributes(G, {"t1": "task", "t2": "task", "c1": "component"}, "kind")
        >>> constrained_query(G, ["t1"], kinds="task", max_depth=2)
        [('t2', 2)]
    """
    start_list = list(dict.fromkeys(starts))
    best: dict[str, int] = {}
    keep: set[str] | None = None
    for s in start_list:
        hood = neighbors_within(G, s, max_depth, kinds)
        keep = set(hood) if keep is None else keep & hood.keys() if require_all else keep
        for n, d in hood.items():
            if d < best.get(n, max_depth + 1):
                best[n] = d
    if require_all and keep is not None:
        best = {n: d for n, d in best.items() if n in keep}
    for s in start_list:
        best.pop(s, None)
    if where:
        best = {
            n: d for n, d in best.items() if all(G.nodes[n].get(a) == v for a, v in where.items())
        }
    ordered = sorted(best.items(), key=lambda item: (item[1], item[0]))
    return ordered if limit is None else ordered[: max(limit, 0)]


def similar_nodes(
    collection: VectorCollection,
    text: str,
    k: int,
    *,
    filter: Collection[str] | None = None,
) -> list[tuple[str, float]]:
    """The ``k`` nodes of one kind whose content is most similar to ``text`` (FAISS search).

    Args:
        collection: the vector collection of that node kind.
        text: query text.
        k: number of results.
        filter: only these node ids are ranked (applied before ranking).

    Example:
        >>> from costeer_lab.embed import get_embedder
        >>> from costeer_lab.index import VectorCollection
        >>> from costeer_lab.store import get_store
        >>> col = VectorCollection(get_store(":memory:"), "kg:error", get_embedder("hashing"))
        >>> col.upsert_texts(["e1", "e2"], ["KeyError: <str>", "ZeroDivisionError: division"])
        >>> similar_nodes(col, "KeyError: <str>", 1)[0][0]
        'e1'
    """
    if len(collection) == 0 or k <= 0:
        return []
    res = collection.search_text(text, k, filter=filter)
    return list(zip(res.ids, res.scores, strict=True))
