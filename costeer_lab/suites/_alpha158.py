"""The ``alpha158`` suite: Qlib's 158 Alpha158 features as factor-coding tasks.

Candidate contract (also in every task's ``extra["contract"]`` and ``Suite.instructions``):
``main.py`` runs in a directory holding ``daily_pv.parquet`` — the synthetic daily panel
(index ``(datetime, instrument)``, columns ``open high low close volume vwap``, see
:mod:`costeer_lab.suites._panel`) — and writes ``result.parquet``: one float column (named
after the feature) with the same ``(datetime, instrument)`` MultiIndex. Values are computed per
instrument, never across instruments.

Operator semantics (Qlib's, made explicit; every task lists the ones it uses in
``variables``): see :data:`OPERATORS`. Splits: ``train`` holds the rolling features with
windows 5 and 20 (seed knowledge), ``test`` everything else. ``holdout_families`` keeps whole
formula families out of ``train`` (every window in ``test``), so that a target's own formula is
never in the seed knowledge and copying a same-formula task with another window is impossible.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from costeer_lab.errors import InvalidInputError
from costeer_lab.evaluate._protocol import Evaluator, Runner
from costeer_lab.records import Task, Workspace
from costeer_lab.suites._alpha158_code import ground_truth_code
from costeer_lab.suites._alpha158_days import first_value_day
from costeer_lab.suites._alpha158_defs import (
    FAMILIES,
    FEATURES,
    FIELD_MEANINGS,
    FeatureSpec,
    describe,
)
from costeer_lab.suites._options import whole_number
from costeer_lab.suites._panel import ensure_panel
from costeer_lab.suites._suite import Suite

__all__ = ["CONTRACT", "OPERATORS", "TRAIN_WINDOWS", "alpha158_suite"]

TRAIN_WINDOWS = (5, 20)

OPERATORS = {
    "Ref": "Ref(x, n): value of x n rows earlier for the same instrument (NaN before the first).",
    "Mean": "Mean(x, d): mean of the non-missing x in the last d rows (rolling, min_periods=1).",
    "Std": "Std(x, d): sample standard deviation (ddof=1) over the last d rows; NaN with < 2.",
    "Sum": "Sum(x, d): sum of the non-missing x in the last d rows (min_periods=1).",
    "Max": "Max(x, d): largest x in the last d rows (min_periods=1).",
    "Min": "Min(x, d): smallest x in the last d rows (min_periods=1).",
    "Slope": "Slope(x, d): slope of the least-squares line of the last d values against the "
    "row position (missing values skipped; NaN with < 2 values).",
    "Rsquare": "Rsquare(x, d): R-squared of that line; NaN when the rolling std is ~0 "
    "(np.isclose(std, 0, atol=2e-5)).",
    "Resi": "Resi(x, d): today's value minus that line's fitted value at today's position.",
    "Quantile": "Quantile(x, d, q): q-quantile of the last d values (linear interpolation).",
    "Rank": "Rank(x, d): percentile of today's value among the last d non-missing values "
    "(average rank of ties divided by their count; pandas rolling rank(pct=True)).",
    "IdxMax": "IdxMax(x, d): 1-based position of the largest value in the last d rows "
    "(1 = oldest row of the window; a partial window starts at the first row; first max wins).",
    "IdxMin": "IdxMin(x, d): like IdxMax for the smallest value.",
    "Corr": "Corr(x, y, d): rolling Pearson correlation over the last d rows (min_periods=1); "
    "NaN where the rolling std of x or y is ~0 (np.isclose(std, 0, atol=2e-5)).",
    "Greater": "Greater(a, b): elementwise maximum (NaN if a value is missing).",
    "Less": "Less(a, b): elementwise minimum (NaN if a value is missing).",
    "Abs": "Abs(x): absolute value.",
    "Log": "Log(x): natural logarithm.",
    ">": "a>b, a<b: 1.0 when true, 0.0 otherwise (also 0.0 when a value is missing).",
}

CONTRACT = """\
Write main.py. It runs in a directory that holds daily_pv.parquet: a pandas DataFrame indexed by
(datetime, instrument) with float columns open, high, low, close, volume, vwap (suspended days
are rows with every value missing). Compute the factor for every row, per instrument (group by
the "instrument" index level, sort each group by datetime, never mix instruments), and write
result.parquet: a DataFrame with exactly one float column named {name}, indexed by the same
(datetime, instrument) MultiIndex. The factor is NaN on suspended days. Only pandas and numpy
are available; rolling windows are the last d rows of the instrument with partial windows at the
start (min_periods=1)."""


def _variables(spec: FeatureSpec, fields: tuple[str, ...]) -> dict[str, str]:
    out = {f"${f}": FIELD_MEANINGS[f].split(": ", 1)[1] for f in fields}
    for op, text in OPERATORS.items():
        token = op if not op.isalpha() else f"{op}("
        if token in spec.formula:
            out[op if op.isalpha() else "a>b, a<b"] = text
    if spec.window:
        out["d"] = f"window length: {spec.window} trading days"
    return out


def make_task(spec: FeatureSpec) -> Task:
    """The public :class:`Task` of one feature."""
    text, difficulty, fields = describe(spec)
    return Task(
        id=f"alpha158/{spec.name}",
        name=spec.name,
        description=text,
        formulation=spec.formula,
        variables=_variables(spec, fields),
        category=spec.family,
        difficulty=difficulty,
        extra={
            "window": spec.window,
            "input_file": "daily_pv.parquet",
            "output_file": "result.parquet",
            "output_column": spec.name,
            "scope": "time_series",
            "contract": CONTRACT.format(name=spec.name),
        },
    )


def _families(names: Sequence[str]) -> frozenset[str]:
    if isinstance(names, str):
        names = [names]
    unknown = sorted(set(names) - set(FAMILIES))
    if unknown:
        raise InvalidInputError(
            f"alpha158 holdout_families: unknown families {unknown}; expected some of {FAMILIES}"
        )
    return frozenset(names)


def alpha158_suite(
    n_instruments: int = 50,
    n_days: int = 500,
    seed: int = 0,
    cache_dir: str | Path | None = None,
    evaluator_runner: str | Runner | None = None,
    holdout_families: Sequence[str] = (),
) -> Suite:
    """Build the suite; the panel is generated into ``cache_dir`` on first use.

    Args:
        n_instruments: instruments of the synthetic panel (use fewer in tests).
        n_days: trading days of the synthetic panel.
        seed: seed of the panel generator.
        cache_dir: where the panel file goes (default ``get_settings().cache_dir``).
        evaluator_runner: default runner of :meth:`Suite.evaluator` (``None`` = the sandbox).
        holdout_families: families (``"STD"``, ``"QTLD"``, ... see
            :data:`~costeer_lab.suites._alpha158_defs.FAMILIES`) none of whose features is in
            ``train``; their windows 5 and 20 go to ``test``.

    Raises:
        InvalidInputError: an unknown family in ``holdout_families``, or an option that is not
            a whole number in its range. Targets the panel is too short for (every value
            missing) are refused by :meth:`Suite.check_targets`.

    Example:
        >>> suite = alpha158_suite(5, 80, cache_dir=__import__("tempfile").mkdtemp())
        >>> len(suite.tasks), suite.task("alpha158/MA5").formulation
        (158, 'Mean($close, 5)/$close')
    """
    if cache_dir is None:
        from costeer_lab.settings import get_settings

        cache_dir = get_settings().cache_dir
    held = _families(holdout_families)
    whole_number("alpha158", "n_instruments", n_instruments, minimum=1)
    whole_number("alpha158", "n_days", n_days, minimum=2)
    whole_number("alpha158", "seed", seed, minimum=0, maximum=2**32 - 1)
    panel = ensure_panel(cache_dir, n_instruments, n_days, seed)
    specs = {f"alpha158/{s.name}": s for s in FEATURES}
    tasks = [make_task(s) for s in FEATURES]
    train = [tid for tid, s in specs.items() if s.window in TRAIN_WINDOWS and s.family not in held]
    test = [tid for tid in specs if tid not in set(train)]
    inputs = {"daily_pv.parquet": panel}

    def ground_truth(task_id: str) -> Workspace:
        return Workspace({"main.py": ground_truth_code(specs[task_id])})

    def evaluator(**kwargs: Any) -> Evaluator:
        from costeer_lab.evaluate._factor import FactorEvaluator

        kwargs.setdefault("inputs", inputs)
        if evaluator_runner is not None:
            kwargs.setdefault("runner", evaluator_runner)
        return FactorEvaluator(**kwargs)

    def check_targets(task_ids: Sequence[str]) -> None:
        need = {tid: first_value_day(specs[tid].formula) for tid in task_ids if tid in specs}
        if need and max(need.values()) > n_days:
            worst = max(need, key=lambda tid: need[tid])
            raise InvalidInputError(
                f"alpha158 option n_days: {n_days} days leave every value of {worst!r} "
                f"({specs[worst].formula}) missing; the selected tasks need n_days >= "
                f"{need[worst]}"
            )

    return Suite(
        "alpha158",
        tasks,
        ground_truth,
        evaluator,
        inputs=inputs,
        splits={"train": train, "test": test},
        instructions=CONTRACT.format(name="<feature name>"),
        check_targets=check_targets,
    )
