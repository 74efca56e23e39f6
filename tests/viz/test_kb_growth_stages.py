"""Knowledge-base growth of a staged run: stages in sequence, never mixed at one attempt number
(a real staged run: alpha158 suite, sandbox, SQLite stores; and an exact hand-made table)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from costeer_lab.experiment import kb_growth, load_results, run_experiment, summary_table
from costeer_lab.testing import make_row
from costeer_lab.viz import get_kb_growth_info, plot_kb_growth


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    root = tmp_path_factory.mktemp("staged")
    spec = {
        "name": "staged-growth",
        "suite": "alpha158",
        "suite_options": {"n_instruments": 6, "n_days": 80, "cache_dir": str(root / "cache")},
        "seed_knowledge": {"split": "train", "limit": 6},
        "arms": [{"name": "no_knowledge", "rag": "none"}, {"name": "rag_v2", "rag": "v2"}],
        "stages": [
            {"name": "learn", "tasks": {"ids": ["alpha158/MA10", "alpha158/STD10"]}},
            {"name": "transfer", "tasks": {"ids": ["alpha158/MA60"]}},
        ],
        "seeds": [0, 1],
        "max_loop": 2,
        "parallelism": {"executor": "thread", "workers": 2},
    }
    return load_results(run_experiment(spec, root / "run", progress=False))


def test_a_staged_run_grows_in_sequence_and_never_shrinks_within_an_arm(
    staged: pd.DataFrame,
) -> None:
    table = kb_growth(staged)
    v2 = table[table["arm"] == "rag_v2"]
    stages = v2["stage"].tolist()
    assert stages == sorted(stages) and set(stages) == {"learn", "transfer"}  # learn first
    assert v2["step"].tolist() == list(range(1, len(v2) + 1))
    info = get_kb_growth_info(staged)
    assert [name for _, name in info.stages] == ["learn", "transfer"]
    for arm in ("no_knowledge", "rag_v2"):
        parts = [a for a in info.arms if a.arm == arm]
        assert [a.stage for a in parts] == ["learn", "transfer"]
        steps = [s for a in parts for s in a.steps]
        assert steps == sorted(steps) and len(set(steps)) == len(steps)
        nodes = [v for a in parts for v in a.mean]
        assert nodes == sorted(nodes), f"{arm}: plotted KB nodes decrease: {nodes}"
        for bound in ("low", "high"):
            values = [v for a in parts for v in getattr(a, bound)]
            assert values == sorted(values)
    learn, transfer = (a for a in info.arms if a.arm == "rag_v2")
    # the transfer stage starts from a copy of the learn stage's KB and adds its own tasks
    assert 0 < learn.mean[-1] < transfer.mean[0]
    summary = summary_table(staged, baseline="no_knowledge", n_boot=50).set_index("arm")
    assert summary.loc["rag_v2", "final_kb_nodes"] == transfer.mean[-1]


def test_the_staged_plot_draws_each_stage_and_marks_where_the_second_starts(
    staged: pd.DataFrame,
) -> None:
    ax = plot_kb_growth(staged, ax=Figure().subplots())
    assert "stages in sequence" in ax.get_xlabel()
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["stage learn", "stage transfer"]
    info = get_kb_growth_info(staged)
    start = info.stages[1][0]  # half a step before the transfer stage's first step
    assert start == min(s for a in info.arms if a.stage == "transfer" for s in a.steps) - 0.5
    xs = [list(np.asarray(ln.get_xdata(), dtype=float)) for ln in ax.lines]
    vertical = [x for x, ln in zip(xs, ax.lines, strict=True) if ln.get_gid() == "stage-start"]
    assert vertical == [[start, start]]
    legend = ax.get_legend()
    assert legend is not None
    assert sorted(t.get_text() for t in legend.get_texts()) == ["no_knowledge", "rag_v2"]
    buf = io.BytesIO()
    ax.get_figure(root=True).savefig(buf, format="png")  # type: ignore[union-attr]
    assert buf.getvalue().startswith(b"\x89PNG")


def test_kb_growth_exact_on_a_hand_made_staged_table() -> None:
    rows = [
        {**make_row("a", 0, "t1", 1, False, kb_nodes=10), "stage": "learn"},
        {**make_row("a", 0, "t1", 2, True, kb_nodes=12), "stage": "learn"},
        {**make_row("a", 0, "t2", 1, False, kb_nodes=20), "stage": "transfer"},
        {**make_row("a", 1, "t1", 1, True, kb_nodes=11), "stage": "learn"},
        {**make_row("a", 1, "t2", 1, False, kb_nodes=22), "stage": "transfer"},
        {**make_row("a", 1, "t2", 2, True, kb_nodes=25), "stage": "transfer"},
    ]
    out = kb_growth(pd.DataFrame(rows))
    assert out["stage"].tolist() == ["learn", "learn", "transfer", "transfer"]
    assert out["attempt"].tolist() == [1, 2, 1, 2]
    assert out["step"].tolist() == [1, 2, 3, 4]
    # seed 1 stopped after attempt 1 of learn (carried forward); seed 0 after 1 of transfer
    assert out["kb_nodes"].tolist() == [10.5, 11.5, 21.0, 22.5]
    assert out["n_seeds"].tolist() == [2, 2, 2, 2]
    # before: both stages' attempt 1 were one point (max 22), hiding the learn stage


def test_a_table_without_stages_keeps_attempts_as_steps(tmp_path: Path) -> None:
    rows = [make_row("a", 0, "t", k, k == 3, kb_nodes=k) for k in (1, 2, 3)]
    out = kb_growth(pd.DataFrame(rows))
    assert out["stage"].tolist() == ["", "", ""]
    assert out["step"].tolist() == out["attempt"].tolist() == [1, 2, 3]
    assert get_kb_growth_info(pd.DataFrame(rows)).stages == ()
