"""Builders shared by the coder tests: factor tasks, knowledge items and a tiny price panel."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from costeer_lab.records import (
    ErrorFix,
    Knowledge,
    QueriedKnowledge,
    ScoredKnowledge,
    SingleFeedback,
    Task,
    Workspace,
)

OK = SingleFeedback(execution="ran", final_decision=True)


def ma_task(window: int, field: str = "close", name: str | None = None) -> Task:
    name = name or (f"MA{window}" if field == "close" else f"MA{window}_{field}")
    return Task(
        id=f"alpha/{name}",
        name=name,
        description=f"{window}-day moving average of {field} divided by {field}",
        formulation=f"Mean(${field}, {window})/${field}",
        variables={f"${field}": f"daily {field} price"},
        category="rolling",
    )


def ma_code(window: int, field: str = "close", name: str | None = None) -> str:
    name = name or (f"MA{window}" if field == "close" else f"MA{window}_{field}")
    return (
        "import pandas as pd\n\n"
        'df = pd.read_parquet("daily_pv.parquet")\n'
        f'x = df["${field}"]\n'
        f'ma = x.groupby(level="instrument").transform(lambda s: s.rolling({window}).mean())\n'
        f'result = (ma / x).to_frame("{name}")\n'
        'result.to_parquet("result.parquet")\n'
    )


def knowledge(task: Task, code: str, fb: SingleFeedback = OK, kid: str | None = None) -> Knowledge:
    return Knowledge(task, Workspace({"main.py": code}), fb, id=kid or f"k:{task.id}")


def failed(error: str, fingerprint: str = "") -> SingleFeedback:
    fps = (fingerprint,) if fingerprint else ()
    return SingleFeedback(execution=error, final_decision=False, error_fingerprints=fps)


def qk_for(
    task: Task,
    similar: Sequence[tuple[Knowledge, float]] = (),
    traces: Sequence[Knowledge] = (),
    fixes: Sequence[ErrorFix] = (),
    components: Sequence[tuple[Knowledge, float]] = (),
) -> QueriedKnowledge:
    return QueriedKnowledge(
        similar_successful={task.id: tuple(ScoredKnowledge(k, s) for k, s in similar)},
        former_traces={task.id: tuple(traces)},
        error_fixes={task.id: tuple(fixes)},
        component_matches={task.id: tuple(ScoredKnowledge(k, s) for k, s in components)},
    )


def write_panel(directory: Path, seed: int = 0) -> Path:
    """A small (datetime, instrument) panel with $open/$close/$volume in daily_pv.parquet."""
    rng = np.random.default_rng(seed)
    dates = pd.date_range("2024-01-01", periods=40, freq="B")
    inst = ["A", "B", "C"]
    index = pd.MultiIndex.from_product([dates, inst], names=["datetime", "instrument"])
    n = len(index)
    df = pd.DataFrame(
        {
            "$open": 10 + rng.random(n),
            "$close": 10 + rng.random(n),
            "$volume": 1000 + rng.random(n) * 100,
        },
        index=index,
    )
    path = directory / "daily_pv.parquet"
    df.to_parquet(path)
    return path


def run_factor(ws: Workspace, directory: Path) -> pd.DataFrame:
    """Run a factor workspace in ``directory`` (holding the panel) as a real subprocess."""
    ws.write_to(directory)
    proc = subprocess.run(
        [sys.executable, ws.main_file], cwd=directory, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return pd.read_parquet(directory / "result.parquet")


def expected_ma(directory: Path, window: int, field: str) -> pd.Series:
    df = pd.read_parquet(directory / "daily_pv.parquet")
    x = df[f"${field}"]
    ma = x.groupby(level="instrument").transform(lambda s: s.rolling(window).mean())
    return ma / x
