"""Paired contrasts of final success between arms, per stage, with task-cluster intervals.

For a pair (arm ``a``, reference ``b``) and a stage, the *pairs* are the (seed, task) that both
arms ran (the task in both arms' universes of the seed). Each pair has final outcomes
``y_a, y_b`` in {0, 1} (solved at any attempt of the stage). The contrast is

- ``difference = mean over pairs of (y_a - y_b)`` (a fraction; x100 = percentage points);
- an interval from resampling *tasks* with replacement, each drawn task bringing all its seeds'
  pairs (the statistic is the mean over the resampled pairs): tasks are the units the result
  should generalise over, and a task's seeds are correlated (the same task is easy or hard in
  every seed), so resampling seeds and tasks as if independent would understate the width.
  Percentile interval, widened to contain the point estimate;
- the discordant counts: ``arm_only`` (pairs only the arm solved) and ``reference_only``.

Arms of one experiment draw common random numbers (the RAG samplers' draws are keyed by seed,
stage, task and attempt, never by the arm), so pairing by (seed, task) removes the sampling
noise the arms share.

Example:
    >>> from costeer_lab.testing import example_results
    >>> contrasts(example_results(), [("rag", "no_knowledge")], n_boot=200)[
    ...     ["arm", "reference", "difference", "arm_only", "reference_only"]].values.tolist()
    [['rag', 'no_knowledge', -0.5, 0, 1]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment._metrics import _check_boot, _interval, _rng, _task_outcomes
from costeer_lab.experiment._results import validate_results

__all__ = ["CONTRAST_COLUMNS", "contrasts", "default_pairs"]

CONTRAST_COLUMNS = [
    "stage", "arm", "reference", "difference", "lo", "hi", "arm_success",
    "reference_success", "n_tasks", "n_seeds", "n_pairs", "arm_only", "reference_only",
]  # fmt: skip

_BY_NAME = {"no_knowledge": "none", "rag_v1": "v1", "rag_v2": "v2"}


def _kind(arm: str, rag: Mapping[str, str] | None) -> str | None:
    if rag is not None:
        return rag.get(arm)
    if arm in _BY_NAME:
        return _BY_NAME[arm]
    return "v2" if arm.startswith("rag_v2_") else None


def default_pairs(
    arms: Sequence[str], rag: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """The contrasts an ablation study asks for: V2 vs no knowledge, V2 vs V1, and every other
    V2-based arm (an ablation) vs V2.

    ``rag`` maps arm name -> the spec's ``rag`` kind (``none``, ``v1``, ``v2``, ``memory``);
    without it the kinds come from the names ``no_knowledge``, ``rag_v1``, ``rag_v2`` and
    ``rag_v2_*`` (ablations). The V2 reference is the arm named ``rag_v2`` when it is a V2 arm,
    else the first V2 arm in ``arms``' order.

    Example:
        >>> default_pairs(["no_knowledge", "rag_v1", "rag_v2", "rag_v2_no_error"])
        [('rag_v2', 'no_knowledge'), ('rag_v2', 'rag_v1'), ('rag_v2_no_error', 'rag_v2')]
    """
    kinds = {a: _kind(a, rag) for a in arms}
    v2 = [a for a in arms if kinds[a] == "v2"]
    if not v2:
        return []
    main = "rag_v2" if "rag_v2" in v2 else v2[0]
    none = next((a for a in arms if kinds[a] == "none"), None)
    v1 = next((a for a in arms if kinds[a] == "v1"), None)
    pairs = [(main, ref) for ref in (none, v1) if ref is not None]
    return pairs + [(a, main) for a in v2 if a != main]


def contrasts(
    results: pd.DataFrame,
    pairs: Sequence[tuple[str, str]] | None = None,
    *,
    stage: str | None = None,
    rag: Mapping[str, str] | None = None,
    n_boot: int = 2000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Paired differences of final success, one row per (stage, pair) (see the module docstring).

    Args:
        results: a results table.
        pairs: ``(arm, reference)`` pairs; default :func:`default_pairs` of the arms present.
        stage: only this stage; default every stage (``""`` for a spec without stages).
        rag: arm -> ``rag`` kind from the spec, for the default pairs.
        n_boot, ci, seed: the bootstrap (the generator is seeded by ``seed``, the stage and the
            pair, so a row does not depend on the other rows).

    Returns:
        Columns :data:`CONTRAST_COLUMNS`: ``difference`` with its interval ``lo``..``hi``,
        both arms' final success over the pairs, ``n_tasks``, ``n_seeds`` and ``n_pairs``
        shared, and the discordant counts ``arm_only`` / ``reference_only``. A pair sharing no
        (seed, task) gets NaN and zero counts.

    Raises:
        InvalidInputError: an arm of ``pairs`` or ``stage`` is not in the results.
    """
    _check_boot(n_boot, ci)
    r = validate_results(results)
    if "stage" not in r:
        r = r.assign(stage="")
    r = r.assign(stage=r["stage"].astype(str))
    arms = list(dict.fromkeys(str(a) for a in r["arm"]))
    if pairs is None:
        pairs = default_pairs(arms, rag)
    for pair in pairs:
        for name in pair:
            if name not in arms:
                raise InvalidInputError(f"arm {name!r} is not in the results; arms: {arms}")
    stages = list(dict.fromkeys(r["stage"]))
    if stage is not None:
        if stage not in stages:
            raise InvalidInputError(f"stage {stage!r} is not in the results; stages: {stages}")
        stages = [stage]
    rows = []
    for st in stages:
        out = _task_outcomes(r[r["stage"] == st])
        won = {
            str(a): g.set_index(["seed", "task_id"])["solved_at"].notna()
            for a, g in out.groupby("arm")
        }
        for arm, ref in pairs:
            rows.append(_contrast(st, arm, ref, won, n_boot, ci, seed))
    return pd.DataFrame(rows, columns=CONTRAST_COLUMNS)


def _contrast(
    stage: str,
    arm: str,
    ref: str,
    won: Mapping[str, pd.Series],
    n_boot: int,
    ci: float,
    seed: int,
) -> dict[str, object]:
    empty = pd.Series(dtype=bool, index=pd.MultiIndex.from_tuples([], names=["seed", "task_id"]))
    a, b = won.get(arm, empty), won.get(ref, empty)
    shared = a.index.intersection(b.index).sort_values()
    ya = a.loc[shared].to_numpy(dtype=np.float64)
    yb = b.loc[shared].to_numpy(dtype=np.float64)
    tasks = shared.get_level_values("task_id")
    nan = float("nan")
    row: dict[str, object] = {
        "stage": stage, "arm": arm, "reference": ref, "difference": nan, "lo": nan, "hi": nan,
        "arm_success": nan, "reference_success": nan,
        "n_tasks": int(tasks.nunique()), "n_seeds": int(shared.get_level_values("seed").nunique()),
        "n_pairs": len(shared), "arm_only": int(((ya == 1) & (yb == 0)).sum()),
        "reference_only": int(((ya == 0) & (yb == 1)).sum()),
    }  # fmt: skip
    if not len(shared):
        return row
    codes, _ = pd.factorize(tasks)
    n_tasks = int(codes.max()) + 1
    diff_sum = np.bincount(codes, weights=ya - yb, minlength=n_tasks)
    count = np.bincount(codes, minlength=n_tasks).astype(np.float64)
    point = np.array([(ya - yb).mean()])
    rng = _rng(seed, "contrast", stage, arm, ref)
    draws = rng.integers(0, n_tasks, size=(n_boot, n_tasks))
    boot = (diff_sum[draws].sum(axis=1) / count[draws].sum(axis=1))[:, None]
    lo, hi = _interval(boot, point, ci)
    row.update(
        difference=float(point[0]), lo=float(lo[0]), hi=float(hi[0]),
        arm_success=float(ya.mean()), reference_success=float(yb.mean()),
    )  # fmt: skip
    return row
