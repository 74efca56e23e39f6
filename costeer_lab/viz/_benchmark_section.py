"""The report section of RD-Agent's factor benchmark metrics (factor experiments only)."""

from __future__ import annotations

import pandas as pd

from costeer_lab.experiment import BENCHMARK_COLUMNS, benchmark_metrics
from costeer_lab.viz._report_layout import section

__all__ = ["BENCHMARK_SECTION", "benchmark_section"]

#: Heading of the section; it follows the report's own sections.
BENCHMARK_SECTION = "Factor benchmark (RD-Agent metrics)"


def _table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, border=0, float_format=lambda x: f"{x:.4g}", na_rep="–")


def benchmark_section(results: pd.DataFrame) -> str:
    """The HTML section, or ``""`` when the results hold no factor checks (no ``format_ok``
    column, or no attempt with a compared output).

    Example:
        >>> from costeer_lab.testing import example_results
        >>> benchmark_section(example_results())
        ''
    """
    if any(c not in results.columns for c in BENCHMARK_COLUMNS):
        return ""
    if not results["ran"].any() and not results["format_ok"].any():
        return ""
    parts = []
    for by in ("category", "difficulty"):
        parts.append(f"<h3>Per {by}</h3>{_table(benchmark_metrics(results, by=by))}")
    accepted = (
        results[results["success"]]
        .groupby(["arm", "accepted_by"])
        .size()
        .rename("successes")
        .reset_index()
    )
    note = (
        '<p class="note">Over every attempt of every seed: exec_success = the code ran, '
        "format_success = its output passed the format checks, corr_mean / corr_max = mean per-"
        "date correlation with the truth, accuracy@t = share of attempts whose equal-value ratio "
        "is at least t; task_success = the project's own verdict (solved tasks). "
        "Successes by the check that accepted them (equal values, or correlation for a "
        "rescaled factor):</p>"
    )
    body = "".join(parts) + note + _table(accepted)
    return section(BENCHMARK_SECTION, body)
