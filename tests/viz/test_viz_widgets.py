"""The results dashboard: built without a kernel, driven by changing widget values."""

from __future__ import annotations

import base64

import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.testing import synthetic_results
from costeer_lab.viz import ALL_ARMS, ResultsDashboard, results_dashboard

PNG = b"\x89PNG\r\n\x1a\n"


def _png(board: ResultsDashboard) -> bytes:
    (out,) = board.output.outputs
    assert out["output_type"] == "display_data"
    return base64.b64decode(out["data"]["image/png"])


def test_dashboard_renders_and_reacts() -> None:
    results = synthetic_results(arms={"no_knowledge": 0.3, "rag": 0.6}, n_seeds=2, n_tasks=4)
    board = results_dashboard(results, n_boot=50)
    assert isinstance(board, ResultsDashboard)
    assert list(board.arm.options) == [ALL_ARMS, "no_knowledge", "rag"]
    assert board.metric.options == (
        "success curve",
        "hit rate",
        "attempts to success",
        "knowledge-base growth",
        "knowledge usage",
    )
    assert board.renders == 1
    first = _png(board)
    assert first.startswith(PNG)
    assert "no_knowledge" in board.summary.value and "rag" in board.summary.value

    board.metric.value = "knowledge-base growth"
    assert board.renders == 2
    second = _png(board)
    assert second.startswith(PNG) and second != first
    assert board.output.outputs[0]["data"]["text/plain"] == f"knowledge-base growth — {ALL_ARMS}"

    board.arm.value = "rag"
    assert board.renders == 3
    assert len(board.selected()) == int((results["arm"] == "rag").sum())
    assert "rag" in board.summary.value and "no_knowledge" not in board.summary.value

    board.metric.value = "knowledge usage"
    assert _png(board).startswith(PNG)
    assert board.children[0].children == (board.arm, board.metric)


def test_dashboard_validates_results() -> None:
    with pytest.raises(InvalidInputError, match="missing column"):
        results_dashboard(synthetic_results().drop(columns=["arm"]))
