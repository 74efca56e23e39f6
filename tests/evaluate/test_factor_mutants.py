"""The mutant set over the example RD-Agent benchmark tasks (``data/rdagent_factor_example.json``).

Every mutant (a wrong window, sign, lag, lead, column, grouping, fill, ...) of a reference is
rejected, and named by its mismatch class; every equivalent rewrite (dtype change, dropped NaN
rows, swapped index levels, shift vs diff, ...) is accepted, and the feedback says which check
accepted it (a rescaled factor: the correlation path). Tick-rounded prices, HDF5 in and out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from costeer_lab.evaluate import FactorEvaluator
from costeer_lab.records import SingleFeedback, Workspace
from costeer_lab.suites import Suite, load_suite

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "rdagent_factor_example.json"
SAVE = 'result = factor.astype("float64")'


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return load_suite(
        EXAMPLE,
        data="synthetic_tick",
        n_instruments=15,
        n_days=120,
        seed=3,
        cache_dir=tmp_path_factory.mktemp("cache"),
    )


@pytest.fixture(scope="module")
def evaluator(suite: Suite) -> FactorEvaluator:
    ev = suite.evaluator(runner="inprocess")
    assert isinstance(ev, FactorEvaluator)
    return ev


def rewrite(suite: Suite, task: str, *edits: tuple[str, str], before_save: str = "") -> str:
    code = suite.ground_truth(task).code
    for old, new in edits:
        assert old in code, (task, old)
        code = code.replace(old, new)
    if before_save:
        code = code.replace(SAVE, before_save + "\n" + SAVE)
    return code


def run(ev: FactorEvaluator, suite: Suite, task: str, code: str) -> SingleFeedback:
    return ev.evaluate(suite.task(task), Workspace({"main.py": code}), suite.ground_truth(task))


_C = 'close.groupby(level="instrument")'
MUTANTS: list[tuple[str, str, tuple[tuple[str, str], ...], str, set[str] | None]] = [
    # (id, task, replacements, line before saving, accepted mismatch classes)
    ("roc-window", "ROC10", ((".shift(10)", ".shift(9)"),), "", {"window", "values"}),
    ("roc-sign", "ROC10", (), "factor = -factor", {"sign"}),
    ("roc-lag", "ROC10", (), 'factor = factor.groupby(level="instrument").shift(1)', {"lag"}),
    ("roc-lead", "ROC10", (), 'factor = factor.groupby(level="instrument").shift(-1)', {"lead"}),
    ("roc-column", "ROC10", (('close = df["$close"]', 'close = df["$open"]'),), "", None),
    ("roc-no-groupby", "ROC10", ((_C + ".shift(10)", "close.shift(10)"),), "", None),
    ("roc-fillna", "ROC10", (), "factor = factor.fillna(0.0)", {"nan_pattern"}),
    ("move-inf-to-0", "RANGE_MOVE", (), "factor = factor.replace([np.inf, -np.inf], 0.0)", None),
    ("tsrank-window-10", "TS_RANK9", (("rolling(9, min_periods=9)", "rolling(10)"),), "", None),
    (
        "csrank-no-groupby",
        "CS_RANK_RET5",
        (('.groupby(level="datetime").rank', ".rank"),),
        "",
        None,
    ),
    (
        "csrank-by-instrument",
        "CS_RANK_RET5",
        (('level="datetime"', 'level="instrument"'),),
        "",
        None,
    ),
    (
        "std-window",
        "RET_STD20",
        (("rolling(20, min_periods=20)", "rolling(19, min_periods=19)"),),
        "",
        None,
    ),
    ("corr-raw-volume", "PV_CORR10", (("np.log(df[", "(df["),), "", None),
    ("corr-min-periods", "PV_CORR10", (("min_periods=10", "min_periods=2"),), "", {"nan_pattern"}),
]

EQUIVALENTS: list[tuple[str, str, tuple[tuple[str, str], ...], str, str]] = [
    # (id, task, replacements, line before saving, accepting check)
    ("float32", "ROC10", (), 'factor = factor.astype("float32")', "equal_values"),
    ("dropna", "RET_STD20", (), "factor = factor.dropna()", "equal_values"),
    ("swaplevel", "TS_RANK9", (), "factor = factor.swaplevel().sort_index()", "equal_values"),
    (
        "diff-for-shift",
        "RANGE_MOVE",
        (
            (
                'df["$close"] - df["$close"].groupby(level="instrument").shift(1)',
                'df["$close"].groupby(level="instrument").diff()',
            ),
        ),
        "",
        "equal_values",
    ),
    (
        "inf-as-nan",
        "RANGE_MOVE",
        (),
        "factor = factor.replace([np.inf, -np.inf], np.nan)",
        "equal_values",
    ),
    (
        "series-output",
        "CS_RANK_RET5",
        (
            (
                'result = factor.astype("float64").to_frame("CS_RANK_RET5")',
                'result = factor.rename("x")',
            ),
        ),
        "",
        "equal_values",
    ),
    ("percent", "ROC10", (), "factor = factor * 100.0", "correlation"),
    (
        "demeaned-per-date",
        "CS_RANK_RET5",
        (),
        'factor = factor - factor.groupby(level="datetime").transform("mean")',
        "correlation",
    ),
]


@pytest.mark.parametrize(
    ("case", "task", "edits", "line", "classes"), MUTANTS, ids=[m[0] for m in MUTANTS]
)
def test_every_mutant_is_rejected_with_its_mismatch_class(
    evaluator: FactorEvaluator,
    suite: Suite,
    case: str,
    task: str,
    edits: tuple[tuple[str, str], ...],
    line: str,
    classes: set[str] | None,
) -> None:
    fb = run(evaluator, suite, task, rewrite(suite, task, *edits, before_save=line))
    assert fb.execution == "Executed successfully.", fb.execution
    assert fb.final_decision is False, str(fb)
    assert fb.details["accepted_by"] == ""
    mismatch = fb.details["mismatch"]
    if classes is not None:
        assert mismatch in classes, (case, mismatch)
    assert f"FactorMismatchError: {mismatch.replace('_', ' ')}" in fb.error_fingerprints
    assert "rows that differ" in (fb.return_checking or "")


@pytest.mark.parametrize(
    ("case", "task", "edits", "line", "check"), EQUIVALENTS, ids=[e[0] for e in EQUIVALENTS]
)
def test_every_equivalent_rewrite_is_accepted_and_says_by_which_check(
    evaluator: FactorEvaluator,
    suite: Suite,
    case: str,
    task: str,
    edits: tuple[tuple[str, str], ...],
    line: str,
    check: str,
) -> None:
    fb = run(evaluator, suite, task, rewrite(suite, task, *edits, before_save=line))
    assert fb.final_decision is True, str(fb)
    assert fb.details["accepted_by"] == check
    if check == "correlation":
        assert fb.details["equal_value_ratio"] < 0.5  # not equal: accepted as rescaled
        assert "SUCCESS (correlation" in (fb.return_checking or "")


def test_mismatch_classes_give_distinct_fingerprints(
    evaluator: FactorEvaluator, suite: Suite
) -> None:
    sign = run(evaluator, suite, "ROC10", rewrite(suite, "ROC10", before_save="factor = -factor"))
    edits = next(m[2] for m in MUTANTS if m[0] == "std-window")
    window = run(evaluator, suite, "RET_STD20", rewrite(suite, "RET_STD20", *edits))
    assert sign.error_fingerprints and window.error_fingerprints
    assert not set(sign.error_fingerprints) & set(window.error_fingerprints)


#: Affine transforms of the truth: accepted by correlation under the default rule
#: (``equal_or_scaled``), rejected with their class under the ``equal`` rule.
SCALED = [
    ("roc-plus-one", "ROC10", (("- 1\n", "\n"),), "offset"),
    ("tsrank-not-pct", "TS_RANK9", (("rank(pct=True)", "rank()"),), "scale"),
    (
        "std-ddof0",
        "RET_STD20",
        (("rolling(20, min_periods=20).std()", "rolling(20).std(ddof=0)"),),
        "scale",
    ),
]


@pytest.mark.parametrize(("case", "task", "edits", "cls"), SCALED, ids=[c[0] for c in SCALED])
def test_affine_transforms_depend_on_the_acceptance_rule(
    suite: Suite, case: str, task: str, edits: tuple[tuple[str, str], ...], cls: str
) -> None:
    code = rewrite(suite, task, *edits)
    default = suite.evaluator(runner="inprocess")
    assert isinstance(default, FactorEvaluator)
    fb = run(default, suite, task, code)
    assert fb.final_decision is True and fb.details["accepted_by"] == "correlation"
    strict_task = suite.task(task)
    strict_task = type(strict_task).from_dict(
        {**strict_task.to_dict(), "extra": {**strict_task.extra, "acceptance": "equal"}}
    )
    strict = default.evaluate(strict_task, Workspace({"main.py": code}), suite.ground_truth(task))
    assert strict.final_decision is False and strict.details["mismatch"] == cls
    assert "acceptance rule: equal" in (strict.return_checking or "")
