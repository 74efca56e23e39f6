"""The experiment runner end to end: real suite, real sandbox, real stores, real processes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from costeer_lab.errors import ConfigurationError
from costeer_lab.experiment import load_results, load_spec, run_experiment

TIMING = ["duration_s", "coder_s", "evaluate_s"]


def _spec(cache_dir: Path, **over: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "tiny",
        "suite": "alpha158",
        "suite_options": {"n_instruments": 6, "n_days": 80, "cache_dir": str(cache_dir)},
        "tasks": {"ids": [f"alpha158/{n}" for n in ("MA10", "STD30", "KLEN", "ROC60", "MAX10")]},
        "seed_knowledge": {"split": "train"},
        "arms": [{"name": "no_knowledge"}, {"name": "rag_v2", "rag": "v2"}],
        "seeds": [0],
        "max_loop": 3,
        "parallelism": {"executor": "thread", "workers": 2},
    }
    spec.update(over)
    return spec


def _without_timings(df: pd.DataFrame) -> pd.DataFrame:
    """Results with measured durations removed (columns, and "in 0.12 s" in feedback text)."""
    out = df.drop(columns=TIMING).reset_index(drop=True)
    for col in ("execution", "return_checking", "code_feedback"):
        out[col] = out[col].str.replace(r"\d+(\.\d+)? ?(s|ms)\b", "<t>", regex=True)
    return out


def _count_steps(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return int(
                con.execute("SELECT count(*) FROM records WHERE kind = 'evo_step'").fetchone()[0]
            )
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def test_three_arm_run_writes_results_and_links_retrieval(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "cache")
    spec["arms"].insert(1, {"name": "rag_v1", "rag": "v1"})
    path = run_experiment(spec, tmp_path / "out", progress=False)
    df = load_results(path)
    assert set(df["arm"]) == {"no_knowledge", "rag_v1", "rag_v2"}
    nk = df[df["arm"] == "no_knowledge"]
    assert (nk["retrieved"] == "{}").all() and (nk["kb_nodes"] == 0).all()
    v2 = df[df["arm"] == "rag_v2"]
    kinds = set().union(*(json.loads(r).keys() for r in v2["retrieved"]))
    assert kinds == {"former_trace", "similar", "component", "error"}
    assert (v2["kb_nodes"] > 0).all()
    # MA10 has a same-family train task (MA5): retrieval finds it and the ReuseCoder adapts it
    ma10 = v2[v2["task_id"] == "alpha158/MA10"]
    assert bool(ma10["success"].iloc[0])
    used = json.loads(ma10["used_knowledge_ids"].iloc[0])
    retrieved_ids = [h["id"] for h in json.loads(ma10["retrieved"].iloc[0])["similar"]]
    assert used and used[0] in retrieved_ids
    # every item carries its ground-truth relevance; the item MA10 used (an MA of another
    # window: op mean) is relevant, and for every kind relevance is not "returned anything"
    entries = [e for r in v2["retrieved"] for v in json.loads(r).values() for e in v]
    assert entries and all(isinstance(e["relevant"], bool) for e in entries)
    similar = json.loads(ma10["retrieved"].iloc[0])["similar"]
    assert next(e for e in similar if e["id"] == used[0])["relevant"] is True
    assert any(not e["relevant"] for e in entries)
    # the no-knowledge arm cannot solve it: the generic attempt is honest
    assert not nk[nk["task_id"] == "alpha158/MA10"]["success"].any()
    assert (tmp_path / "out" / "kb" / "rag_v2-seed0.db").exists()


def test_spec_errors_name_the_field(tmp_path: Path) -> None:
    bad = _spec(tmp_path)
    bad["arms"] = [{"name": "x", "rag": "v3"}]
    with pytest.raises(ConfigurationError, match=r"arms\.0\.rag"):
        load_spec(bad)
    with pytest.raises(ConfigurationError, match="max_loop"):
        load_spec(_spec(tmp_path, max_loop=0))
    with pytest.raises(ConfigurationError, match="unique"):
        load_spec(_spec(tmp_path, arms=[{"name": "a"}, {"name": "a"}]))
    with pytest.raises(ConfigurationError, match="not found"):
        load_spec(tmp_path / "missing.yaml")


def test_a_different_spec_in_the_same_directory_is_refused(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "cache", arms=[{"name": "no_knowledge"}], max_loop=1)
    run_experiment(spec, tmp_path / "out", progress=False)
    with pytest.raises(ConfigurationError, match="different spec"):
        run_experiment({**spec, "max_loop": 2}, tmp_path / "out", progress=False)


def _run_cli(spec_file: Path, out: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "costeer_lab", "run", str(spec_file), "--out", str(out), "--quiet"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # so the kill takes the run's worker processes with it
    )


@pytest.mark.slow
def test_sigkill_then_resume_gives_the_same_results(tmp_path: Path) -> None:
    spec = _spec(tmp_path / "cache", arms=[{"name": "rag_v2", "rag": "v2"}], max_loop=4)
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec))
    env = {**os.environ, "PYTHONHASHSEED": "0"}

    whole = _run_cli(spec_file, tmp_path / "whole", env)
    out, _ = whole.communicate(timeout=300)
    assert whole.returncode == 0, out.decode()

    killed = _run_cli(spec_file, tmp_path / "resumed", env)
    db = tmp_path / "resumed" / "kb" / "rag_v2-seed0.db"
    deadline = time.monotonic() + 300
    while _count_steps(db) < 1 and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert killed.poll() is None, "the run finished before it could be killed"
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    assert killed.stdout is not None
    killed.stdout.close()
    steps_at_kill = _count_steps(db)
    assert 1 <= steps_at_kill < 4

    again = _run_cli(spec_file, tmp_path / "resumed", env)
    out, _ = again.communicate(timeout=300)
    assert again.returncode == 0, out.decode()

    a = _without_timings(pd.read_parquet(tmp_path / "whole" / "results.parquet"))
    b = _without_timings(pd.read_parquet(tmp_path / "resumed" / "results.parquet"))
    pd.testing.assert_frame_equal(a, b)
    assert a["success"].any() and (~a["success"]).any()  # a run with something to resume
