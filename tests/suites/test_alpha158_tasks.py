"""The Alpha158 task set: counts, formulas, splits, no ground truth in tasks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.suites import Suite, alpha158_suite
from costeer_lab.suites._alpha158_defs import FEATURES, WINDOWS

ROLLING = [
    "ROC",
    "MA",
    "STD",
    "BETA",
    "RSQR",
    "RESI",
    "MAX",
    "MIN",
    "QTLU",
    "QTLD",
    "RANK",
    "RSV",
    "IMAX",
    "IMIN",
    "IMXD",
    "CORR",
    "CORD",
    "CNTP",
    "CNTN",
    "CNTD",
    "SUMP",
    "SUMN",
    "SUMD",
    "VMA",
    "VSTD",
    "WVMA",
    "VSUMP",
    "VSUMN",
    "VSUMD",
]
KBAR = ["KMID", "KLEN", "KMID2", "KUP", "KUP2", "KLOW", "KLOW2", "KSFT", "KSFT2"]


def test_158_features_with_the_qlib_names(small_alpha: Suite) -> None:
    names = [t.name for t in small_alpha.tasks]
    assert len(names) == len(set(names)) == 158
    expected = [*KBAR, "OPEN0", "HIGH0", "LOW0", "VWAP0"]
    expected += [f"{f}{d}" for f in ROLLING for d in WINDOWS]
    assert sorted(names) == sorted(expected)
    families = Counter(t.category for t in small_alpha.tasks)
    assert families["KBAR"] == 9 and families["PRICE"] == 4
    assert all(families[f] == 5 for f in ROLLING)


def test_formulas_are_qlibs(small_alpha: Suite) -> None:
    f = {t.name: t.formulation for t in small_alpha.tasks}
    assert f["MA5"] == "Mean($close, 5)/$close"
    assert f["KSFT2"] == "(2*$close-$high-$low)/($high-$low+1e-12)"
    assert f["RSV20"] == "($close-Min($low, 20))/(Max($high, 20)-Min($low, 20)+1e-12)"
    assert f["CORD10"] == "Corr($close/Ref($close,1), Log($volume/Ref($volume, 1)+1), 10)"
    assert f["IMXD60"] == "(IdxMax($high, 60)-IdxMin($low, 60))/60"
    assert f["VWAP0"] == "$vwap/$close"
    assert f["QTLD30"] == "Quantile($close, 30, 0.2)/$close"


def test_tasks_document_semantics_and_contract(small_alpha: Suite) -> None:
    rank = small_alpha.task("alpha158/RANK10")
    assert "Rank" in rank.variables and "percentile" in rank.variables["Rank"]
    assert rank.variables["d"].startswith("window length: 10")
    assert rank.difficulty == "hard" and rank.category == "RANK"
    corr = small_alpha.task("alpha158/CORR5")
    assert {"$close", "$volume", "Corr", "Log"} <= set(corr.variables)
    contract = corr.extra["contract"]
    assert "daily_pv.parquet" in contract and "result.parquet" in contract
    assert "CORR5" in contract and corr.extra["output_column"] == "CORR5"
    assert all(t.description and t.difficulty in {"easy", "medium", "hard"} for t in small_alpha)


def test_ground_truth_is_not_in_tasks(small_alpha: Suite) -> None:
    for task in small_alpha.tasks[::7]:
        gt = small_alpha.ground_truth(task.id)
        dumped = json.dumps(task.to_dict())
        assert "def compute" in gt.code and "def compute" not in dumped
        assert "groupby" not in dumped


def test_splits_train_windows_5_and_20(small_alpha: Suite) -> None:
    train, test = small_alpha.split("train"), small_alpha.split("test")
    assert len(train) == 29 * 2 and len(test) == 158 - 58
    assert not set(train) & set(test)
    assert set(train) | set(test) == set(small_alpha.task_ids)
    windows = {small_alpha.task(t).extra["window"] for t in train}
    assert windows == {5, 20}
    assert small_alpha.split("all") == small_alpha.task_ids


def test_feature_specs_match_tasks() -> None:
    assert [s.name for s in FEATURES][:3] == ["KMID", "KLEN", "KMID2"]
    assert {s.window for s in FEATURES} == {0, *WINDOWS}


def test_holdout_families_leave_train_entirely(alpha_cache: Path) -> None:
    held = alpha158_suite(4, 30, seed=7, cache_dir=alpha_cache, holdout_families=["STD", "QTLD"])
    train = set(held.split("train"))
    test = set(held.split("test"))
    assert not any(t.startswith(("alpha158/STD", "alpha158/QTLD")) for t in train)
    assert {f"alpha158/STD{d}" for d in WINDOWS} <= test
    assert {"alpha158/VSTD5", "alpha158/QTLU20", "alpha158/MA5"} <= train
    assert len(train) == 2 * (29 - 2) and len(train) + len(test) == 158
    with pytest.raises(InvalidInputError, match=r"unknown families \['STDEV'\]"):
        alpha158_suite(4, 30, seed=7, cache_dir=alpha_cache, holdout_families=["STDEV"])
