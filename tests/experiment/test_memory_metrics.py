"""memory_metrics on a hand-made table, and the memory block of the report and dashboard."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from costeer_lab.experiment import memory_metrics
from costeer_lab.experiment._memory_metrics import MEMORY_METRIC_COLUMNS
from costeer_lab.testing import make_row
from costeer_lab.viz import build_report, results_dashboard


def _mem(task: str, attempt: int, success: bool, hits: list[str], used: bool) -> dict[str, object]:
    return make_row(
        "memory", 0, task, attempt, success,
        retrieved={"similar": [(h, 0.5) for h in hits]},
        used=hits[:1] if used else [],
        memory_queried=True, memory_patterns=json.dumps(hits), memory_used=used,
    )  # fmt: skip


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        [
            make_row("no_knowledge", 0, "a", 1, True),
            _mem("a", 1, True, ["pattern:1"], True),  # hit, used, success
            _mem("b", 1, False, ["pattern:2"], True),  # hit, used, failure
            _mem("b", 2, False, ["pattern:2"], False),  # hit, not used, failure
            _mem("c", 1, False, [], False),  # miss
            _mem("c", 2, True, [], False),  # miss, success
        ]
    )


def test_memory_metrics_by_hand() -> None:
    table = memory_metrics(_table())
    assert list(table.columns) == MEMORY_METRIC_COLUMNS
    assert table["arm"].tolist() == ["memory"]  # the no-knowledge arm never queried
    row = table.iloc[0]
    assert (row["attempts"], row["hits"], row["used"]) == (5, 3, 2)
    assert row["hit_rate"] == pytest.approx(3 / 5)
    assert row["success_when_hit"] == pytest.approx(1 / 3)
    assert row["success_when_missed"] == pytest.approx(1 / 2)
    assert row["success_when_used"] == pytest.approx(1 / 2)
    assert row["success_when_not_used"] == pytest.approx(1 / 3)


def test_no_use_gives_nan_and_other_arms_no_rows() -> None:
    rows = pd.DataFrame([_mem("a", 1, False, [], False)])
    row = memory_metrics(rows).iloc[0]
    assert math.isnan(row["success_when_used"]) and math.isnan(row["success_when_hit"])
    assert memory_metrics(pd.DataFrame([make_row("nk", 0, "a", 1, True)])).empty


def test_report_and_dashboard_show_the_memory_arm(tmp_path: Path) -> None:
    page = build_report(_table(), tmp_path / "r.html", title="t", n_boot=20).read_text()
    assert "Pattern memory: hit rate and success when used" in page
    board = results_dashboard(_table(), n_boot=20)
    assert "Pattern memory" in board.summary.value and "0.6" in board.summary.value
    board.arm.value = "no_knowledge"
    assert "Pattern memory" not in board.summary.value
