"""Threshold calibration pinned exactly on pairs with known cosines (a table embedder)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest

from costeer_lab.embed import BaseEmbedder
from costeer_lab.errors import InvalidInputError
from costeer_lab.memory import calibrate, calibrated_threshold, register_threshold


class TableEmbedder(BaseEmbedder):
    """``"s"`` is the x axis; ``"q0.8"`` the unit vector at cosine 0.8 to it."""

    name, version, dim = "table", "1", 2

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        def vec(t: str) -> list[float]:
            c = 1.0 if t == "s" else float(t.split("-")[0][1:])
            return [c, math.sqrt(1.0 - c * c)]

        return np.array([vec(t) for t in texts], dtype=np.float32)


def pairs(*labelled: tuple[float, bool]) -> list[tuple[str, str, bool]]:
    return [(f"q{c}-{i}", "s", m) for i, (c, m) in enumerate(labelled)]


# cosines best first: match, match, non-match, match, non-match
FIVE = pairs((0.5, True), (0.8123456, True), (0.3, False), (0.9, True), (0.6, False))


def test_the_lowest_threshold_reaching_the_precision() -> None:
    cal = calibrate(TableEmbedder(), FIVE, precision=0.9)
    assert cal.threshold == 0.812345  # just under the cut's cosine, 6 decimals
    assert (cal.precision, round(cal.recall, 4)) == (1.0, 0.6667)
    assert (cal.matches, cal.non_matches, cal.target_precision) == (3, 2, 0.9)
    assert cal.embedder_id == "table@1:2"
    looser = calibrate(TableEmbedder(), FIVE, precision=0.75)
    assert (looser.threshold, looser.precision, looser.recall) == (0.499999, 0.75, 1.0)
    every = calibrate(TableEmbedder(), FIVE, precision=0.6)  # the cut below the last pair
    assert (every.threshold, every.precision, every.recall) == (0.299999, 0.6, 1.0)


def test_without_a_reaching_threshold_the_best_precision_is_kept() -> None:
    cal = calibrate(TableEmbedder(), pairs((0.9, False), (0.8, True), (0.4, False)), precision=1.0)
    assert (cal.threshold, cal.precision, cal.recall) == (0.799999, 0.5, 1.0)


def test_a_cut_never_falls_between_equal_scores() -> None:
    tied = pairs((0.9, True), (0.7, True), (0.7, False), (0.2, False))
    cal = calibrate(TableEmbedder(), tied, precision=0.9)
    assert (cal.threshold, cal.precision) == (0.899999, 1.0)


def test_bad_calibration_inputs_are_named() -> None:
    with pytest.raises(InvalidInputError) as err:
        calibrate(TableEmbedder(), FIVE, precision=0)
    assert str(err.value) == "precision must be in (0, 1], got 0"
    with pytest.raises(InvalidInputError, match=r"got 1\.5$"):
        calibrate(TableEmbedder(), FIVE, precision=1.5)
    with pytest.raises(InvalidInputError, match=r"^calibration needs both matching and non-"):
        calibrate(TableEmbedder(), pairs((0.9, True)))


@pytest.mark.parametrize("bad", [1.01, -1.01, True])
def test_a_registered_threshold_must_be_a_cosine(bad: float) -> None:
    with pytest.raises(InvalidInputError) as err:
        register_threshold("table@1:2", bad)
    assert str(err.value) == f"threshold must be a cosine in [-1, 1], got {bad!r}"
    assert calibrated_threshold("table@1:2") == 0.7


def test_the_ends_of_the_cosine_range_can_be_registered() -> None:
    from costeer_lab.memory import CALIBRATED_THRESHOLDS

    try:
        for edge in (-1.0, 1.0):
            register_threshold("table@1:2", edge)
            assert calibrated_threshold("table@1:2") == edge
    finally:
        CALIBRATED_THRESHOLDS.pop("table@1:2", None)
