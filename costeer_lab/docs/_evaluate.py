"""Retrieval quality on a labelled query set: recall@k and mean reciprocal rank (MRR).

A labelled query names the sections that answer it, as ``(source, section title)`` pairs; a
retrieved chunk is relevant when its ``source`` and ``section_title`` metadata match one. The
query files are YAML lists of ``{query, relevant: [{source, section}, ...]}``.

Example:
    >>> q = LabelledQuery("how to retry", (("guide", "Retries"),))
    >>> hits = [{"metadata": {"source": "guide", "section_title": "Intro"}},
    ...         {"metadata": {"source": "guide", "section_title": "Retries"}}]
    >>> score_hits(q, hits, k=5)
    (1.0, 0.5)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from costeer_lab.errors import InvalidInputError

if TYPE_CHECKING:
    from costeer_lab.docs._kb import DocumentKB

__all__ = [
    "LabelledQuery",
    "RetrievalScores",
    "evaluate_retrieval",
    "load_labelled_queries",
    "score_hits",
]


@dataclass(frozen=True)
class LabelledQuery:
    """A query and the ``(source, section title)`` pairs of the sections answering it."""

    query: str
    relevant: tuple[tuple[str, str], ...]


def load_labelled_queries(path: str | Path) -> list[LabelledQuery]:
    """Read a YAML query file.

    Raises:
        InvalidInputError: the file is not a list of ``{query, relevant}`` entries (the message
            names the entry).
    """
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list) or not data:
        raise InvalidInputError(f"{str(path)!r} must hold a non-empty YAML list of queries")
    out = []
    for i, entry in enumerate(data):
        try:
            relevant = tuple((str(r["source"]), str(r["section"])) for r in entry["relevant"])
            query = str(entry["query"])
        except (KeyError, TypeError):
            raise InvalidInputError(
                f"{str(path)!r}, entry {i}: expected {{query: str, relevant: "
                f"[{{source: str, section: str}}, ...]}}, got {entry!r:.100}"
            ) from None
        if not relevant or not query.strip():
            raise InvalidInputError(f"{str(path)!r}, entry {i}: empty query or relevant list")
        out.append(LabelledQuery(query, relevant))
    return out


def _key(hit: Mapping[str, Any]) -> tuple[str, str]:
    meta = hit.get("metadata") or {}
    return str(meta.get("source")), str(meta.get("section_title"))


def score_hits(q: LabelledQuery, hits: Sequence[Mapping[str, Any]], k: int) -> tuple[float, float]:
    """``(recall@k, reciprocal rank)`` of one ranked hit list (rank over all hits given)."""
    wanted = set(q.relevant)
    found = {_key(h) for h in hits[:k]} & wanted
    rr = next((1.0 / rank for rank, h in enumerate(hits, 1) if _key(h) in wanted), 0.0)
    return len(found) / len(wanted), rr


@dataclass(frozen=True)
class RetrievalScores:
    """Mean recall@k and MRR over queries, with the per-query values."""

    recall: float
    mrr: float
    per_query: tuple[tuple[float, float], ...]


def evaluate_retrieval(
    kb: DocumentKB,
    queries: Iterable[LabelledQuery],
    *,
    k: int = 5,
    depth: int = 10,
    mode: str = "hybrid",
    **retrieve_kw: Any,
) -> RetrievalScores:
    """Recall@``k`` and MRR@``depth`` of ``kb.retrieve`` in ``mode`` over ``queries``."""
    per = []
    for q in queries:
        hits = kb.retrieve(q.query, n_results=max(k, depth), mode=mode, **retrieve_kw)  # type: ignore[arg-type]
        per.append(score_hits(q, hits, k))
    if not per:
        raise InvalidInputError("evaluate_retrieval needs at least one query")
    recall = sum(r for r, _ in per) / len(per)
    mrr = sum(m for _, m in per) / len(per)
    return RetrievalScores(recall, mrr, tuple(per))
