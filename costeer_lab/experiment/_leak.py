"""Seed knowledge that holds a target: the knowledge base would then hold the answer.

The seed knowledge is the ground truths of ``seed_knowledge.split`` (first ``limit``); the
targets are ``tasks`` and every stage's tasks. When both come from one suite (no
``seed_knowledge.suite``, or the same one) and share task ids, a run measures recall of the
answer, not learning. :func:`check_target_leak` refuses that unless the spec sets
``allow_target_leak: true`` (an oracle arm, on purpose); the run's ``spec.json`` then records
the flag and its report carries a warning.

Example:
    >>> from costeer_lab.experiment._spec import ExperimentSpec
    >>> spec = ExperimentSpec.model_validate({"name": "t", "suite": "humaneval",
    ...     "arms": [{"name": "a"}]})
    >>> same_suite(spec)
    True
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from costeer_lab.errors import ConfigurationError
from costeer_lab.experiment._spec import ExperimentSpec

__all__ = ["LEAK_WARNING", "check_target_leak", "same_suite"]

logger = logging.getLogger(__name__)

#: The warning a report shows for a run whose spec allows the leak.
LEAK_WARNING = (
    "allow_target_leak: true: this run's seed knowledge may hold the ground truths of its own "
    "targets, so success measures recall of known answers, not learning"
)


def same_suite(spec: ExperimentSpec) -> bool:
    """Whether the seed knowledge comes from the experiment's own suite (so equal task ids are
    the same tasks): no ``seed_knowledge.suite``, the same name, or the same task file."""
    other = spec.seed_knowledge.suite
    if other is None or other == spec.suite:
        return True
    a, b = Path(other), Path(spec.suite)
    return a.is_file() and b.is_file() and a.resolve() == b.resolve()


def check_target_leak(
    spec: ExperimentSpec, seed_ids: Iterable[str], target_ids: Iterable[str]
) -> None:
    """Refuse seed knowledge that holds a target (same suite, same id) unless the spec allows
    it; when allowed, log a warning.

    Raises:
        ConfigurationError: naming up to five shared ids and the ways out.
    """
    if not same_suite(spec):
        return
    targets = set(target_ids)
    shared = [i for i in seed_ids if i in targets]
    if not shared:
        return
    if spec.allow_target_leak:
        logger.warning("%s (%d shared task ids)", LEAK_WARNING, len(shared))
        return
    shown = ", ".join(repr(i) for i in shared[:5]) + (" …" if len(shared) > 5 else "")
    sk = spec.seed_knowledge
    raise ConfigurationError(
        f"seed_knowledge: split {sk.split!r} holds {len(shared)} of the target tasks ({shown}), "
        "so their ground truths would be in the knowledge base; choose a seed split disjoint "
        "from the targets (e.g. tasks.split: test, seed_knowledge.split: train), set "
        "seed_knowledge.split: null for none, or set allow_target_leak: true to run it on purpose"
    )
