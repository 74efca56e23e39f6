"""The documented promise of the bootstrap intervals, pinned: "the interval is widened to
contain the point estimate" (module docstring of ``costeer_lab.experiment._metrics``)."""

from __future__ import annotations

import pandas as pd
import pytest

from costeer_lab.experiment import success_curve, success_lift
from costeer_lab.testing import make_row


def _results() -> pd.DataFrame:
    """Two arms, one seed, five tasks of one attempt: 1 and 3 of them solved."""
    rows = [make_row("no_knowledge", 0, f"t{i}", 1, i < 1) for i in range(5)]
    rows += [make_row("rag", 0, f"t{i}", 1, i < 3) for i in range(5)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", range(8))
def test_the_interval_contains_the_point_estimate(seed: int) -> None:
    # one bootstrap replicate: its percentile "interval" is that replicate alone, which often
    # misses the point estimate; the widening must bring the point in
    curve = success_curve(_results(), n_boot=1, seed=seed)
    assert (curve["ci_low"] <= curve["success_rate"]).all()
    assert (curve["success_rate"] <= curve["ci_high"]).all()
    lift = success_lift(_results(), n_boot=1, seed=seed)
    assert (lift["ci_low"] <= lift["lift"]).all() and (lift["lift"] <= lift["ci_high"]).all()
