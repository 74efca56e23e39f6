"""The retrieval benchmark runs, writes the shared JSON shape, and its measures are sane; its
labelled sets and scoring are checked by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ._harness import ROOT, run_benchmark

if str(ROOT) not in sys.path:  # ``benchmarks`` is a top-level folder, not an installed package
    sys.path.insert(0, str(ROOT))

from benchmarks.retrieval import (
    ERROR_DECOYS,
    ERRORS,
    _ranks,
    _tasks,
    decoy,
    decoys,
    similar_threshold,
    skeleton,
)
from costeer_lab.embed import get_embedder
from costeer_lab.experiment import SIMILAR_THRESHOLDS, calibrated_hit_rate
from costeer_lab.testing import make_row


def test_skeleton_and_ranking_measures_by_hand() -> None:
    assert skeleton("Mean($close, 10)/$close") == "Mean($close,N)/$close"
    assert skeleton("Std($close, 5)/$close") != skeleton("Mean($close, 5)/$close")
    # query 1: relevant {2, 3}, ranked 5 2 3 -> recall@1 0, recall@3 1, rr 1/2
    # query 2: relevant {4}, ranked 4 ... -> recall 1, rr 1
    assert _ranks([[5, 2, 3], [4, 1]], [{2, 3}, {4}], 1) == (0.5, 0.75)
    assert _ranks([[5, 2, 3], [4, 1]], [{2, 3}, {4}], 3) == (1.0, 0.75)
    assert _ranks([[1]], [{9}], 3) == (0.0, 0.0)
    assert len(ERRORS) == 8 and all(len(v) == 5 for _, v in ERRORS)
    assert not {c for c, _ in ERROR_DECOYS} & {c for c, _ in ERRORS}  # decoys: other causes


def test_decoys_read_alike_but_have_another_structure() -> None:
    _, train = _tasks()
    ma5 = next(t for t in train if t.name == "MA5")
    field, op = decoy(ma5), decoy(ma5, "operator")
    assert (field.formulation, op.formulation) == (
        "Mean($open, 5)/$close",
        "Median($close, 5)/$close",
    )
    assert field.description == ma5.description and field.name == ma5.name
    found = decoys(train)
    assert len({d.id for d in found}) == len(found) and len(found) > len(train)
    # no decoy keeps its original's structure (it would be relevant, not a hard negative)
    by_name = {t.name: t for t in train}
    assert all(skeleton(d.formulation) != skeleton(by_name[d.name].formulation) for d in found)


def test_the_similar_hit_threshold_is_the_one_the_benchmark_calibrates() -> None:
    test, train = _tasks()
    assert similar_threshold(get_embedder("hashing"), test, train) == SIMILAR_THRESHOLDS["hashing"]
    rows = [make_row("v2", 0, "t", 1, False, retrieved={"similar": [("k", 0.8)]})]
    hashing = calibrated_hit_rate(pd.DataFrame(rows), embedder="hashing")
    minilm = calibrated_hit_rate(pd.DataFrame(rows), embedder="minilm")
    # the threshold decides what counts as *returned*; a hit needs a relevant item
    assert hashing["n_returned"].tolist() == [1] and minilm["n_returned"].tolist() == [0]
    assert hashing["n_hits"].tolist() == [0] and np.isnan(hashing["hit_rate"].iloc[0])
    assert hashing["threshold"].tolist() == [0.74] and minilm["threshold"].tolist() == [0.86]


@pytest.mark.slow
def test_retrieval_benchmark_quick_json(tmp_path: Path) -> None:
    rows = run_benchmark("retrieval", "--quick", out=tmp_path / "retrieval.json").values
    for kind in ("similar", "similar_prose", "component", "error"):
        for emb in ("hashing", "minilm"):
            assert 0.0 <= rows[(f"{kind}/{emb}", "recall_at_3")] <= 1.0
        assert rows[(kind, "minilm_vs_hashing_mrr_ratio")] > 0
    # the task texts carry the formula: both embedders mostly find a same-structure seed first
    assert rows[("similar/hashing", "mrr")] > 0.9
    # hard negatives: no set is solved perfectly by either embedder any more
    for kind in ("similar", "component", "error"):
        for emb in ("hashing", "minilm"):
            mrr = rows[(f"{kind}/{emb}", "mrr_at_3" if kind == "component" else "mrr")]
            assert mrr < 1.0 and rows[(f"{kind}/{emb}", "recall_at_3")] < 1.0
    assert rows[("embed", "minilm_vs_hashing_time_ratio")] > 1.0
    assert rows[("minilm", "similar_hit_threshold")] == SIMILAR_THRESHOLDS["minilm"]
    assert rows[("demo budget", "hashing_embed_s")] < rows[("demo budget", "minilm_embed_s")]
