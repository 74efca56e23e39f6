"""Power of a paired arm contrast, estimated by simulation before an experiment is run.

The design: ``n_tasks`` tasks, each run by both arms under ``n_seeds`` seeds; the outcome of a
(seed, task) is final success (solved within the run's attempts). The analysis is the one
:func:`contrasts` reports: the difference of final success, paired by (seed, task), with an
interval from resampling tasks (each with all its seeds); the contrast is *detected* when the
interval excludes zero.

The model of the simulation:

- task ``i`` of the baseline succeeds with probability ``p_i = expit(mu + sigma * z_i)``,
  ``z_i ~ N(0, 1)``: tasks differ in difficulty (a logit-normal random effect);
- ``mu`` and ``sigma`` are solved so that the mean of ``p_i`` is ``p_baseline`` and the
  *task ICC* ``var(p_i) / (p_baseline * (1 - p_baseline))`` is ``icc`` — the correlation of two
  seeds' outcomes on the same task (0: all tasks alike, seeds are the only noise; near 1: each
  task is always or never solved, seeds add nothing);
- the treatment shifts every task by the same ``delta`` on the logit scale, solved so that the
  mean success becomes ``p_baseline + difference`` (easy and hopeless tasks move little);
- seeds are repeated draws: ``Y = U < p`` with a fresh uniform ``U`` per (arm, seed, task);
  with ``coupling`` c, a share c of the (seed, task) pairs give both arms the *same* ``U`` (what
  common random numbers buy when the treatment leaves the draw alone; 0 is the conservative
  default).

The test of each simulated experiment is the normal approximation of the task-cluster
bootstrap: per task the mean over seeds of ``Y_arm - Y_ref``, then ``|mean| > t * sd / sqrt(n)``
(``t`` the two-sided ``1 - alpha`` quantile with ``n - 1`` degrees of freedom). The percentile
bootstrap of :func:`contrasts` is slightly narrower with few tasks, so its real detection rate
is, if anything, a little higher than estimated here.

Attempts are not a parameter: given the final success rates, the number of attempts behind
them does not change the distribution of the final outcomes.

Worked example. The demo runs 8 tasks per stage with 2 seeds. Suppose the reference arm
solves 40 % of the tasks and the task ICC is 0.5 (half of the outcome variance is which task
it is). A true +10 pp is then detected about 8 % of the time — barely above alpha — and about
99 tasks with 2 seeds (42 with 5 seeds, 194 with 1) are needed for 80 % power::

    >>> est = power_estimate(0.4, 0.10, n_tasks=8, n_seeds=2, icc=0.5, n_sim=2000)
    >>> est.power < 0.2
    True
    >>> n = tasks_needed(0.4, 0.10, n_seeds=2, icc=0.5, n_sim=1000)
    >>> 90 < n < 110
    True
    >>> power_estimate(0.4, 0.10, n_tasks=n, n_seeds=2, icc=0.5, n_sim=1000).power >= 0.8
    True

More seeds help less than more tasks when the ICC is high (seeds repeat the same tasks);
``coupling`` near 1 (both arms share every draw) is the best case of common random numbers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment._results import validate_results

__all__ = [
    "PowerEstimate",
    "pilot_rates",
    "power_estimate",
    "power_from_pilot",
    "power_table",
    "tasks_needed",
]

FloatArray = npt.NDArray[np.float64]

# A fine grid over the standard normal (not Gauss-Hermite: with a large task spread the success
# probability is nearly a step function of z, which few quadrature nodes miss).
_NODES = np.linspace(-9.0, 9.0, 8001)
_WEIGHTS = np.exp(-0.5 * _NODES**2)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()
_MAX_SIGMA = 200.0
#: Largest simulated array (tasks × seeds × simulations per batch), to bound memory.
_BATCH_CELLS = 2_000_000


@dataclass(frozen=True)
class PowerEstimate:
    """The estimated power of one paired contrast and the model behind it.

    Attributes:
        power: share of simulated experiments whose interval excludes zero.
        mc_se: Monte-Carlo standard error of ``power``.
        p_baseline, difference, n_tasks, n_seeds, icc, alpha, coupling, n_sim: the inputs.
        mu, sigma: the baseline's logit-normal task effect (location, spread).
        delta: the treatment's logit shift.
    """

    power: float
    mc_se: float
    p_baseline: float
    difference: float
    n_tasks: int
    n_seeds: int
    icc: float
    alpha: float
    coupling: float
    n_sim: int
    mu: float
    sigma: float
    delta: float

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict."""
        return asdict(self)

    def sentence(self) -> str:
        """One plain sentence stating the estimate."""
        return (
            f"With {self.n_tasks} tasks x {self.n_seeds} seed(s), a baseline final success of "
            f"{100 * self.p_baseline:.0f}% and task ICC {self.icc:.2f}, a true difference of "
            f"{100 * self.difference:+.0f} pp is detected (interval excludes zero, alpha "
            f"{self.alpha:g}) with probability {100 * self.power:.0f}% "
            f"(+/- {100 * self.mc_se:.1f} simulation s.e.)."
        )


def _expit(x: FloatArray) -> FloatArray:
    out: FloatArray = 0.5 * (1.0 + np.tanh(0.5 * x))
    return out


def _mean_p(mu: float, sigma: float) -> float:
    return float(_WEIGHTS @ _expit(mu + sigma * _NODES))


def _var_p(mu: float, sigma: float) -> float:
    p = _expit(mu + sigma * _NODES)
    m = float(_WEIGHTS @ p)
    return float(_WEIGHTS @ (p - m) ** 2)


def _bisect(f: Any, lo: float, hi: float, target: float, steps: int = 80) -> float:
    """``x`` in ``[lo, hi]`` with ``f(x) = target`` for an increasing ``f``."""
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if f(mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _location(p: float, sigma: float) -> float:
    """``mu`` with mean success ``p`` for task spread ``sigma``."""
    return _bisect(lambda m: _mean_p(m, sigma), -60.0, 60.0, p)


@functools.lru_cache(maxsize=256)
def _task_model(p: float, icc: float) -> tuple[float, float]:
    """``(mu, sigma)`` of the logit-normal task effect with mean ``p`` and task ICC ``icc``."""
    if icc <= 0.0:
        return _location(p, 0.0), 0.0
    target = icc * p * (1.0 - p)
    sigma = _bisect(lambda s: _var_p(_location(p, s), s), 0.0, _MAX_SIGMA, target, steps=50)
    return _location(p, sigma), sigma


def _t_quantile(q: float, df: int) -> float:
    """Student-t quantile: exact for 1 and 2 degrees of freedom, else the Cornish-Fisher
    expansion (within 1 % from 3 degrees of freedom on)."""
    if df == 1:
        return math.tan(math.pi * (q - 0.5))
    if df == 2:
        return (2 * q - 1) / math.sqrt(2 * q * (1 - q))
    z = NormalDist().inv_cdf(q)
    v = float(df)
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4)
    )


def _check(p: float, difference: float, n_tasks: int, n_seeds: int, icc: float, alpha: float,
           coupling: float, n_sim: int) -> None:  # fmt: skip
    if not 0.0 < p < 1.0:
        raise InvalidInputError(f"p_baseline must be in (0, 1), got {p!r}")
    if not 0.0 < p + difference < 1.0:
        raise InvalidInputError(
            f"p_baseline + difference must be in (0, 1), got {p} + {difference}"
        )
    if not isinstance(n_tasks, int) or n_tasks < 2:
        raise InvalidInputError(f"n_tasks must be an int >= 2, got {n_tasks!r}")
    if not isinstance(n_seeds, int) or n_seeds < 1:
        raise InvalidInputError(f"n_seeds must be a positive int, got {n_seeds!r}")
    if not 0.0 <= icc < 1.0:
        raise InvalidInputError(f"icc must be in [0, 1), got {icc!r}")
    if not 0.0 < alpha < 1.0:
        raise InvalidInputError(f"alpha must be in (0, 1), got {alpha!r}")
    if not 0.0 <= coupling <= 1.0:
        raise InvalidInputError(f"coupling must be in [0, 1], got {coupling!r}")
    if not isinstance(n_sim, int) or n_sim < 1:
        raise InvalidInputError(f"n_sim must be a positive int, got {n_sim!r}")


def _simulate(
    mu: float,
    sigma: float,
    delta: float,
    *,
    n_tasks: int,
    n_seeds: int,
    coupling: float,
    n_sim: int,
    rng: np.random.Generator,
) -> tuple[FloatArray, FloatArray]:
    """Simulated outcomes ``(arm, reference)``, each ``(n_sim, n_tasks, n_seeds)`` of 0/1."""
    z = rng.standard_normal((n_sim, n_tasks, 1))
    p_ref = _expit(mu + sigma * z)
    p_arm = _expit(mu + delta + sigma * z)
    shape = (n_sim, n_tasks, n_seeds)
    u_ref = rng.random(shape)
    u_arm = np.where(rng.random(shape) < coupling, u_ref, rng.random(shape))
    return (u_arm < p_arm).astype(np.float64), (u_ref < p_ref).astype(np.float64)


def _detected(y_arm: FloatArray, y_ref: FloatArray, crit: float) -> FloatArray:
    d = (y_arm - y_ref).mean(axis=2)  # per simulated experiment and task
    n = d.shape[1]
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1)
    out: FloatArray = (np.abs(mean) > crit * sd / math.sqrt(n)).astype(np.float64)
    return out


def power_estimate(
    p_baseline: float,
    difference: float = 0.10,
    *,
    n_tasks: int,
    n_seeds: int,
    icc: float = 0.5,
    alpha: float = 0.05,
    coupling: float = 0.0,
    n_sim: int = 2000,
    seed: int = 0,
) -> PowerEstimate:
    """Power to detect a true final-success ``difference`` between two arms (see the module
    docstring for the model and the test).

    Args:
        p_baseline: the reference arm's final success rate (0..1).
        difference: the true difference arm - reference (fraction, 0.10 = 10 pp).
        n_tasks: tasks per seed (both arms run every task).
        n_seeds: seeds (repeated runs of every task by both arms).
        icc: task ICC, the correlation of two seeds' outcomes on one task (``[0, 1)``;
            :func:`power_from_pilot` measures it).
        alpha: two-sided level (the interval of :func:`contrasts` at ``ci = 1 - alpha``).
        coupling: share of (seed, task) pairs where both arms' outcomes share one random draw.
        n_sim: simulated experiments; the result's ``mc_se`` is its precision.
        seed: seed of the simulation.

    Example:
        >>> round(power_estimate(0.4, 0.10, n_tasks=50, n_seeds=3, n_sim=500).power, 1)
        0.6
    """
    _check(p_baseline, difference, n_tasks, n_seeds, icc, alpha, coupling, n_sim)
    mu, sigma = _task_model(p_baseline, icc)
    delta = _location(p_baseline + difference, sigma) - mu
    crit = _t_quantile(1.0 - alpha / 2.0, n_tasks - 1)
    rng = np.random.default_rng([seed, n_tasks, n_seeds])
    batch = max(1, _BATCH_CELLS // (n_tasks * n_seeds))
    hits = 0.0
    for start in range(0, n_sim, batch):
        m = min(batch, n_sim - start)
        y_arm, y_ref = _simulate(
            mu, sigma, delta, n_tasks=n_tasks, n_seeds=n_seeds, coupling=coupling, n_sim=m,
            rng=rng,
        )  # fmt: skip
        hits += float(_detected(y_arm, y_ref, crit).sum())
    power = hits / n_sim
    return PowerEstimate(
        power=power,
        mc_se=math.sqrt(max(power * (1.0 - power), 1e-12) / n_sim),
        p_baseline=float(p_baseline),
        difference=float(difference),
        n_tasks=n_tasks,
        n_seeds=n_seeds,
        icc=float(icc),
        alpha=float(alpha),
        coupling=float(coupling),
        n_sim=n_sim,
        mu=mu,
        sigma=sigma,
        delta=delta,
    )


def tasks_needed(
    p_baseline: float,
    difference: float = 0.10,
    n_seeds: int = 1,
    power: float = 0.8,
    *,
    icc: float = 0.5,
    alpha: float = 0.05,
    coupling: float = 0.0,
    n_sim: int = 2000,
    seed: int = 0,
    max_tasks: int = 100_000,
) -> int:
    """The fewest tasks for which :func:`power_estimate` (same arguments and ``seed``)
    reaches ``power``: ``power_estimate(n)`` reaches it and ``power_estimate(n - 1)`` does not
    (found by doubling, then bisection).

    Raises:
        InvalidInputError: ``power`` not in (0, 1), ``difference`` zero, or more than
            ``max_tasks`` tasks needed.

    Example:
        >>> tasks_needed(0.4, 0.3, n_seeds=2, n_sim=500) < 60
        True
    """
    if not 0.0 < power < 1.0:
        raise InvalidInputError(f"power must be in (0, 1), got {power!r}")
    if difference == 0.0:
        raise InvalidInputError("difference must be non-zero: no number of tasks detects 0")

    def reaches(n: int) -> bool:
        est = power_estimate(
            p_baseline, difference, n_tasks=n, n_seeds=n_seeds, icc=icc, alpha=alpha,
            coupling=coupling, n_sim=n_sim, seed=seed,
        )  # fmt: skip
        return est.power >= power

    lo, hi = 2, 4
    if reaches(lo):
        return lo
    while not reaches(hi):
        if hi >= max_tasks:
            raise InvalidInputError(
                f"more than max_tasks={max_tasks} tasks are needed for power {power} to detect "
                f"{difference:+} at p_baseline {p_baseline}"
            )
        lo, hi = hi, min(2 * hi, max_tasks)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return hi


def pilot_rates(results: pd.DataFrame, arm: str) -> tuple[float, float, int, int]:
    """``(final success, task ICC, n_tasks, n_seeds)`` of ``arm`` in a results table.

    Final success is per (seed, task) (solved at any attempt). The ICC is the one-way ANOVA
    estimate over tasks with the seeds as replicates (``(MSB - MSW) / (MSB + (k - 1) MSW)``,
    ``k`` the mean seeds per task), clipped to ``[0, 0.99]``; with a single seed it cannot be
    measured and is NaN.

    Raises:
        InvalidInputError: ``arm`` is not in the results.
    """
    from costeer_lab.experiment._metrics import _task_outcomes

    out = _task_outcomes(validate_results(results))
    arms = sorted(str(a) for a in out["arm"].unique())
    if arm not in arms:
        raise InvalidInputError(f"arm {arm!r} is not in the results; arms: {arms}")
    g = out[out["arm"] == arm].assign(y=lambda f: f["solved_at"].notna().astype("float64"))
    p = float(g["y"].mean())
    by_task = g.groupby("task_id")["y"]
    n_tasks, n_seeds = int(by_task.ngroups), int(g["seed"].nunique())
    sizes = by_task.size().to_numpy(dtype=np.float64)
    if n_seeds < 2 or n_tasks < 2 or (sizes < 2).all():
        return p, float("nan"), n_tasks, n_seeds
    means = by_task.mean().to_numpy(dtype=np.float64)
    n, k = float(sizes.sum()), float(sizes.mean())
    msb = float((sizes * (means - p) ** 2).sum() / (n_tasks - 1))
    resid = g["y"].to_numpy() - g["task_id"].map(by_task.mean()).to_numpy()
    msw = float((resid**2).sum() / (n - n_tasks)) if n > n_tasks else 0.0
    denom = msb + (k - 1.0) * msw
    icc = (msb - msw) / denom if denom > 0 else 0.0
    return p, float(min(max(icc, 0.0), 0.99)), n_tasks, n_seeds


def power_from_pilot(
    results: pd.DataFrame,
    arm: str,
    difference: float = 0.10,
    *,
    n_tasks: int | None = None,
    n_seeds: int | None = None,
    icc: float | None = None,
    **kwargs: Any,
) -> PowerEstimate:
    """:func:`power_estimate` with the baseline rate and task ICC read from a pilot's results.

    ``arm`` is the reference arm of the planned contrast; ``n_tasks`` / ``n_seeds`` default
    to the pilot's, ``icc`` to the pilot's estimate (:func:`pilot_rates`; with one pilot seed
    it cannot be measured and must be given). A pilot rate of 0 or 1 is moved half a task
    inwards so the model stays defined. ``kwargs`` go to :func:`power_estimate`.

    Raises:
        InvalidInputError: ``arm`` is absent, or the ICC cannot be measured and is not given.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> est = power_from_pilot(example_results(), "rag", 0.2, icc=0.5, n_sim=200)
        >>> est.p_baseline, est.n_tasks
        (0.5, 2)
    """
    p, measured, pilot_tasks, pilot_seeds = pilot_rates(results, arm)
    if icc is None:
        if math.isnan(measured):
            raise InvalidInputError(
                f"the pilot's task ICC of {arm!r} needs two or more seeds; pass icc="
            )
        icc = measured
    edge = 0.5 / max(pilot_tasks * pilot_seeds, 1)
    p = min(max(p, edge), 1.0 - edge)
    return power_estimate(
        p, difference, n_tasks=n_tasks or pilot_tasks, n_seeds=n_seeds or pilot_seeds,
        icc=icc, **kwargs,
    )  # fmt: skip


def power_table(
    results: pd.DataFrame,
    references: Sequence[str],
    difference: float = 0.10,
    *,
    power: float = 0.8,
    icc: float = 0.5,
    n_sim: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """The power of this experiment's design, read as a pilot, per stage and reference arm.

    For each stage and each arm of ``references``: its final success and task ICC
    (:func:`pilot_rates`; ``icc`` when one seed leaves it unmeasured), the power to detect
    ``difference`` (``-difference`` when the reference is too close to 1) with the stage's
    tasks and seeds, and the tasks needed for ``power`` at those seeds.

    Example:
        >>> from costeer_lab.testing import example_results
        >>> power_table(example_results(), ["rag"], n_sim=200)["tasks_needed"].tolist()[0] > 2
        True
    """
    r = validate_results(results)
    stage = r["stage"].astype(str) if "stage" in r else pd.Series("", index=r.index)
    rows = []
    for st in dict.fromkeys(stage):
        g = r[stage == st]
        for ref in dict.fromkeys(references):
            if ref not in set(g["arm"].astype(str)):
                continue
            p, measured, n_tasks, n_seeds = pilot_rates(g, ref)
            used = icc if math.isnan(measured) else measured
            edge = 0.5 / max(n_tasks * n_seeds, 1)
            p = min(max(p, edge), 1.0 - edge)
            d = difference if 0.0 < p + difference < 1.0 else -difference
            kw: dict[str, Any] = {"icc": used, "n_sim": n_sim, "seed": seed}
            est = power_estimate(p, d, n_tasks=max(n_tasks, 2), n_seeds=n_seeds, **kw)
            try:
                need: float = tasks_needed(p, d, n_seeds, power, **kw)
            except InvalidInputError:
                need = float("nan")
            rows.append(
                {
                    "stage": st, "reference": ref, "reference_success": p, "icc": used,
                    "icc_measured": not math.isnan(measured), "n_tasks": n_tasks,
                    "n_seeds": n_seeds, "difference": d, "power": est.power,
                    "tasks_needed": need,
                }
            )  # fmt: skip
    cols = ["stage", "reference", "reference_success", "icc", "icc_measured", "n_tasks"]
    return pd.DataFrame(rows, columns=[*cols, "n_seeds", "difference", "power", "tasks_needed"])
