"""The report section of the factor benchmark metrics (factor experiments only): RD-Agent's
metrics as its benchmark code computes them, then the project's own, each with its definitions
and the attempts left out because they were not evaluated."""

from __future__ import annotations

import html
from collections.abc import Callable

import pandas as pd

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment import benchmark_metrics, rdagent_metrics
from costeer_lab.viz._report_layout import section

__all__ = ["BENCHMARK_SECTION", "benchmark_section"]

#: Heading of the section; it follows the report's own sections.
BENCHMARK_SECTION = "Factor benchmark (RD-Agent metrics and the project metrics)"

#: RD-Agent's metric definitions, as the section shows them.
RDAGENT_DEFINITIONS = (
    ("round", "one (arm, seed); its final implementation = each task's last attempt"),
    ("format", "mean(row-count ratio, index Jaccard), each NaN as 0; a number in [0, 1]"),
    ("Avg Run SR", "per factor: share of its rounds whose code ran and wrote a readable output"),
    ("Avg Format SR", "per factor: mean format"),
    (
        "Avg Correlation",
        "per factor: mean of corr (a failed round as 0), where corr = mean over "
        "dates of the per-date Pearson correlation, dates without one dropped",
    ),
    ("Max Correlation", "per factor: max of the same (a failure as 0)"),
    ("Max Accuracy", "per factor: max equal-value ratio (|diff| < 1e-6, NaN never equal)"),
    ("Avg Accuracy", "per factor: mean of equal-value ratio x format (failures skipped)"),
    ("group row / Average", "mean over the group's factors (NaN skipped) / NaN as 0, all factors"),
)
#: The project's metric definitions, as the section shows them.
PROJECT_DEFINITIONS = (
    ("attempts", "evaluated attempts, every attempt of every seed (not only final ones)"),
    ("attempt_run_rate", "share of attempts whose code ran to completion"),
    ("attempt_format_rate", "share whose output passed the project's format checks"),
    ("ic_mean_compared / ic_max_compared", "mean / max of the project's IC over compared ones"),
    ("attempt_accuracy@t", "share of attempts with equal-value ratio >= t (project tolerance)"),
    ("task_success", "share of (seed, task) pairs solved by the project's verdict"),
)


def _table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, border=0, float_format=lambda x: f"{x:.4g}", na_rep="–")


def _definitions(rows: tuple[tuple[str, str], ...]) -> str:
    return _table(pd.DataFrame(rows, columns=["metric", "definition"]))


def _not_evaluated(n: int, what: str) -> str:
    if not n:
        return f'<p class="note">Every {what} was evaluated.</p>'
    return (
        f'<p class="warn">{n} {what}(s) not evaluated (the evaluation infrastructure failed, '
        "see infra_error): excluded from every metric, counted in <code>not_evaluated</code>."
        "</p>"
    )


def _family(compute: Callable[..., pd.DataFrame], results: pd.DataFrame, what: str) -> str:
    """The per-category and per-difficulty tables of one family, or a note naming what the
    results lack (written before that family existed)."""
    parts = []
    try:
        for by in ("category", "difficulty"):
            table = compute(results, by=by)
            parts.append(f"<h4>Per {by}</h4>{_table(table)}")
    except InvalidInputError as exc:
        return f'<p class="note">Not shown: {html.escape(str(exc))}</p>'
    key = "Average" if what == "final attempt" else "all"
    n = int(table.loc[table["difficulty"] == key, "not_evaluated"].sum())
    return _not_evaluated(n, what) + "".join(parts)


def benchmark_section(results: pd.DataFrame) -> str:
    """The HTML section, or ``""`` when the results hold no factor checks (no ``format_ok``
    column, or no attempt that ran).

    Example:
        >>> from costeer_lab.testing import example_results
        >>> benchmark_section(example_results())
        ''
    """
    if "format_ok" not in results.columns or "ran" not in results.columns:
        return ""
    if not results["ran"].astype(bool).any() and not results["format_ok"].astype(bool).any():
        return ""
    rd = (
        "<h3>RD-Agent's metrics (as its benchmark code computes them)</h3>"
        f"{_definitions(RDAGENT_DEFINITIONS)}"
        f"{_family(rdagent_metrics, results, 'final attempt')}"
    )
    own = (
        "<h3>The project's metrics (its own names; not comparable with RD-Agent's figures)</h3>"
        f"{_definitions(PROJECT_DEFINITIONS)}"
        f"{_family(benchmark_metrics, results, 'attempt')}"
    )
    if "accepted_by" not in results.columns:
        return section(BENCHMARK_SECTION, rd + own)
    accepted = (
        results[results["success"]]
        .groupby(["arm", "accepted_by"])
        .size()
        .rename("successes")
        .reset_index()
    )
    note = (
        '<p class="note">Successes by the project check that accepted them (equal values, or '
        "correlation for a rescaled factor):</p>"
    )
    return section(BENCHMARK_SECTION, rd + own + note + _table(accepted))
