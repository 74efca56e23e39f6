"""The report's factor benchmark section (issue 25): RD-Agent's metrics and the project's, each
with its definitions, and the attempts that were not evaluated marked.

Fails before issue 25: the section showed one table, the project's, labelled as RD-Agent's.
"""

from __future__ import annotations

import pandas as pd

from costeer_lab.experiment import RDAGENT_METRICS
from costeer_lab.viz._benchmark_section import (
    BENCHMARK_SECTION,
    PROJECT_DEFINITIONS,
    RDAGENT_DEFINITIONS,
    benchmark_section,
)
from tests.experiment.test_rdagent_metrics import ROWS


def test_both_families_with_their_definitions_and_the_not_evaluated_marked() -> None:
    page = benchmark_section(ROWS)
    assert BENCHMARK_SECTION in page
    rd, own = page.index("RD-Agent's metrics"), page.index("The project's metrics")
    assert rd < own
    for metric, _ in RDAGENT_DEFINITIONS:
        assert f"<td>{metric}</td>" in page[rd:own]
    for metric, _ in PROJECT_DEFINITIONS:
        assert f"<td>{metric}</td>" in page[own:]
    for label in RDAGENT_METRICS:
        assert f"<th>{label}</th>" in page[rd:own]
    # arm a: 4 final attempts not evaluated (F2 seed 1, F3 x 3); 4 attempts too
    assert '<p class="warn">4 final attempt(s) not evaluated' in page[rd:own]
    assert '<p class="warn">4 attempt(s) not evaluated' in page[own:]
    assert page[rd:own].count("<th>not_evaluated</th>") == 2


def test_older_results_show_the_project_family_and_name_what_is_missing() -> None:
    rd_columns = [c for c in ROWS.columns if c.startswith("rd_")]
    page = benchmark_section(ROWS.drop(columns=rd_columns))
    assert "Not shown: results lack the RD-Agent metric columns" in page
    assert "&#x27;rd_run_ok&#x27;" in page and "<th>attempt_run_rate</th>" in page
    everything = benchmark_section(ROWS[ROWS["evaluated"]])
    assert "Every final attempt was evaluated" in everything
    assert benchmark_section(pd.DataFrame({"arm": ["a"]})) == ""
