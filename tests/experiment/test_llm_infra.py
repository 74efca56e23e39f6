"""An LLM run against a real local server: endpoint failures are infrastructure errors.

A refused key, an unknown model, a refused connection or a time-out stops the run before any
store is written, with one clear error (and a non-zero CLI exit); a failure in the middle of a
run is never an attempt and never knowledge; a recorded run replays with no server.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from costeer_lab.cli import main
from costeer_lab.errors import EndpointError, ReplayMissError
from costeer_lab.evolve import crn_stream
from costeer_lab.experiment import load_results, run_experiment
from costeer_lab.suites import load_suite
from costeer_lab.testing import FakeOpenAIServer

from ..llm._failures import FAILURES, Endpoint, failing_endpoint

TASKS = ["humaneval/1", "humaneval/2"]
CHAT = "/v1/chat/completions"
TIMING = ["duration_s", "coder_s", "evaluate_s"]


def solve(body: dict[str, Any]) -> str:
    """Reply with the reference solution of the task named in the prompt."""
    suite = load_suite("humaneval", limit=4)
    user = body["messages"][-1]["content"]
    name = user.split("Name: ", 1)[1].split("\n", 1)[0]
    (tid,) = [t.id for t in suite.tasks if t.name == name]
    return f"```python\n{suite.ground_truth(tid).files['main.py']}\n```"


def spec(ep: Endpoint, **coder: Any) -> dict[str, Any]:
    return {
        "name": "llm-infra",
        "suite": "humaneval",
        "suite_options": {"limit": 4},
        "tasks": {"ids": TASKS},
        "seed_knowledge": {"split": "train"},
        "arms": [{"name": "rag", "rag": "v2"}],
        "max_loop": 3,
        "parallelism": {"executor": "serial"},
        "coder": {
            "name": "llm",
            "model": ep.model,
            "base_url": ep.base_url,
            "api_key": ep.api_key,
            "timeout_s": ep.timeout_s,
            "max_retries": 1,
            "backoff_initial_s": 0.0,
            "backoff_max_s": 0.0,
            **coder,
        },
    }


def ok_endpoint(server: FakeOpenAIServer) -> Endpoint:
    return Endpoint(server.base_url, server.api_key, "fake-chat", 10.0)


def learned(db: Path) -> list[dict[str, Any]]:
    """The knowledge-base attempts a run wrote (seed knowledge has no run id)."""
    return [r for r in records(db, "kg_attempt") if r["run_id"]]


def records(db: Path, kind: str) -> list[dict[str, Any]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT data FROM records WHERE kind = ?", (kind,)).fetchall()
    finally:
        con.close()
    return [json.loads(r[0]) for r in rows]


@pytest.mark.parametrize("kind", FAILURES)
def test_a_bad_endpoint_stops_the_run_before_anything_is_written(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with failing_endpoint(kind) as (ep, server):
        server.chat_handler = solve
        with pytest.raises(EndpointError) as info:
            run_experiment(spec(ep), tmp_path / "out", progress=False)
        spec_file = tmp_path / "spec.yaml"
        spec_file.write_text(yaml.safe_dump(spec(ep)))
        code = main(["run", str(spec_file), "--out", str(tmp_path / "cli"), "--quiet"])
        assert server.requests_to(CHAT) == []  # nothing reached the model
    assert info.value.kind == kind and str(info.value).startswith("coder: ")
    assert ep.base_url in str(info.value) and repr(ep.model) in str(info.value)
    for out in (tmp_path / "out", tmp_path / "cli"):
        assert not (out / "kb").exists() and not (out / "llm_cache.db").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("costeer-lab: error: coder: ")


def test_the_cli_exits_non_zero_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    with failing_endpoint("auth") as (ep, _):
        spec_file = tmp_path / "spec.yaml"
        spec_file.write_text(yaml.safe_dump(spec(ep)))
        proc = subprocess.run(
            [sys.executable, "-m", "costeer_lab", "run", str(spec_file), "--out",
             str(tmp_path / "out"), "--quiet"],
            capture_output=True,
            text=True,
            timeout=300,
        )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "refused the API key" in line and "sk-wrong-key" not in line


def test_a_refused_key_mid_run_stops_after_saving_the_other_attempts(tmp_path: Path) -> None:
    with FakeOpenAIServer(chat_handler=solve) as server:
        server.fail_next(1, status=401, path=CHAT)  # the model list passes, then one 401
        with pytest.raises(EndpointError, match="refused the API key") as info:
            run_experiment(spec(ok_endpoint(server)), tmp_path / "out", progress=False)
    assert info.value.kind == "auth"
    db = tmp_path / "out" / "kb" / "rag-seed0.db"
    (step,) = records(db, "evo_step")
    assert [a["task_id"] for a in step["attempts"]] == [TASKS[1]]
    assert [(e["task_id"], e["kind"]) for e in step["infra_errors"]] == [(TASKS[0], "auth")]
    assert [r["task_id"] for r in learned(db)] == [TASKS[1]]  # no knowledge of it


def test_a_transient_failure_is_retried_next_step_and_never_an_attempt(tmp_path: Path) -> None:
    with FakeOpenAIServer(chat_handler=solve) as server:
        server.fail_next(2, status=500, path=CHAT)  # first task: its request and its retry
        path = run_experiment(spec(ok_endpoint(server)), tmp_path / "out", progress=False)
    df = load_results(path)
    assert sorted(zip(df["task_id"], df["attempt"], df["success"], strict=True)) == [
        (TASKS[0], 2, True),  # retried at the next step: its first real attempt
        (TASKS[1], 1, True),
    ]
    assert (df["infra_error"] == "").all()
    infra = json.loads((tmp_path / "out" / "infra_errors.json").read_text())
    assert infra["count"] == 1
    (e,) = infra["errors"]
    assert (e["task_id"], e["kind"], e["step"], e["status"]) == (TASKS[0], "server", 1, 500)
    db = tmp_path / "out" / "kb" / "rag-seed0.db"
    first = min(records(db, "evo_step"), key=lambda r: r["step"])
    assert [a["task_id"] for a in first["attempts"]] == [TASKS[1]]
    # knowledge only from the real attempts, one each
    assert sorted(r["task_id"] for r in learned(db)) == sorted(df["task_id"])


def test_every_task_failing_three_steps_in_a_row_stops_the_run(tmp_path: Path) -> None:
    with FakeOpenAIServer(chat_handler=solve) as server:
        server.fail_next(100, status=503, path=CHAT)
        with pytest.raises(EndpointError, match="3 steps in a row") as info:
            run_experiment(
                {**spec(ok_endpoint(server)), "max_loop": 10}, tmp_path / "out", progress=False
            )
    assert info.value.kind == "server"
    steps = records(tmp_path / "out" / "kb" / "rag-seed0.db", "evo_step")
    assert len(steps) == 3 and all(s["attempts"] == [] for s in steps)
    assert learned(tmp_path / "out" / "kb" / "rag-seed0.db") == []


def _without_timings(df: pd.DataFrame) -> pd.DataFrame:
    out = df.drop(columns=TIMING).reset_index(drop=True)
    for col in ("execution", "return_checking", "code_feedback"):
        out[col] = out[col].str.replace(r"\d+(\.\d+)? ?(s|ms)\b", "<t>", regex=True)
    return out


def test_a_recorded_run_replays_without_the_server(tmp_path: Path) -> None:
    arms = [{"name": "none"}, {"name": "rag", "rag": "v2"}]
    with FakeOpenAIServer(chat_handler=solve) as server:
        ep = ok_endpoint(server)
        recorded = run_experiment({**spec(ep), "arms": arms}, tmp_path / "rec", progress=False)
        bodies = [r.body for r in server.requests_to(CHAT)]
    cache = tmp_path / "rec" / "llm_cache.db"
    assert cache.is_file()
    # common random numbers: the same task at the same attempt sends the same seed in both arms
    for tid, name in ((t, load_suite("humaneval", limit=4).task(t).name) for t in TASKS):
        seeds = [b["seed"] for b in bodies if f"Name: {name}\n" in b["messages"][-1]["content"]]
        assert seeds == [crn_stream(0, tid, 1)] * 2
    replay_spec = spec(ep, cache_mode="replay_only", store=f"sqlite:///{cache}")
    replayed = run_experiment({**replay_spec, "arms": arms}, tmp_path / "rep", progress=False)
    a, b = (_without_timings(load_results(p)) for p in (recorded, replayed))
    pd.testing.assert_frame_equal(a.drop(columns="run_id"), b.drop(columns="run_id"))
    assert not (tmp_path / "rep" / "llm_cache.db").exists()
    assert len(a) == 4 and a["success"].all()
    # a request the recording never made (another temperature) stops the replay at once
    changed = spec(ep, cache_mode="replay_only", store=f"sqlite:///{cache}", temperature=0.5)
    with pytest.raises(ReplayMissError, match="replay_only: no cached response"):
        run_experiment(changed, tmp_path / "miss", progress=False)
    assert learned(tmp_path / "miss" / "kb" / "rag-seed0.db") == []
