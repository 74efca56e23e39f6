"""Similarity thresholds calibrated per embedder: the lowest cosine at which a match decision
reaches a stated precision on a labelled set, with the recall it keeps there.

The pattern memory's default threshold (``MemorySettings.pattern_threshold = "calibrated"``) is
read from :data:`CALIBRATED_THRESHOLDS` by the embedder's id; an embedder without a row uses
:data:`SPECIFIED_THRESHOLD` (0.7). To calibrate your own embedder, run :func:`calibrate` on the
project's labelled set (or your own pairs) and pass the threshold it finds::

    from costeer_lab.memory import PatternMemory, calibrate
    from costeer_lab.settings import MemorySettings

    cal = calibrate(my_embedder, precision=0.9)      # or pairs=[(query, stored, match), ...]
    memory = PatternMemory("sqlite:///memory.db", embedder=my_embedder,
                           settings=MemorySettings(pattern_threshold=cal.threshold))

or register it for every memory of this process with :func:`register_threshold`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from costeer_lab.embed import BaseEmbedder
from costeer_lab.errors import InvalidInputError
from costeer_lab.memory._calibration_set import calibration_pairs

__all__ = [
    "CALIBRATED_THRESHOLDS",
    "SPECIFIED_THRESHOLD",
    "TARGET_PRECISION",
    "Calibration",
    "calibrate",
    "calibrated_threshold",
    "register_threshold",
]

#: The threshold of the specification, used for embedders without a calibration.
SPECIFIED_THRESHOLD = 0.7
#: The precision the stored calibrations reach on the project's labelled set.
TARGET_PRECISION = 0.9

#: Calibrated pattern thresholds by embedder id (``calibrate(get_embedder(name))`` on the
#: project's labelled set at precision 0.9; ``python -m benchmarks.memory`` re-measures them).
CALIBRATED_THRESHOLDS: dict[str, float] = {"hashing@1:384": 0.4771, "minilm@1:384": 0.551}

_lock = threading.Lock()


@dataclass(frozen=True)
class Calibration:
    """A calibrated threshold and how it decides on the labelled set."""

    embedder_id: str
    threshold: float
    precision: float
    recall: float
    target_precision: float
    matches: int
    non_matches: int


def calibrate(
    embedder: BaseEmbedder,
    pairs: Sequence[tuple[str, str, bool]] | None = None,
    *,
    precision: float = TARGET_PRECISION,
) -> Calibration:
    """The lowest threshold whose decisions ``cosine >= threshold`` reach ``precision``.

    Each ``(query, stored description, match)`` pair is scored as the memory scores it (the
    query's vector against the stored description's). Among thresholds at a pair's score, the
    lowest one with precision ``>= precision`` is kept (the most recall at that precision); when
    none reaches it, the one with the best precision.

    Args:
        embedder: the embedder to calibrate.
        pairs: labelled pairs (default: :func:`calibration_pairs`, the project's set).
        precision: the precision to reach, in (0, 1].

    Example:
        >>> from costeer_lab.embed import get_embedder
        >>> cal = calibrate(get_embedder("hashing"))
        >>> cal.precision >= 0.9 and 0 < cal.recall <= 1
        True
    """
    if not 0 < precision <= 1:
        raise InvalidInputError(f"precision must be in (0, 1], got {precision!r}")
    items = list(calibration_pairs() if pairs is None else pairs)
    labels = np.array([bool(m) for _, _, m in items])
    if not labels.any() or labels.all():
        raise InvalidInputError("calibration needs both matching and non-matching pairs")
    texts = sorted({t for q, s, _ in items for t in (q, s)})
    row = {t: i for i, t in enumerate(texts)}
    vecs = np.asarray(embedder.embed(texts), dtype=np.float64)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    scores = np.array([float(vecs[row[q]] @ vecs[row[s]]) for q, s, _ in items])
    order = np.argsort(-scores, kind="stable")
    hits = np.cumsum(labels[order])
    kept = np.arange(1, len(items) + 1)
    precisions = hits / kept
    recalls = hits / labels.sum()
    # a cut can only fall between distinct scores: the last index of each run of equal scores
    ends = np.append(np.diff(scores[order]) != 0, True)
    good = np.flatnonzero(ends & (precisions >= precision))
    best = int(good[-1]) if good.size else int(np.flatnonzero(ends)[np.argmax(precisions[ends])])
    return Calibration(
        embedder_id=embedder.id,
        threshold=round(float(scores[order][best]) - 1e-6, 6),
        precision=float(precisions[best]),
        recall=float(recalls[best]),
        target_precision=float(precision),
        matches=int(labels.sum()),
        non_matches=int((~labels).sum()),
    )


def register_threshold(embedder_id: str, threshold: float) -> None:
    """Make ``threshold`` the calibrated default of memories using embedder ``embedder_id``.

    Example:
        >>> register_threshold("my-embedder@1:8", 0.42)
        >>> calibrated_threshold("my-embedder@1:8")
        0.42
    """
    if isinstance(threshold, bool) or not -1.0 <= float(threshold) <= 1.0:
        raise InvalidInputError(f"threshold must be a cosine in [-1, 1], got {threshold!r}")
    with _lock:
        CALIBRATED_THRESHOLDS[embedder_id] = float(threshold)


def calibrated_threshold(embedder_id: str) -> float:
    """The calibrated threshold of ``embedder_id``, else :data:`SPECIFIED_THRESHOLD`."""
    with _lock:
        return CALIBRATED_THRESHOLDS.get(embedder_id, SPECIFIED_THRESHOLD)
