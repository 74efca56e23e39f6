"""Arms of one experiment draw common random numbers: two V2 arms that differ only in a
setting the similar query ignores retrieve the same similar knowledge at attempt 1 for every
(seed, task); different seeds draw differently."""

from __future__ import annotations

import json
from pathlib import Path

from costeer_lab.experiment import load_results, run_experiment
from costeer_lab.experiment._runner import stream_id

# near-uniform weights over the candidates: the draw, not the ranking, decides the pick
OPTS = {"sampler": "weighted", "sampler_temperature": 5.0, "max_similar": 1}


def test_stream_id_names_seed_and_stage_not_arm() -> None:
    assert stream_id(3) == "seed3"
    assert stream_id(1, "learn") == "seed1-learn"


def test_arms_share_the_similar_draws_of_a_seed(tmp_path: Path) -> None:
    spec = {
        "name": "crn",
        "suite": "humaneval",
        "suite_options": {"limit": 12},
        "tasks": {"split": "test"},
        "seed_knowledge": {"split": "train"},
        "arms": [
            {"name": "rag_v2", "rag": "v2", "rag_options": OPTS},
            {
                "name": "rag_v2_no_error",
                "rag": "v2",
                "rag_options": {**OPTS, "error_query": False},
            },
        ],
        "seeds": [0, 1],
        "max_loop": 1,
        "parallelism": {"executor": "serial"},
    }
    df = load_results(run_experiment(spec, tmp_path, progress=False))
    first = df[df["attempt"] == 1].copy()
    first["similar"] = [
        tuple(h["id"] for h in json.loads(r).get("similar", [])) for r in first["retrieved"]
    ]
    wide = first.pivot_table(
        index=["seed", "task_id"], columns="arm", values="similar", aggfunc="first"
    )
    assert len(wide) >= 8 and wide.notna().all().all()
    assert all(len(s) == 1 for s in wide["rag_v2"])  # every task drew one similar item
    # the same seed: identical draws in both arms, for every task
    assert (wide["rag_v2"] == wide["rag_v2_no_error"]).all()
    # different seeds: different draws on some tasks
    per_seed = wide["rag_v2"].unstack("seed")
    assert (per_seed[0] != per_seed[1]).any()
    # the run ids (storage) still name the arm
    assert set(df["run_id"]) == {
        f"{a}-seed{s}" for a in ("rag_v2", "rag_v2_no_error") for s in (0, 1)
    }
