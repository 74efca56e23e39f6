"""The preflight of a factor suite runs every selected reference once and stops with one error
naming each task that cannot be evaluated (inputs the suite does not provide, a failing
reference), whatever the order of the selection (issue 25)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.errors import ConfigurationError
from costeer_lab.evaluate import _factor
from costeer_lab.experiment._preflight import preflight, unprovided_files
from costeer_lab.experiment._spec import load_spec

_READ = 'import pandas as pd\ndf = pd.read_hdf("daily_pv.h5", key="data")\n'
_SAVE = 'f.astype("float64").to_frame("{name}").to_hdf("result.h5", key="data")\n'


def _entry(name: str, body: str) -> dict[str, Any]:
    return {
        "description": f"{name}: a test factor",
        "formulation": "-",
        "variables": {},
        "Category": "Test",
        "Difficulty": "Easy",
        "gt_code": body + _SAVE.format(name=name),
    }


# An RD-Agent-format file written here: one task that runs, one reading a file no suite
# provides (the published High-Frequency tasks read files beside daily_pv.h5), one reading a
# column daily_pv.h5 lacks.
DOC = {
    "ROC5": _entry(
        "ROC5", _READ + 'c = df["$close"]\nf = c / c.groupby(level="instrument").shift(5) - 1\n'
    ),
    "L2_IMB": _entry(
        "L2_IMB",
        'import pandas as pd\nq = pd.read_hdf("tick_l2.h5")\nf = q["bid"] / q["ask"]\n',
    ),
    # the column name is built at run time: column discovery cannot synthesise it
    "MONEY": _entry("MONEY", _READ + 'f = df["$" + "no_such_field"] / df["$volume"]\n'),
}


def _spec(path: Path, cache: Path, ids: list[str]) -> Any:
    return load_spec(
        {
            "name": "rd",
            "suite": str(path),
            "suite_options": {"n_instruments": 4, "n_days": 30, "cache_dir": str(cache)},
            "tasks": {"ids": ids},
            "seed_knowledge": {"split": None},
            "arms": [{"name": "a"}],
            "max_loop": 1,
            "parallelism": {"executor": "serial"},
        }
    )


def _refusal(path: Path, cache: Path, ids: list[str], out: Path) -> str:
    with pytest.raises(ConfigurationError) as info:
        preflight(_spec(path, cache, ids), out, resume=True)
    assert not out.exists()
    return str(info.value)


def test_every_task_that_cannot_be_evaluated_is_named_whatever_the_order(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(DOC))
    cache = tmp_path / "cache"
    first = _refusal(path, cache, ["L2_IMB", "ROC5", "MONEY"], tmp_path / "o1")
    cached = {k: v for k, v in _factor._GT_CACHE.items() if k[1].find(str(cache)) >= 0}
    assert len(cached) == 3  # each reference ran once, its outcome cached
    last = _refusal(path, cache, ["ROC5", "MONEY", "L2_IMB"], tmp_path / "o2")
    assert first == last
    pv = next(cache.rglob("*.h5")).resolve()
    assert first == (
        f"2 tasks cannot be evaluated on the suite's inputs (daily_pv.h5 ({str(pv)!r})): "
        "'L2_IMB' reads tick_l2.h5, which the suite does not provide; "
        "'MONEY': the reference implementation failed (exit code 1): KeyError: '$no_such_field'"
    )
    again = {k: v for k, v in _factor._GT_CACHE.items() if k[1].find(str(cache)) >= 0}
    assert again.keys() == cached.keys()
    assert all(again[k] is cached[k] for k in cached)  # not run again: the same outcomes
    one = _refusal(path, cache, ["MONEY", "ROC5"], tmp_path / "o3")
    assert one.startswith("1 task cannot be evaluated on the suite's inputs (daily_pv.h5 (")
    assert one.endswith("'MONEY': the reference implementation failed (exit code 1): "
                        "KeyError: '$no_such_field'")  # fmt: skip
    ok = preflight(_spec(path, cache, ["ROC5"]), tmp_path / "o4", resume=True)
    assert [t.id for t in ok.targets] == ["ROC5"]


def test_data_files_a_reference_names_that_the_suite_does_not_provide() -> None:
    code = (
        "a = pd.read_hdf('daily_f.h5')\nb = pd.read_parquet(\"x/Tick.PARQUET\")\n"
        "c = pd.read_hdf('daily_pv.h5')\nf.to_hdf('result.h5', key='d')\n"
        "g = pd.read_hdf('daily_f.h5')\nf.to_csv( 'tmp.csv')\nh = pd.read_csv('tmp.csv')\n"
    )
    assert unprovided_files(code, {"daily_pv.h5"}) == ["daily_f.h5", "x/Tick.PARQUET"]
    assert unprovided_files(code, {"daily_pv.h5", "daily_f.h5", "Tick.PARQUET"}) == []
