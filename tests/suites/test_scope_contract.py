"""An implementation written from the contract alone is accepted; the grouping flipped is not.

Each implementation below was written from the task's description and the sentence of its
contract quoted next to it (not from the ground truth; most use another pandas route than the
reference). ``{G}`` marks where the contract's grouping goes: the flipped version swaps it
(grouped for ungrouped and back, or one grouping for the other), the mistake a coder makes
when the contract states the wrong scope.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costeer_lab.coders._contracts import contract_for
from costeer_lab.records import Workspace
from costeer_lab.suites import ScopeMismatchWarning, Suite, load_suite

from ._scope_refs import REFS

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "rdagent_factor_example.json"
HEAD = 'import numpy as np\nimport pandas as pd\ndf = pd.read_hdf("daily_pv.h5", key="data")\n'
BY_INST = '.groupby(level="instrument")'
STACKED = "over the whole table in (datetime, instrument) row order, WITHOUT grouping"
PER_INST = 'per instrument (grouped by "instrument", in date order)'
PER_DATE = 'per date across instruments (grouped by "datetime")'

#: task -> (sentences the contract states, body with {G} where its grouping goes, the
#: grouping the contract asks for, the flipped grouping)
IMPLS: dict[str, tuple[tuple[str, ...], str, str, str]] = {
    "ROC10": ((f'shift(10) of the "$close" values {PER_INST}',),
              'c = df["$close"]\nf = c / c{G}.shift(10) - 1\n', BY_INST, ""),
    "RANGE_MOVE": ((f'shift(1) of the "$close" values {PER_INST}',),
                   'c = df["$close"]\nf = (c - c{G}.shift(1)) / (df["$high"] - df["$low"])\n',
                   BY_INST, ""),
    "TS_RANK9": ((f'rolling(9, min_periods=9).rank(pct=True) of the "$close" values {PER_INST}',),
                 'f = df["$close"]{G}.rolling(9, min_periods=9).rank(pct=True)\n'
                 "f = f.reset_index(level=0, drop=True).reindex(df.index) if f.index.nlevels > 2 "
                 "else f.reindex(df.index)\n", BY_INST, ""),
    "CS_RANK_RET5": ((f'shift(5) of the "$close" values {PER_INST}',
                      f'rank(pct=True) of the "$close" values {PER_DATE}'),
                     'c = df["$close"]\nr = c / c{G}.shift(5) - 1\n'
                     'f = r.groupby(level="datetime").rank(pct=True)\n', BY_INST, ""),
    "RET_STD20": ((f'shift(1) of the "$close" values {PER_INST}',
                   f'rolling(20, min_periods=20).std() of the "$close" values {PER_INST}'),
                  'c = df["$close"]\nr = c / c{G}.shift(1) - 1\n'
                  "s = r{G}.rolling(20, min_periods=20).std()\n"
                  "s = s.droplevel(0) if s.index.nlevels > 2 else s\nf = s.reindex(df.index)\n",
                  BY_INST, ""),
    "PV_CORR10": ((f"rolling(10, min_periods=10).corr(another series) of the \"$close\" values "
                   f"{PER_INST}",),
                  'c, v = df["$close"], np.log(df["$volume"])\nkeys = {G}\n'
                  "f = pd.concat([c[keys == k].rolling(10, min_periods=10).corr(v[keys == k])\n"
                  "               for k in np.unique(keys)]).reindex(df.index)\n",
                  'np.asarray(df.index.get_level_values("instrument"))', "np.zeros(len(df))"),
    "MA10": ((f'rolling(10, min_periods=1).mean() of the "$close" values {PER_INST}',),
             'c = df["$close"]\nm = c{G}.rolling(10, min_periods=1).mean()\n'
             "m = m.droplevel(0) if m.index.nlevels > 2 else m\nf = m.reindex(df.index) / c\n",
             BY_INST, ""),
    "STK_RATIO_DIFF9": ((f'diff(9) of a value computed from "$close", "$high", "$low" {STACKED}: '
                         "each value is compared with the row 9 rows above it, which belongs to "
                         "another instrument",),
                        'p = (df["$close"] - df["$low"]) / (df["$high"] - df["$low"])\n'
                        "f = -(p - p{G}.shift(9))\n", "", BY_INST),
    "STK_PCT5": ((f'pct_change(5) of the "$close" values {STACKED}: each value is compared '
                  "with the row 5 rows above it, which belongs to another instrument",),
                 'c = df["$close"]\nf = c / c{G}.shift(5) - 1\n', "", BY_INST),
    "STK_VMA5": ((f'rolling(5).mean() of the "$volume" values {STACKED}: the window runs over '
                  "the rows above, which belong to other instruments",),
                 'v = df["$volume"]\nm = v{G}.rolling(5).mean()\n'
                 "m = m.droplevel(0) if m.index.nlevels > 2 else m\nf = m.reindex(df.index) / v\n",
                 "", BY_INST),
    "CS_VZ": ((f'transform(a function) of the "$volume" values {PER_DATE}',),
              'v = df["$volume"]\ng = v.groupby(level="{G}")\n'
              'f = (v - g.transform("mean")) / g.transform("std")\n', "datetime", "instrument"),
    "MIX_PCT_RANK": ((f'pct_change(3) of the "$close" values {STACKED}',
                      f'rank(pct=True) of the "$close" values {PER_DATE}'),
                     'c = df["$close"]\nr = c / c{G}.shift(3) - 1\n'
                     'f = r.groupby(level="datetime").rank(pct=True)\n', "", BY_INST),
    "MIX_SHIFT_DIFF": ((f'shift(1) of the "$close" values {PER_INST}',
                        f'diff(1) of the "$close" values {STACKED}'),
                       'c = df["$close"]\nr = c / c.groupby(level="instrument").shift(1) - 1\n'
                       "f = r - r{G}.shift(1)\n", "", BY_INST),
    "WIDE_RET5": ((f'pct_change(5) of the "$close" values {PER_INST}',),
                  'c = df["$close"]\nf = c / c{G}.shift(5) - 1\n', BY_INST, ""),
}  # fmt: skip


def implementation(task: str, grouping: str) -> Workspace:
    body = IMPLS[task][1].replace("{G}", grouping)
    save = f'f.astype("float64").to_frame("{task}").to_hdf("result.h5", key="data")\n'
    return Workspace({"main.py": HEAD + body + save})


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    doc = json.loads(EXAMPLE.read_text())
    del doc["CS_RANK_RET5"]["scope"]  # the declared scope is checked below; here: inferred
    doc.update({name: entry for name, (entry, _) in REFS.items() if name != "ELEM_CO"})
    folder = tmp_path_factory.mktemp("contract")
    path = folder / "bench.json"
    path.write_text(json.dumps(doc))
    return load_suite(path, data="synthetic", n_instruments=10, n_days=80, cache_dir=folder)


def verdict(suite: Suite, task: str, ws: Workspace) -> bool:
    ev = suite.evaluator(runner="inprocess")
    fb = ev.evaluate(suite.task(task), ws, suite.ground_truth(task))
    if not fb.final_decision:  # rejected on its values, not on its format
        assert "[ok] index" in (fb.return_checking or ""), fb.return_checking
        assert fb.details["equal_value_ratio"] < 0.5
    return bool(fb.final_decision)


@pytest.mark.parametrize("task", sorted(IMPLS))
def test_the_contract_states_the_steps_and_an_implementation_from_it_is_accepted(
    suite: Suite, task: str
) -> None:
    sentences, _, grouping, flipped = IMPLS[task]
    contract = contract_for(suite.task(task))
    for sentence in sentences:
        assert sentence in contract, (task, contract)
    assert verdict(suite, task, implementation(task, grouping)), task
    assert not verdict(suite, task, implementation(task, flipped)), task


def test_the_stacked_scope_sentence_says_not_to_group(suite: Suite) -> None:
    task = suite.task("STK_PCT5")
    assert task.extra["scope"] == "stacked_rows"
    contract = contract_for(task)
    assert "does NOT group its row-order steps by instrument" in contract
    assert 'group by the "instrument" index level' not in contract
    assert task.extra["reference_steps"] and task.extra["reference_steps"][0] in contract


def test_a_declared_scope_that_contradicts_the_reference_warns_and_its_contract_fails(
    tmp_path: Path,
) -> None:
    """What the loader did before scopes were inferred: ``time_series`` for every task. A coder
    that obeys that contract (groups by instrument) is rejected on a stacked reference."""
    entry = dict(REFS["STK_PCT5"][0], scope="time_series")
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"STK_PCT5": entry}))
    with pytest.warns(ScopeMismatchWarning, match=r"task 'STK_PCT5' declares scope 'time_series', "
                      r"but the reference applies pct_change\(5\)"):  # fmt: skip
        old = load_suite(path, n_instruments=10, n_days=80, cache_dir=tmp_path)
    contract = contract_for(old.task("STK_PCT5"))
    assert 'group by the "instrument" index level' in contract and "WITHOUT" not in contract
    obeying = implementation("STK_PCT5", BY_INST)
    assert not verdict(old, "STK_PCT5", obeying)
    assert verdict(old, "STK_PCT5", implementation("STK_PCT5", ""))  # what the truth does


def test_a_declared_scope_that_agrees_is_kept_without_warning(tmp_path: Path) -> None:
    suite = load_suite(EXAMPLE, n_instruments=4, n_days=20, cache_dir=tmp_path)
    task = suite.task("CS_RANK_RET5")  # the file declares "both"; the reference agrees
    assert task.extra["scope"] == "both"
    assert f'rank(pct=True) of the "$close" values {PER_DATE}' in contract_for(task)
    assert suite.task("ROC10").extra["scope"] == "time_series"  # inferred
