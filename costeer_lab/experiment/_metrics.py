"""Success metrics over a results table (see :mod:`._results` for the schema).

Notation: for an arm ``a`` and seed ``s`` the *task universe* ``U(a, s)`` is the set of task ids
seen at attempt 1. For a task ``i`` in it, ``k_i`` is the attempt of its first success (never
solved: ``k_i = ∞``). ``T_a`` is the largest attempt recorded for the arm.

- cumulative success at step ``t``: ``r(a, s, t) = |{i ∈ U : k_i <= t}| / |U|``, then the mean
  over seeds ``r(a, t) = mean_s r(a, s, t)`` for ``t = 1..T_a`` (a seed whose run stopped early
  keeps its last value);
- final success: ``r(a, T_a)``; first-try success: ``r(a, 1)``;
- attempts to success: mean of ``k_i`` over solved (seed, task) pairs, pooled over seeds;
- success lift vs a baseline arm ``b``: ``d_s = r(a, s, T_a) - r(b, s, T_b)`` for seeds run by both
  arms, lift ``= mean_s d_s``;
- knowledge-base growth: ``kb_nodes`` at step ``t`` of a stage = max over the step's rows,
  carried forward, averaged over seeds; stages follow each other (``step``).

Confidence intervals are percentile bootstraps (``n_boot`` resamples, level ``ci``) with a
``numpy`` generator seeded from ``seed`` and the arm name, so an arm's interval does not depend on
which other arms are in the table. ``bootstrap="hierarchical"`` (the default) resamples seeds,
then tasks within each drawn seed (paired by task for a lift when both arms share the seed's
universe), so the interval reflects both the run-to-run and the task-sampling variation; with
one seed it is a task bootstrap. ``bootstrap="seeds"`` resamples seeds only when there are at
least two (else tasks), which understates uncertainty with few seeds and gives a zero-width
interval for an arm that is *deterministic across seeds* (identical outcomes for every seed,
see :func:`deterministic_arms`). The interval is widened to contain the point estimate if
resampling a few discrete values ever leaves it outside.

Example:
    >>> from costeer_lab.experiment import success_curve
    >>> from costeer_lab.testing import example_results
    >>> success_curve(example_results(), n_boot=200)[["arm", "attempt", "success_rate"]].shape
    (4, 3)
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pandas as pd

from costeer_lab.errors import InvalidInputError, did_you_mean
from costeer_lab.experiment._results import validate_results

__all__ = [
    "BOOTSTRAPS",
    "attempts_to_success",
    "deterministic_arms",
    "first_try_success",
    "kb_growth",
    "success_curve",
    "success_lift",
    "task_outcomes",
]

FloatArray = npt.NDArray[np.float64]

#: Bootstrap schemes of the confidence intervals (see the module docstring).
BOOTSTRAPS = ("hierarchical", "seeds")


def _rng(seed: int, *keys: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(k.encode("utf-8")) for k in keys)])


def _check_boot(n_boot: int, ci: float, bootstrap: str = "hierarchical") -> None:
    if not isinstance(n_boot, int) or n_boot < 1:
        raise InvalidInputError(f"n_boot must be a positive int, got {n_boot!r}")
    if not 0.0 < ci < 1.0:
        raise InvalidInputError(f"ci must be in (0, 1), got {ci!r}")
    if bootstrap not in BOOTSTRAPS:
        raise InvalidInputError(f"bootstrap must be one of {BOOTSTRAPS}, got {bootstrap!r}")


def _hier_boot(
    groups: list[FloatArray],
    stat: Callable[[FloatArray], FloatArray],
    rng: np.random.Generator,
    n: int,
) -> FloatArray:
    """Two-level bootstrap: draw seeds (``groups``, one array of task rows per seed) with
    replacement, then each drawn seed's task rows with replacement; ``stat`` maps a seed's
    resampled rows ``(n_boot, n_tasks, ...)`` to per-draw values ``(n_boot, m)``, averaged over
    the drawn seeds."""
    picks = rng.integers(0, len(groups), size=(n, len(groups)))
    total: FloatArray | None = None
    for j in range(len(groups)):
        part: FloatArray | None = None
        for g in range(len(groups)):
            rows = np.flatnonzero(picks[:, j] == g)
            if not len(rows):
                continue
            units = groups[g]
            idx = rng.integers(0, units.shape[0], size=(len(rows), units.shape[0]))
            vals = stat(units[idx])
            if part is None:
                part = np.zeros((n, vals.shape[1]), dtype=np.float64)
            part[rows] = vals
        assert part is not None
        total = part if total is None else total + part
    assert total is not None
    return total / len(groups)


def _interval(boot: FloatArray, point: FloatArray, ci: float) -> tuple[FloatArray, FloatArray]:
    """Percentile interval over axis 0 of ``boot``, widened to contain ``point``."""
    alpha = (1.0 - ci) / 2.0
    lo, hi = np.quantile(boot, [alpha, 1.0 - alpha], axis=0)
    return np.minimum(lo, point), np.maximum(hi, point)


def _bootstrap(
    units: FloatArray, stat: Callable[[FloatArray], FloatArray], rng: np.random.Generator, n: int
) -> FloatArray:
    """``n`` resamples of ``stat`` applied to rows of ``units`` drawn with replacement."""
    idx = rng.integers(0, units.shape[0], size=(n, units.shape[0]))
    return np.stack([stat(units[row]) for row in idx])


def task_outcomes(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (arm, seed, task in the universe): when it was solved and how often tried.

    Returns:
        Columns ``arm``, ``seed``, ``task_id``, ``solved_at`` (float attempt of the first success,
        NaN when never solved), ``n_attempts`` (rows recorded for the task).

    Example:
        >>> from costeer_lab.testing import example_results
        >>> task_outcomes(example_results())["solved_at"].tolist()
        [2.0, 1.0, 1.0, nan]
    """
    return _task_outcomes(validate_results(results))


def _task_outcomes(r: pd.DataFrame) -> pd.DataFrame:
    keys = ["arm", "seed", "task_id"]
    universe = r.loc[r["attempt"] == 1, keys].drop_duplicates()
    n_att = r.groupby(keys).size().rename("n_attempts")
    wins = r[r["success"]].groupby(keys)["attempt"].min().astype("float64").rename("solved_at")
    out = universe.join(wins, on=keys).join(n_att, on=keys)
    out["solved_at"] = out["solved_at"].astype("float64")
    out["n_attempts"] = out["n_attempts"].astype("int64")
    return out.sort_values(keys).reset_index(drop=True)


def _arm_steps(r: pd.DataFrame) -> dict[str, int]:
    return {str(a): int(t) for a, t in r.groupby("arm")["attempt"].max().items()}


def _solved_by(steps: FloatArray) -> Callable[[FloatArray], FloatArray]:
    """Statistic: share of the (resampled) tasks' ``solved_at`` that are <= each step."""
    return lambda m: (m <= steps[None, :]).mean(axis=0)


def _solved_share(steps: FloatArray) -> Callable[[FloatArray], FloatArray]:
    """Statistic over ``(n_boot, n_tasks)`` resampled ``solved_at``: share solved by each step."""
    return lambda m: (m[..., None] <= steps).mean(axis=1)


def _curve_matrix(outcomes: pd.DataFrame, steps: FloatArray) -> tuple[list[int], FloatArray]:
    """Seeds and their cumulative success curves ``(n_seeds, len(steps))``."""
    seeds, rows = [], []
    for _, g in outcomes.groupby("seed", sort=True):
        solved = g["solved_at"].to_numpy(dtype=np.float64)
        rows.append((solved[:, None] <= steps[None, :]).mean(axis=0))
        seeds.append(int(g["seed"].to_numpy()[0]))
    return seeds, np.asarray(rows, dtype=np.float64)


def success_curve(
    results: pd.DataFrame,
    *,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    bootstrap: str = "hierarchical",
) -> pd.DataFrame:
    """Cumulative success rate per arm and attempt with bootstrap confidence intervals.

    ``success_rate`` at attempt ``t`` is the share of each seed's task universe solved by step
    ``t``, averaged over seeds (see the module docstring for the formulas).

    Returns:
        Columns ``arm``, ``attempt``, ``success_rate``, ``ci_low``, ``ci_high``, ``n_seeds``,
        ``n_tasks`` (distinct task ids in the arm's universes), ``resampled`` (``"seeds+tasks"``
        for the hierarchical bootstrap with two or more seeds, ``"seeds"`` or ``"tasks"``).

    Example:
        >>> from costeer_lab.testing import example_results
        >>> success_curve(example_results(), n_boot=100)["success_rate"].tolist()
        [0.5, 1.0, 0.5, 0.5]
    """
    _check_boot(n_boot, ci, bootstrap)
    return _success_curve(validate_results(results), n_boot, ci, seed, bootstrap)


def _success_curve(
    r: pd.DataFrame, n_boot: int, ci: float, seed: int, bootstrap: str = "hierarchical"
) -> pd.DataFrame:
    outcomes, last = _task_outcomes(r), _arm_steps(r)
    frames = []
    for arm, g in outcomes.groupby("arm", sort=True):
        steps = np.arange(1, last[str(arm)] + 1, dtype=np.float64)
        seeds, curves = _curve_matrix(g, steps)
        point = curves.mean(axis=0)
        rng = _rng(seed, "curve", str(arm))
        hier = bootstrap == "hierarchical" and len(seeds) >= 2
        if hier:
            groups = [
                gs["solved_at"].to_numpy(dtype=np.float64)
                for _, gs in g.groupby("seed", sort=True)
            ]
            boot = _hier_boot(groups, _solved_share(steps), rng, n_boot)
        elif len(seeds) >= 2:
            boot = _bootstrap(curves, lambda m: m.mean(axis=0), rng, n_boot)
        else:
            solved = g["solved_at"].to_numpy(dtype=np.float64)[:, None]
            boot = _bootstrap(solved, _solved_by(steps), rng, n_boot)
        low, high = _interval(boot, point, ci)
        frame = pd.DataFrame(
            {"attempt": steps.astype("int64"), "success_rate": point, "ci_low": low}
        )
        frame["ci_high"] = high
        frame.insert(0, "arm", str(arm))
        frame["n_seeds"] = len(seeds)
        frame["n_tasks"] = int(g["task_id"].nunique())
        frame["resampled"] = "seeds+tasks" if hier else "seeds" if len(seeds) >= 2 else "tasks"
        frames.append(frame)
    if not frames:
        cols = ["arm", "attempt", "success_rate", "ci_low", "ci_high", "n_seeds", "n_tasks"]
        return pd.DataFrame({c: [] for c in [*cols, "resampled"]})
    return pd.concat(frames, ignore_index=True)


def deterministic_arms(results: pd.DataFrame) -> pd.DataFrame:
    """Whether each arm gave identical outcomes for every seed.

    An arm is *deterministic across seeds* when it ran at least two seeds and every seed has
    the same task universe with the same ``solved_at`` per task. Its seeds then carry no
    information about run-to-run variation: a seed-level interval has zero width, and the
    hierarchical one reflects task sampling only.

    Returns:
        Columns ``arm``, ``n_seeds``, ``deterministic`` (bool).

    Example:
        >>> import pandas as pd
        >>> from costeer_lab.testing import example_results
        >>> two = pd.concat([example_results(), example_results().assign(seed=1)])
        >>> deterministic_arms(two)["deterministic"].tolist()
        [True, True]
    """
    return _deterministic(_task_outcomes(validate_results(results)))


def _deterministic(outcomes: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for arm, g in outcomes.groupby("arm", sort=True):
        per_seed = [
            tuple(zip(gs["task_id"], gs["solved_at"].fillna(-1.0), strict=True))
            for _, gs in g.groupby("seed", sort=True)
        ]
        same = len(per_seed) >= 2 and all(p == per_seed[0] for p in per_seed[1:])
        rows.append((str(arm), len(per_seed), same))
    out = pd.DataFrame(rows, columns=["arm", "n_seeds", "deterministic"])
    return out.astype({"n_seeds": "int64", "deterministic": "bool"})


def first_try_success(results: pd.DataFrame) -> pd.DataFrame:
    """Share of the task universe solved at attempt 1, averaged over seeds, per arm.

    Returns:
        Columns ``arm``, ``first_try_success``, ``n_seeds``.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> first_try_success(example_results())["first_try_success"].tolist()
        [0.5, 0.5]
    """
    return _first_try(_task_outcomes(validate_results(results)))


def _first_try(outcomes: pd.DataFrame) -> pd.DataFrame:
    per_seed = (outcomes["solved_at"] == 1).groupby([outcomes["arm"], outcomes["seed"]]).mean()
    grouped = per_seed.groupby(level="arm")
    out = pd.DataFrame({"first_try_success": grouped.mean(), "n_seeds": grouped.size()})
    return out.rename_axis("arm").reset_index()


def attempts_to_success(results: pd.DataFrame) -> pd.DataFrame:
    """Attempts needed by solved tasks and the number never solved, per arm (pooled over seeds).

    Returns:
        Columns ``arm``, ``mean_attempts`` (mean of ``k_i`` over solved (seed, task) pairs, NaN
        when none), ``median_attempts``, ``n_solved``, ``n_never_solved``.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> table = attempts_to_success(example_results())
        >>> table[["mean_attempts", "n_never_solved"]].values.tolist()
        [[1.5, 0.0], [1.0, 1.0]]
    """
    return _attempts(_task_outcomes(validate_results(results)))


def _attempts(outcomes: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for arm, g in outcomes.groupby("arm", sort=True):
        solved = g["solved_at"].dropna()
        rows.append(
            {
                "arm": str(arm),
                "mean_attempts": float(solved.mean()) if len(solved) else float("nan"),
                "median_attempts": float(solved.median()) if len(solved) else float("nan"),
                "n_solved": len(solved),
                "n_never_solved": int(g["solved_at"].isna().sum()),
            }
        )
    cols = ["arm", "mean_attempts", "median_attempts", "n_solved", "n_never_solved"]
    return pd.DataFrame(rows, columns=cols)


def success_lift(
    results: pd.DataFrame,
    *,
    baseline: str = "no_knowledge",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    bootstrap: str = "hierarchical",
) -> pd.DataFrame:
    """Final-success difference of every arm vs ``baseline``, paired by seed, with a bootstrap CI.

    Hierarchical (default): shared seeds are resampled, then each drawn seed's tasks (paired by
    task when both universes of the seed are equal, else independently). ``"seeds"``: with two
    or more shared seeds the per-seed differences are resampled; with one shared seed the tasks
    are resampled as above.

    Returns:
        Columns ``arm``, ``baseline``, ``n_pairs`` (shared seeds), ``arm_success``,
        ``baseline_success`` (means over shared seeds), ``lift`` (their difference), ``ci_low``,
        ``ci_high``, ``resampled``. Arms sharing no seed with the baseline get NaN.

    Raises:
        InvalidInputError: when ``baseline`` is not an arm of ``results``.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> success_lift(example_results(), baseline="no_knowledge", n_boot=100)["lift"].tolist()
        [-0.5]
    """
    _check_boot(n_boot, ci, bootstrap)
    return _success_lift(validate_results(results), baseline, n_boot, ci, seed, bootstrap)


def _success_lift(
    r: pd.DataFrame,
    baseline: str,
    n_boot: int,
    ci: float,
    seed: int,
    bootstrap: str = "hierarchical",
) -> pd.DataFrame:
    outcomes = _task_outcomes(r)
    arms = sorted(str(a) for a in outcomes["arm"].unique())
    if baseline not in arms:
        raise InvalidInputError(
            f"baseline arm {baseline!r} is not in the results; {did_you_mean(baseline, arms)}"
        )
    solved = outcomes.assign(win=outcomes["solved_at"].notna().astype("float64"))
    final = solved.groupby(["arm", "seed"])["win"].mean()
    rows = []
    for arm in arms:
        if arm == baseline:
            continue
        a, b = final.loc[arm], final.loc[baseline]
        shared = sorted(set(a.index) & set(b.index))
        row: dict[str, object] = {"arm": arm, "baseline": baseline, "n_pairs": len(shared)}
        nan = float("nan")
        row.update(arm_success=nan, baseline_success=nan, lift=nan, ci_low=nan, ci_high=nan)
        hier = bootstrap == "hierarchical" and len(shared) >= 2
        row["resampled"] = "seeds+tasks" if hier else "seeds" if len(shared) >= 2 else "tasks"
        if shared:
            diffs = (a.loc[shared] - b.loc[shared]).to_numpy(dtype=np.float64)
            point = np.array([diffs.mean()])
            rng = _rng(seed, "lift", arm, baseline)
            if hier:
                boot = _hier_lift_boot(solved, arm, baseline, shared, rng, n_boot)
            elif len(shared) >= 2:
                boot = _bootstrap(diffs[:, None], lambda m: m.mean(axis=0), rng, n_boot)
            else:
                boot = _task_lift_boot(solved, arm, baseline, shared[0], rng, n_boot)
            low, high = _interval(boot, point, ci)
            row.update(
                arm_success=float(a.loc[shared].mean()),
                baseline_success=float(b.loc[shared].mean()),
                lift=float(point[0]),
                ci_low=float(low[0]),
                ci_high=float(high[0]),
            )
        rows.append(row)
    cols = ["arm", "baseline", "n_pairs", "arm_success", "baseline_success", "lift"]
    return pd.DataFrame(rows, columns=[*cols, "ci_low", "ci_high", "resampled"])


def _hier_lift_boot(
    solved: pd.DataFrame,
    arm: str,
    baseline: str,
    seeds: list[int],
    rng: np.random.Generator,
    n: int,
) -> FloatArray:
    """Seeds, then tasks within each drawn seed: paired rows ``(win_arm, win_baseline)`` when
    the seed's universes agree, else each side resampled on its own."""
    picks = rng.integers(0, len(seeds), size=n * len(seeds)).reshape(n, len(seeds))
    total = np.zeros((n, 1), dtype=np.float64)
    for j in range(len(seeds)):
        for g, s in enumerate(seeds):
            rows = np.flatnonzero(picks[:, j] == g)
            if len(rows):
                total[rows] += _task_lift_boot(solved, arm, baseline, s, rng, len(rows))
    return total / len(seeds)


def _task_lift_boot(
    solved: pd.DataFrame, arm: str, baseline: str, seed: int, rng: np.random.Generator, n: int
) -> FloatArray:
    one = solved[solved["seed"] == seed]
    wa = one[one["arm"] == arm].set_index("task_id")["win"]
    wb = one[one["arm"] == baseline].set_index("task_id")["win"]
    if set(wa.index) == set(wb.index):
        pairs = np.stack([wa.to_numpy(), wb.loc[wa.index].to_numpy()], axis=1)
        return _bootstrap(pairs, lambda m: m.mean(axis=0)[:1] - m.mean(axis=0)[1:], rng, n)
    ba = _bootstrap(wa.to_numpy()[:, None], lambda m: m.mean(axis=0), rng, n)
    bb = _bootstrap(wb.to_numpy()[:, None], lambda m: m.mean(axis=0), rng, n)
    return ba - bb


def kb_growth(results: pd.DataFrame) -> pd.DataFrame:
    """Knowledge-base size by attempt per arm and stage: mean over seeds (and min, max).

    Per (arm, stage, seed, attempt) the size is the largest ``kb_nodes`` of the step's rows; a
    seed whose run stopped early keeps its last size up to the arm's last attempt of the stage.
    Stages (the ``stage`` column, ``""`` or absent without stages) are taken in the order they
    appear in the table, which is the order they ran; ``step`` numbers the attempts of an arm
    across its stages in sequence (``step == attempt`` without stages), so a stage that starts
    from a copy of the previous stage's knowledge base continues its curve instead of being
    mixed with it at the same attempt number.

    Returns:
        Columns ``arm``, ``stage``, ``attempt`` (within the stage), ``step``, ``kb_nodes``,
        ``kb_nodes_min``, ``kb_nodes_max``, ``n_seeds``.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> kb_growth(example_results())["kb_nodes"].tolist()
        [0.0, 0.0, 4.0, 6.0]
    """
    return _kb_growth(validate_results(results))


_KB_GROWTH_COLUMNS = [
    "arm", "stage", "attempt", "step", "kb_nodes", "kb_nodes_min", "kb_nodes_max", "n_seeds",
]  # fmt: skip


def _kb_growth(r: pd.DataFrame) -> pd.DataFrame:
    stage = r["stage"].astype(str) if "stage" in r else pd.Series("", index=r.index)
    r = r.assign(stage=stage)
    order = {name: i for i, name in enumerate(pd.unique(stage))}
    per_step = r.groupby(["arm", "stage", "seed", "attempt"])["kb_nodes"].max()
    frames = []
    for arm, g in r.groupby("arm", sort=True):
        offset = 0
        for name in sorted(g["stage"].unique(), key=order.__getitem__):
            last = int(g.loc[g["stage"] == name, "attempt"].max())
            wide = per_step.loc[(arm, name)].unstack("seed").reindex(range(1, last + 1)).ffill()
            attempts = np.arange(1, last + 1, dtype=np.int64)
            frame = pd.DataFrame(
                {
                    "arm": str(arm),
                    "stage": str(name),
                    "attempt": attempts,
                    "step": attempts + offset,
                    "kb_nodes": wide.mean(axis=1).to_numpy(dtype=np.float64),
                    "kb_nodes_min": wide.min(axis=1).to_numpy(dtype=np.float64),
                    "kb_nodes_max": wide.max(axis=1).to_numpy(dtype=np.float64),
                    "n_seeds": wide.notna().sum(axis=1).to_numpy(dtype=np.int64),
                }
            )
            frames.append(frame)
            offset += last
    if not frames:
        return pd.DataFrame({c: [] for c in _KB_GROWTH_COLUMNS})
    return pd.concat(frames, ignore_index=True)[_KB_GROWTH_COLUMNS]
