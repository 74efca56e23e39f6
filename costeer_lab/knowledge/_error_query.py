"""The error query: fixes of an error fingerprint from tasks that hit it and later succeeded."""

from __future__ import annotations

from costeer_lab.graph import ERROR
from costeer_lab.knowledge._attempts import attempt_errors
from costeer_lab.knowledge._kb_records import Fix
from costeer_lab.knowledge._kb_v2 import KnowledgeBaseV2
from costeer_lab.records import SingleFeedback

__all__ = ["error_fix_candidates", "similar_error_fixes"]


def error_fix_candidates(
    kb: KnowledgeBaseV2,
    own_td: str,
    feedback: SingleFeedback,
    limit: int,
    similarity: float,
) -> list[tuple[Fix, float]]:
    """``(fix, score)`` for the errors of ``feedback``, newest first, one per fixed task.

    For each fingerprint of the feedback (see :func:`attempt_errors`) the error node with the
    same fingerprint gives its fixes (score 1.0); when it has none and ``similarity < 1``, the
    most similar stored error with fixes and cosine ``>= similarity`` gives them (score = the
    cosine). Fixes of the querying task itself are skipped; at most ``limit`` are returned.
    Cost: a dict look-up per fingerprint plus at most ``limit`` fixes visited.
    """
    if not kb.error_fixes:
        return []
    found: dict[str, tuple[Fix, float]] = {}  # success node -> (fix, score)
    for fp, _line in attempt_errors(feedback):
        fixes, score = kb.error_fixes.get(kb.error_id(fp), []), 1.0
        if not fixes and similarity < 1.0:
            fixes, score = similar_error_fixes(kb, fp, similarity)
        for fix in reversed(fixes):
            if len(found) >= limit:
                break
            if fix.td != own_td and fix.success not in found:
                found[fix.success] = (fix, score)
    return list(found.values())


def similar_error_fixes(
    kb: KnowledgeBaseV2, fp: str, similarity: float
) -> tuple[list[Fix], float]:
    """Fixes of the most similar stored error having any, if its cosine is >= ``similarity``."""
    col = kb.graph.collections[ERROR]
    if len(col) == 0:
        return [], 0.0
    res = col.index.search(kb.query_vector(fp), 5)
    for eid, sc in zip(res.ids, res.scores, strict=True):
        if sc < similarity:
            break
        if kb.error_fixes.get(eid):
            return kb.error_fixes[eid], float(sc)
    return [], 0.0
