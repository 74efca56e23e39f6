"""RD-Agent inputs beyond daily_pv (issue 25): daily_f.h5, high_freq.h5, column discovery,
the user's own tables, the 27-task benchmark file and the one-line error without PyTables."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.suites import load_suite
from costeer_lab.suites._rdagent_columns import columns_read, files_read
from costeer_lab.suites._rdagent_data import daily_pv_frame, ensure_daily_f, ensure_daily_pv
from costeer_lab.suites._rdagent_fundamentals import DAILY_F_COLUMNS, daily_f_from_pv
from costeer_lab.suites._rdagent_highfreq import HIGH_FREQ_COLUMNS, high_freq_from_pv

ROOT = Path(__file__).resolve().parents[2]
BENCH27 = ROOT / "data" / "rdagent_factor_bench27.json"
SMALL = {"n_instruments": 6, "n_days": 80, "hf_days": 3, "hf_minutes": 60}


def _frame(path: Path) -> pd.DataFrame:
    frame = pd.read_hdf(path)  # one key: readable without key=, as RD-Agent's tasks do
    assert isinstance(frame, pd.DataFrame)
    return frame


def test_daily_pv_has_money_and_a_versioned_cache_name(tmp_path: Path) -> None:
    pv = daily_pv_frame("synthetic", 4, 30)
    assert np.allclose(pv["$money"], pv["$close"] * pv["$volume"], equal_nan=True)
    path = ensure_daily_pv(tmp_path, "synthetic", 4, 30)
    assert path.name == "daily_pv_synthetic_4x30_s0_v1.2.h5"
    assert "$money" in _frame(path).columns


def test_daily_f_matches_the_panel_and_steps_quarterly() -> None:
    pv = daily_pv_frame("synthetic", 12, 200, seed=3)
    f = daily_f_from_pv(pv, seed=3)
    assert f.index.equals(pv.index) and list(f.index.names) == ["datetime", "instrument"]
    assert tuple(f.columns) == DAILY_F_COLUMNS and (f.dtypes == "float64").all()
    assert f.isna().all(axis=1).equals(pv["$close"].isna())  # same suspended days, all NaN
    live = f.dropna()
    assert np.allclose(live["TradableMarketValue"], pv.loc[live.index, "$close"]
                       * live["TradableACapital"])  # fmt: skip
    assert (live["TotalCapital"] >= live["TradableACapital"]).all()
    assert live["B/P"].between(0.01, 50).all() and live["ROE"].between(-0.5, 0.7).all()
    assert live["TurnoverRate"].between(0, 500).all() and (live["TurnoverRate"] > 0).any()
    # accounting values change only on report dates: at most 200/63 + 1 distinct per instrument
    per = live["ROE"].groupby(level="instrument").nunique()
    assert per.max() <= 5 and per.min() >= 2
    bp_steps = live["ROE"].groupby(level="instrument").diff().ne(0).mean()
    assert bp_steps < 0.05


def test_high_freq_bars_are_minutes_in_trading_hours_and_add_up_to_the_day() -> None:
    pv = daily_pv_frame("synthetic", 5, 30, seed=1)
    hf = high_freq_from_pv(pv, n_days=4, minutes_per_day=240, seed=1)
    assert tuple(hf.columns) == HIGH_FREQ_COLUMNS and list(hf.index.names) == [
        "datetime",
        "instrument",
    ]
    assert hf.index.is_monotonic_increasing
    stamps = pd.DatetimeIndex(hf.index.get_level_values("datetime"))
    clock = stamps.strftime("%H:%M")
    assert (
        (clock >= "09:31") & (clock <= "11:30") | (clock >= "13:01") & (clock <= "15:00")
    ).all()
    assert len(pd.unique(clock)) == 240
    days = pd.unique(stamps.normalize())
    assert list(days) == list(pd.unique(pv.index.get_level_values("datetime"))[-4:])
    bars = hf.reset_index()
    bars["date"] = bars["datetime"].dt.normalize()
    g = bars.groupby(["date", "instrument"])
    daily = pd.DataFrame(
        {"$open": g["$open"].first(), "$close": g["$close"].last(),
         "$high": g["$high"].max(), "$low": g["$low"].min(),
         "$volume": g["$volume"].sum(min_count=1)}
    )  # fmt: skip
    daily.index = daily.index.set_names(["datetime", "instrument"])
    want = pv.loc[daily.index, list(HIGH_FREQ_COLUMNS)]
    assert np.allclose(daily.to_numpy(), want.to_numpy(), equal_nan=True, rtol=1e-12)
    live = hf.dropna()
    assert (live["$high"] >= live[["$open", "$close"]].max(axis=1) - 1e-12).all()
    assert (live["$low"] <= live[["$open", "$close"]].min(axis=1) + 1e-12).all()


def test_generators_are_deterministic_by_seed(tmp_path: Path) -> None:
    pv = daily_pv_frame("synthetic", 4, 70)
    assert daily_f_from_pv(pv, ["PE_TTM"], seed=2).equals(daily_f_from_pv(pv, ["PE_TTM"], seed=2))
    assert not daily_f_from_pv(pv, seed=2).equals(daily_f_from_pv(pv, seed=3))
    a = high_freq_from_pv(pv, 2, 10, seed=5)
    assert a.equals(high_freq_from_pv(pv, 2, 10, seed=5))
    assert not a.equals(high_freq_from_pv(pv, 2, 10, seed=6))
    # an added column leaves the others as they were
    assert daily_f_from_pv(pv, ["PE_TTM"]).drop(columns="PE_TTM").equals(daily_f_from_pv(pv))
    p1 = ensure_daily_f(tmp_path / "a", ensure_daily_pv(tmp_path / "a", "synthetic", 4, 70))
    p2 = ensure_daily_f(tmp_path / "b", ensure_daily_pv(tmp_path / "b", "synthetic", 4, 70))
    assert _frame(p1).equals(_frame(p2))
    with pytest.raises(InvalidInputError, match="minutes_per_day"):
        high_freq_from_pv(pv, 2, 241)


def test_columns_are_discovered_from_the_ground_truth() -> None:
    code = textwrap.dedent("""
        import pandas as pd
        pv = pd.read_hdf("daily_pv.h5", key="data")
        f = pd.read_hdf("daily_f.h5")
        d = f.reset_index()
        d["x"] = d.groupby("instrument")[["PE_TTM"]].rolling(5).mean()["PE_TTM"].values
        both = pv.join(f)
        y = both["$vwap"] / both["FloatMarketValue"] + both["$close"] * d["x"]
        for _, g in pv.groupby(level="instrument"):
            g["$open"]
        z = pd.DataFrame({"made": y})["made"]
    """)
    assert files_read(code) == ["daily_pv.h5", "daily_f.h5"]
    got = columns_read(code, {"daily_pv.h5": ["$close"]})
    assert got == {
        "daily_pv.h5": ["$close", "$open", "$vwap"],
        "daily_f.h5": ["FloatMarketValue", "PE_TTM"],
    }
    assert files_read("print(1)") == [] and columns_read("x = (") == {}


def test_a_file_with_other_column_names_runs_and_its_contract_names_them(
    tmp_path: Path,
) -> None:
    gt = textwrap.dedent("""
        import pandas as pd
        f = pd.read_hdf("daily_f.h5", key="data")
        pv = pd.read_hdf("daily_pv.h5", key="data")
        r = (f["PE_TTM"] * pv["$vwap"]).groupby(level="datetime").rank()
        r.to_hdf("result.h5", key="data")
    """)
    doc = {"PE_x_VWAP": {"description": "d", "formulation": "f", "gt_code": gt}}
    path = tmp_path / "b.json"
    path.write_text(json.dumps(doc))
    suite = load_suite(path, n_instruments=5, n_days=40, cache_dir=tmp_path)
    assert sorted(suite.inputs) == ["daily_f.h5", "daily_pv.h5"]
    assert "PE_TTM" in _frame(suite.inputs["daily_f.h5"]).columns
    assert "$vwap" in _frame(suite.inputs["daily_pv.h5"]).columns
    task = suite.task("PE_x_VWAP")
    assert task.extra["input_files"] == ["daily_pv.h5", "daily_f.h5"]
    assert (
        '"PE_TTM"' in task.extra["contract"]
        and "daily_f.h5 (daily fundamentals)" in (task.extra["contract"])
    )
    ev = suite.evaluator(runner="inprocess")
    assert ev.evaluate(
        task, suite.ground_truth(task.id), suite.ground_truth(task.id)
    ).final_decision


def test_the_users_own_daily_f_and_high_freq_files(tmp_path: Path) -> None:
    gt = (
        "import pandas as pd\n"
        "f = pd.read_hdf('daily_f.h5')\n"
        "h = pd.read_hdf('high_freq.h5', key='data')\n"
        "r = f['MyScore'] + h['$close'].groupby(level='instrument').last().mean()\n"
        "r.to_hdf('result.h5', key='data')\n"
    )
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"T": {"description": "d", "formulation": "f", "gt_code": gt}}))
    pv = daily_pv_frame("synthetic", 4, 20)
    own_f = pd.DataFrame({"MyScore": np.arange(len(pv), dtype=float)}, index=pv.index)
    own_f.to_hdf(tmp_path / "f.h5", key="data")
    own_hf = high_freq_from_pv(pv, 2, 4)
    own_hf.to_hdf(tmp_path / "hf.h5", key="data")
    suite = load_suite(path, n_instruments=4, n_days=20, cache_dir=tmp_path,
                       daily_f=tmp_path / "f.h5", high_freq=str(tmp_path / "hf.h5"))  # fmt: skip
    assert suite.inputs["daily_f.h5"] == (tmp_path / "f.h5").resolve()
    assert suite.inputs["high_freq.h5"] == (tmp_path / "hf.h5").resolve()
    assert '"MyScore"' in suite.task("T").extra["contract"]
    gtw = suite.ground_truth("T")
    assert suite.evaluator(runner="inprocess").evaluate(suite.task("T"), gtw, gtw).final_decision
    own_f.rename(columns={"MyScore": "Other"}).to_hdf(tmp_path / "g.h5", key="data")
    with pytest.raises(InvalidInputError, match=r"daily_f file .*missing columns \['MyScore'\]"):
        load_suite(path, cache_dir=tmp_path, daily_f=tmp_path / "g.h5")
    own_f.reset_index().to_hdf(tmp_path / "flat.h5", key="data")
    with pytest.raises(InvalidInputError, match=r"indexed by \(datetime, instrument\)"):
        load_suite(path, cache_dir=tmp_path, daily_f=tmp_path / "flat.h5")
    with pytest.raises(InvalidInputError, match=r"high_freq file .* does not exist"):
        load_suite(path, cache_dir=tmp_path, high_freq=tmp_path / "none.h5")
    with pd.HDFStore(tmp_path / "two.h5", mode="w") as store:
        store.put("a", own_f, track_times=False)
        store.put("b", own_f, track_times=False)
    with pytest.raises(InvalidInputError, match="holds 2 keys"):
        load_suite(path, cache_dir=tmp_path, daily_f=tmp_path / "two.h5")


def test_only_the_tables_some_selected_reference_reads_are_generated(tmp_path: Path) -> None:
    suite = load_suite(BENCH27, cache_dir=tmp_path, tasks=["BarRange"], **SMALL)
    assert sorted(suite.inputs) == ["daily_pv.h5"] and suite.task_ids == ["BarRange"]
    assert not list((tmp_path / "suites" / "rdagent").glob("high_freq*"))
    with pytest.raises(InvalidInputError, match="did you mean 'BarRange'"):
        load_suite(BENCH27, cache_dir=tmp_path, tasks=["BarRang"])


def test_the_27_task_file_loads_and_every_reference_accepts_itself(tmp_path: Path) -> None:
    doc = json.loads(BENCH27.read_text())
    suite = load_suite(BENCH27, cache_dir=tmp_path, **SMALL)
    assert len(suite) == 27 and sorted(suite.inputs) == sorted(
        ["daily_pv.h5", "daily_f.h5", "high_freq.h5"]
    )
    cells = Counter((t.category, t.difficulty) for t in suite.tasks)
    assert set(cells.values()) == {3} and len(cells) == 9
    # like the published Volume&Price tasks: changes over the stacked rows, across instruments
    stacked = {"StackedReturn": 'df["$close"].pct_change(', "StackedVolumeDiff": "v.diff()",
               "StackedGapRank": 'df["$close"].shift(1)'}  # fmt: skip
    assert all(text in doc[name]["gt_code"] for name, text in stacked.items())
    ev = suite.evaluator(runner="inprocess")
    for task in suite.tasks:
        gt = suite.ground_truth(task.id)
        fb = ev.evaluate(task, gt, gt)
        assert fb.final_decision, (task.id, fb.execution, fb.return_checking)


_BLOCK = """
import sys
class _NoTables:
    def find_spec(self, name, path=None, target=None):
        if name == "tables" or name.startswith("tables."):
            raise ModuleNotFoundError("No module named 'tables'", name="tables")
        return None
sys.meta_path.insert(0, _NoTables())
"""


def test_without_pytables_loading_prints_one_line_naming_the_extra(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"name: x\nsuite: {BENCH27}\nsuite_options: {{n_instruments: 4, n_days: 30}}\n"
        "coder: {name: reuse}\narms: [{name: a, rag: none}]\nseeds: [0]\nmax_loop: 1\n"
    )
    code = _BLOCK + "from costeer_lab.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    env = {"COSTEER_LAB_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-c", code, "run", str(spec), "--out", str(tmp_path / "out")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'costeer-lab[hdf5]'" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
