"""The scope analysis of a reference, checked against what the reference does when run.

The probe runs a reference on a synthetic daily_pv table and on copies: one where a single
instrument's row on one date changes (which cells move: the same instrument on later dates =
time-series, other instruments on that date = cross-sectional), and one where the instrument
names are reversed, so that the stacked row order changes (a reference whose output then
changes depends on which instrument sits in the row above: a stacked-rows step).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd
import pytest

from costeer_lab.suites._rdagent_data import daily_pv_frame
from costeer_lab.suites._scope import ScopeAnalysis, analyse_scope, scope_conflict

from ._scope_refs import HEAD, REFS

F = TypeVar("F", pd.DataFrame, pd.Series)
EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "rdagent_factor_example.json"
EXAMPLE_KINDS = {
    "ROC10": {"time_series"}, "RANGE_MOVE": {"time_series"}, "TS_RANK9": {"time_series"},
    "CS_RANK_RET5": {"time_series", "cross_sectional"}, "RET_STD20": {"time_series"},
    "PV_CORR10": {"time_series"}, "MA10": {"time_series"},
}  # fmt: skip


def all_references() -> dict[str, tuple[str, frozenset[str]]]:
    doc = json.loads(EXAMPLE.read_text())
    refs = {n: (e["gt_code"], frozenset(EXAMPLE_KINDS[n])) for n, e in doc.items()}
    refs.update({n: (e["gt_code"], kinds) for n, (e, kinds) in REFS.items()})
    return refs


def run(code: str, frame: pd.DataFrame, folder: Path) -> pd.Series:
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_hdf(folder / "daily_pv.h5", key="data")
    here = os.getcwd()
    os.chdir(folder)
    try:
        exec(compile(code, "main.py", "exec"), {"__name__": "__main__"})  # trusted test code
    finally:
        os.chdir(here)
    out = pd.read_hdf(folder / "result.h5", key="data")
    return (out.iloc[:, 0] if isinstance(out, pd.DataFrame) else out).astype("float64")


def moved(a: pd.Series, b: pd.Series) -> pd.Series:
    b = b.reindex(a.index)
    same = np.isclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True)
    return pd.Series(~same, index=a.index)


def probe(code: str, folder: Path) -> frozenset[str]:
    """The kinds of step the reference shows when run (see the module docstring)."""
    frame = daily_pv_frame("synthetic", 8, 60, seed=3)
    names = sorted(frame.index.get_level_values("instrument").unique())
    dates = sorted(frame.index.get_level_values("datetime").unique())
    reverse = dict(zip(names, names[::-1], strict=True))

    def renamed(f: F) -> F:
        return f.rename(index=reverse, level="instrument").sort_index()

    base = run(code, frame, folder / "base")
    base_r = renamed(run(code, renamed(frame), folder / "rev"))
    kinds = {"stacked_rows"} if moved(base, base_r).any() else set()
    for k, t0 in ((names[3], 30), (names[2], 40), (names[5], 50)):
        t = next(d for d in dates[t0:] if frame.loc[(d, k)].notna().all())
        for factor in (3.0, 1 / 3):
            bumped = frame.copy()
            bumped.loc[(t, k)] *= factor
            here = moved(base, run(code, bumped, folder / "bump"))
            there = moved(base_r, renamed(run(code, renamed(bumped), folder / "bump_r")))
            both = here & there  # an order effect moves different cells in the two orders
            inst = both.index.get_level_values("instrument")
            date = both.index.get_level_values("datetime")
            if both[(inst == k) & (date > t)].any():
                kinds.add("time_series")
            if both[(inst != k) & (date == t)].any():
                kinds.add("cross_sectional")
    return frozenset(kinds)


@pytest.mark.parametrize("name", sorted(all_references()))
def test_the_static_kinds_are_what_the_reference_does_when_run(name: str, tmp_path: Path) -> None:
    code, expected = all_references()[name]
    assert analyse_scope(code).kinds == expected
    assert probe(code, tmp_path) == expected


def test_a_stacked_step_is_described_with_its_lag_and_the_other_instrument() -> None:
    analysis = analyse_scope(REFS["STK_PCT5"][0]["gt_code"])
    assert analysis.scope == "stacked_rows"
    assert analysis.describe() == [
        'pct_change(5) of the "$close" values over the whole table in (datetime, instrument) '
        "row order, WITHOUT grouping: each value is compared with the row 5 rows above it, "
        "which belongs to another instrument"
    ]


@pytest.mark.parametrize(
    ("body", "kinds", "scope"),
    [
        ('for _, g in df.groupby(level="instrument"):\n    g["$close"].diff(2)\n',
         {"time_series"}, "time_series"),
        ('w = df["$close"].unstack()\nf = w.rank(axis=1).stack()\n',
         {"cross_sectional"}, "cross_sectional"),
        ('f = df[["$close", "$open"]].diff(axis=1)\n', set(), "elementwise"),
        ('f = df.swaplevel().sort_index()["$close"].shift(1)\n', {"stacked_rows"}, "stacked_rows"),
        ('f = df.groupby(level=["datetime", "instrument"])["$close"].shift(1)\n', set(),
         "elementwise"),
        ("def ret(s):\n    return s.pct_change(2)\nf = ret(df['$close'])\n", {"stacked_rows"},
         "stacked_rows"),
        ("def ret(s):\n    return s.pct_change(2)\n"
         "f = df['$close'].groupby(level='instrument').apply(ret)\n", {"time_series"},
         "time_series"),
    ],
)  # fmt: skip
def test_groups_loops_wide_tables_axes_orders_and_functions(
    body: str, kinds: set[str], scope: str
) -> None:
    analysis = analyse_scope(HEAD + body)
    assert analysis.kinds == kinds and analysis.scope == scope


def test_instrument_major_order_is_named() -> None:
    (step,) = analyse_scope(HEAD + 'f = df.swaplevel().sort_index()["$close"].shift(1)\n').steps
    assert "(instrument, datetime) row order" in step.describe()


def test_code_that_does_not_parse_has_no_steps() -> None:
    assert analyse_scope("def (:") == ScopeAnalysis()


@pytest.mark.parametrize(
    ("declared", "name", "conflicts"),
    [
        ("time_series", "STK_PCT5", True),
        ("both", "MIX_PCT_RANK", True),
        ("stacked_rows", "MIX_PCT_RANK", False),
        ("stacked_rows", "WIDE_RET5", True),
        ("time_series", "CS_VZ", True),
        ("cross_sectional", "CS_VZ", False),
        ("both", "WIDE_RET5", False),
        ("elementwise", "WIDE_RET5", True),
        ("time_series", "ELEM_CO", False),
    ],
)
def test_a_declared_scope_conflicts_only_with_steps_it_does_not_admit(
    declared: str, name: str, conflicts: bool
) -> None:
    reason = scope_conflict(declared, analyse_scope(REFS[name][0]["gt_code"]))
    assert (reason is not None) == conflicts
