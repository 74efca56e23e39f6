"""Power estimate: monotone in tasks and difference, alpha at no difference, tasks_needed
consistent with it, the model hits its targets, pilot rates by hand, and the estimate agrees
with the detection rate of :func:`contrasts` on data simulated from the same model."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment import (
    contrasts,
    pilot_rates,
    power_estimate,
    power_from_pilot,
    power_table,
    tasks_needed,
)
from costeer_lab.experiment._power import _simulate, _task_model
from costeer_lab.testing import make_row


def _power(**kw: object) -> float:
    args: dict[str, object] = {"n_tasks": 40, "n_seeds": 2, "n_sim": 2000, "seed": 1}
    args.update(kw)
    p = args.pop("p", 0.4)
    d = args.pop("d", 0.1)
    return power_estimate(p, d, **args).power  # type: ignore[arg-type]


def test_power_grows_with_tasks_and_with_difference() -> None:
    by_tasks = [_power(n_tasks=n) for n in (10, 40, 160)]
    assert by_tasks[0] < by_tasks[1] < by_tasks[2]
    by_diff = [_power(d=d) for d in (0.05, 0.1, 0.2)]
    assert by_diff[0] < by_diff[1] < by_diff[2]
    assert by_diff[2] > 0.8


@pytest.mark.parametrize("alpha", [0.05, 0.10])
def test_no_difference_is_detected_at_about_alpha(alpha: float) -> None:
    n_sim = 4000
    rate = _power(d=0.0, n_tasks=50, alpha=alpha, n_sim=n_sim)
    assert abs(rate - alpha) < 3 * math.sqrt(alpha * (1 - alpha) / n_sim)


def test_tasks_needed_is_the_first_n_reaching_the_power() -> None:
    kw = {"icc": 0.5, "n_sim": 1000, "seed": 2}
    n = tasks_needed(0.4, 0.15, n_seeds=2, power=0.8, **kw)  # type: ignore[arg-type]
    assert power_estimate(0.4, 0.15, n_tasks=n, n_seeds=2, **kw).power >= 0.8  # type: ignore[arg-type]
    assert power_estimate(0.4, 0.15, n_tasks=n - 1, n_seeds=2, **kw).power < 0.8  # type: ignore[arg-type]
    # more seeds, fewer tasks
    assert tasks_needed(0.4, 0.15, n_seeds=5, **kw) < n  # type: ignore[arg-type]


@pytest.mark.parametrize(("p", "icc"), [(0.3, 0.0), (0.3, 0.5), (0.7, 0.8)])
def test_task_model_has_the_asked_mean_and_icc(p: float, icc: float) -> None:
    mu, sigma = _task_model(p, icc)
    rng = np.random.default_rng(0)
    y, _ = _simulate(mu, sigma, 0.0, n_tasks=4000, n_seeds=3, coupling=0.0, n_sim=1, rng=rng)
    rows = [
        make_row("ref", s, f"t{i}", 1, bool(y[0, i, s])) for i in range(4000) for s in range(3)
    ]
    rate, measured, n_tasks, n_seeds = pilot_rates(pd.DataFrame(rows), "ref")
    assert (n_tasks, n_seeds) == (4000, 3)
    assert rate == pytest.approx(p, abs=0.02)
    assert measured == pytest.approx(icc, abs=0.04)


def test_pilot_rates_by_hand() -> None:
    # tasks a..d over 2 seeds: a 1,1  b 1,0  c 0,0  d 0,0 -> p = 3/8;
    # task means 1, .5, 0, 0: MSB = 2 * (25 + 1 + 9 + 9) / 64 / 3 = 11/24, MSW = .5 / 4 = 1/8,
    # ICC = (11/24 - 1/8) / (11/24 + 1/8) = 4/7
    wins = {("a", 0): 1, ("a", 1): 1, ("b", 0): 1, ("b", 1): 0}
    rows = [make_row("ref", s, t, 1, bool(wins.get((t, s), 0))) for t in "abcd" for s in (0, 1)]
    rate, icc, n_tasks, n_seeds = pilot_rates(pd.DataFrame(rows), "ref")
    assert (rate, n_tasks, n_seeds) == (3 / 8, 4, 2)
    assert icc == pytest.approx(4 / 7)
    est = power_from_pilot(pd.DataFrame(rows), "ref", 0.2, n_tasks=30, n_sim=200)
    assert (est.p_baseline, est.icc, est.n_tasks, est.n_seeds) == (3 / 8, icc, 30, 2)


def test_pilot_with_one_seed_needs_an_icc() -> None:
    rows = pd.DataFrame([make_row("ref", 0, t, 1, t == "a") for t in "abcd"])
    assert math.isnan(pilot_rates(rows, "ref")[1])
    with pytest.raises(InvalidInputError, match="icc"):
        power_from_pilot(rows, "ref")
    assert power_from_pilot(rows, "ref", icc=0.3, n_sim=100).p_baseline == 0.25
    table = power_table(rows, ["ref"], n_sim=100)
    assert table[["reference", "icc", "icc_measured", "n_tasks"]].values.tolist() == [
        ["ref", 0.5, False, 4]
    ]


@pytest.mark.parametrize(
    "kw",
    [
        {"p_baseline": 0.0},
        {"p_baseline": 0.95, "difference": 0.1},
        {"n_tasks": 1},
        {"icc": 1.0},
        {"alpha": 0.0},
        {"coupling": 2.0},
    ],
)
def test_bad_inputs_are_refused(kw: dict[str, float]) -> None:
    args: dict[str, Any] = {"p_baseline": 0.4, "difference": 0.1, "n_tasks": 10}
    args.update(kw)
    p, d = args.pop("p_baseline"), args.pop("difference")
    with pytest.raises(InvalidInputError):
        power_estimate(p, d, n_seeds=2, n_sim=10, **args)


def test_estimate_matches_the_detection_rate_of_contrasts() -> None:
    """Simulate experiments from the model, run :func:`contrasts` (the real bootstrap) on each,
    and compare its detection rate with the estimate."""
    p, d, n_tasks, n_seeds, n_exp = 0.4, 0.2, 30, 2, 150
    est = power_estimate(p, d, n_tasks=n_tasks, n_seeds=n_seeds, n_sim=4000)
    rng = np.random.default_rng(7)
    y_arm, y_ref = _simulate(
        est.mu, est.sigma, est.delta, n_tasks=n_tasks, n_seeds=n_seeds, coupling=0.0,
        n_sim=n_exp, rng=rng,
    )  # fmt: skip
    detected = 0
    for e in range(n_exp):
        rows = [
            make_row(arm, s, f"t{i}", 1, bool(y[e, i, s]))
            for arm, y in (("rag_v2", y_arm), ("no_knowledge", y_ref))
            for i in range(n_tasks)
            for s in range(n_seeds)
        ]
        row = contrasts(pd.DataFrame(rows), n_boot=400, seed=e).iloc[0]
        detected += bool(row["lo"] > 0 or row["hi"] < 0)
    rate = detected / n_exp
    se = math.sqrt(est.power * (1 - est.power) / n_exp)
    assert 0.3 < est.power < 0.9  # a setting where the comparison is informative
    assert abs(rate - est.power) < 3 * se + 0.03
