"""Task families and the contract text each family's code must follow (one place for all).

A suite states its contract itself in ``task.extra["contract"]`` (the ``alpha158`` and
``humaneval`` suites do); that text wins. Otherwise the family is guessed from public task fields
and a generic contract below is used.
"""

from __future__ import annotations

import re
from typing import Literal

from costeer_lab.records import Task

__all__ = [
    "FACTOR_CONTRACT",
    "FUNCTION_CONTRACT",
    "GENERIC_CONTRACT",
    "TaskFamily",
    "contract_for",
    "factor_fields",
    "factor_io",
    "task_family",
]

TaskFamily = Literal["factor", "function", "generic"]

#: Input and output files of factor tasks (overridable with ``task.extra`` keys of those names).
FACTOR_INPUT = "daily_pv.parquet"
FACTOR_OUTPUT = "result.parquet"

FACTOR_CONTRACT = """\
Write main.py, a complete Python script; it runs as __main__ in a directory holding {input}.
- Read the daily price-volume panel with pandas: `df = pd.read_parquet("{input}")`. Its index is
  a MultiIndex (datetime, instrument); its float columns are the data fields of the formulation
  without the "$" ($close is column "close"; usually open, high, low, close, volume, vwap).
- Compute the factor per instrument: group by the "instrument" index level and sort each group
  by datetime so that rolling windows and shifts never mix instruments.
- Write the result with `result.to_parquet("{output}")`: a DataFrame with exactly one float
  column named "{name}", indexed by the same (datetime, instrument) MultiIndex as the input.
- Use only numpy and pandas; no network, no other files, no plotting."""

FUNCTION_CONTRACT = """\
Write the complete Python function described below (signature and docstring given), including
any imports and helper functions it needs, as one module. Keep the exact function name and
signature; do not print, read input or write files; do not include tests or example calls."""

GENERIC_CONTRACT = """\
Write one complete, self-contained Python program that implements the task. It runs as __main__;
use only the standard library, numpy and pandas."""

_FIELD = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*")


def task_family(task: Task) -> TaskFamily:
    """``task.extra["family"]`` when set, else ``function`` for tasks with a ``prompt`` and an
    ``entry_point`` (HumanEval style), ``factor`` when the formulation uses ``$fields``, else
    ``generic``.

    Example:
        >>> task_family(Task("a/MA5", "MA5", "5-day mean", formulation="Mean($close, 5)/$close"))
        'factor'
    """
    fam = task.extra.get("family")
    if fam in ("factor", "function", "generic"):
        return fam  # type: ignore[no-any-return]
    if "prompt" in task.extra and "entry_point" in task.extra:
        return "function"
    if _FIELD.search(task.formulation) or task.extra.get("kind") == "factor":
        return "factor"
    return "generic"


def factor_fields(task: Task) -> list[str]:
    """The ``$field`` names of a task's formulation, in order of first use."""
    seen: list[str] = []
    for m in _FIELD.finditer(task.formulation):
        if m.group(0) not in seen:
            seen.append(m.group(0))
    return seen


def factor_io(task: Task) -> tuple[str, str, str]:
    """``(input file, output file, output column)`` of a factor task (``task.extra`` keys
    ``input_file``, ``output_file``, ``output_column``; defaults: the contract's names)."""
    return (
        str(task.extra.get("input_file", FACTOR_INPUT)),
        str(task.extra.get("output_file", FACTOR_OUTPUT)),
        str(task.extra.get("output_column", task.name)),
    )


def contract_for(task: Task) -> str:
    """The contract text for the task's family (``task.extra["contract"]`` when present).

    Example:
        >>> "result.parquet" in contract_for(Task("x", "MA5", "", formulation="Mean($close, 5)"))
        True
    """
    given = task.extra.get("contract")
    if isinstance(given, str) and given.strip():
        return given.strip()
    family = task_family(task)
    if family == "factor":
        inp, out, column = factor_io(task)
        return FACTOR_CONTRACT.format(input=inp, output=out, name=column)
    if family == "function":
        return FUNCTION_CONTRACT
    return GENERIC_CONTRACT
