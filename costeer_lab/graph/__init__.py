"""The typed CoSTEER knowledge graph: node kinds, plain graph functions, the stored graph.

Example:
    >>> import networkx as nx
    >>> from costeer_lab.graph import intersection
    >>> G = nx.Graph([("task1", "op:mean"), ("task1", "field:close"), ("task2", "op:mean")])
    >>> sorted(intersection(G, ["op:mean", "field:close"]))
    ['task1']
"""

from costeer_lab.graph._kinds import (
    COMPONENT,
    EDGE_HAS_COMPONENT,
    EDGE_HIT_ERROR,
    EDGE_IMPLEMENTS,
    EDGE_TRACE_OF,
    ERROR,
    NODE_KINDS,
    TASK_DESCRIPTION,
    TASK_SUCCESS_IMPLEMENT,
    TASK_TRACE,
    node_id,
)
from costeer_lab.graph._ops import (
    constrained_query,
    intersection,
    neighbors_within,
    nodes_of_kind,
    similar_nodes,
)
from costeer_lab.graph._stored import GraphWrite, KnowledgeGraph, collection_name

__all__ = [
    "COMPONENT",
    "EDGE_HAS_COMPONENT",
    "EDGE_HIT_ERROR",
    "EDGE_IMPLEMENTS",
    "EDGE_TRACE_OF",
    "ERROR",
    "NODE_KINDS",
    "TASK_DESCRIPTION",
    "TASK_SUCCESS_IMPLEMENT",
    "TASK_TRACE",
    "GraphWrite",
    "KnowledgeGraph",
    "collection_name",
    "constrained_query",
    "intersection",
    "neighbors_within",
    "node_id",
    "nodes_of_kind",
    "similar_nodes",
]
