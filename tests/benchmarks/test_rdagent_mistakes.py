"""The planted ``grouping`` mistake of ``factor_bench --rdagent-file`` on real pandas data."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks._rdagent_mistakes import plant


def _stacked() -> pd.Series:
    idx = pd.MultiIndex.from_product(
        [pd.date_range("2024-01-01", periods=4), ["A", "B", "C"]], names=["datetime", "instrument"]
    )
    return pd.Series(np.arange(1.0, 13.0) ** 2, index=idx, name="close")


def _run(code: str) -> pd.Series:
    scope: dict[str, object] = {"s": _stacked(), "pd": pd}
    exec(compile(code, "<planted>", "exec"), scope)  # test data of the test's own making
    out = scope["x"]
    assert isinstance(out, pd.Series)
    return out


def test_grouping_makes_a_grouped_step_stacked_and_a_stacked_step_grouped() -> None:
    grouped = "x = s.groupby(level='instrument').diff(1)\n"
    stacked = plant("grouping", grouped, "result.h5")
    assert stacked is not None
    # stacked: each row minus the row above, which is another instrument of the same date
    assert _run(stacked).tolist()[1] == 4.0 - 1.0
    assert np.isnan(_run(grouped).tolist()[1])  # grouped: B's first row has no earlier value
    regrouped = plant("grouping", stacked, "result.h5")
    assert regrouped is not None
    pd.testing.assert_series_equal(_run(regrouped), _run(grouped))


def test_grouping_leaves_code_without_row_order_steps_alone() -> None:
    assert plant("grouping", "x = s * 2\n", "result.h5") is None
    assert plant("grouping", "x = s.groupby(level='datetime').rank()\n", "result.h5") is None


def test_grouping_skips_steps_whose_grouping_is_not_at_the_call() -> None:
    on_grouped_name = "g = s.groupby(level='instrument')\nx = g.pct_change(2)\n"
    assert plant("grouping", on_grouped_name, "result.h5") is None
    in_lambda = "x = s.groupby(level='instrument').transform(lambda v: v.diff())\n"
    assert plant("grouping", in_lambda, "result.h5") is None
