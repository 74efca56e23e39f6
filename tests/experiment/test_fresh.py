"""``--fresh`` replaces an earlier run, and only a run: a folder holding a user's own files is
refused with one line and left exactly as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from costeer_lab.cli import main
from costeer_lab.errors import ConfigurationError
from costeer_lab.experiment import load_results, run_experiment
from costeer_lab.experiment._fresh import check_fresh_out, foreign_entries
from costeer_lab.testing import snapshot
from costeer_lab.testing._bad_inputs_base import PY_TASKS

TASKS = PY_TASKS  # one python_function task: add


def _spec(tmp_path: Path, **changes: Any) -> dict[str, Any]:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(TASKS))
    return {
        "name": "fresh",
        "suite": str(path),
        "tasks": {"split": "all"},
        "seed_knowledge": {"split": None},
        "arms": [{"name": "a"}],
        "max_loop": 1,
        "parallelism": {"executor": "serial"},
        **changes,
    }


def test_fresh_replaces_an_earlier_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_experiment(_spec(tmp_path), out, progress=False)
    (out / "report.html").write_text("<html>old report</html>")
    run_experiment(_spec(tmp_path, arms=[{"name": "b"}]), out, progress=False, resume=False)
    assert set(load_results(out)["arm"]) == {"b"}
    assert not (out / "kb" / "a-seed0.db").exists()  # the old run's store is gone
    assert not (out / "kb" / "a-seed0.db.indexes").exists()  # with its persisted indexes
    assert not (out / "report.html").exists()  # and its (now stale) report
    assert foreign_entries(out) == []


def test_fresh_refuses_a_folder_with_a_users_file_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    run_experiment(_spec(tmp_path), out, progress=False)
    (out / "thesis.tex").write_text("\\documentclass{article}")
    (out / "kb" / "notes.txt").write_text("mine")
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(_spec(tmp_path, max_loop=2)))
    before = snapshot(out)
    assert main(["run", str(spec), "--out", str(out), "--fresh", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"costeer-lab: error: --out {str(out)!r} holds files costeer_lab did not write "
        "(e.g. 'kb/notes.txt', 'thesis.tex'); refusing to delete them with --fresh; "
        "choose another --out"
    )
    assert snapshot(out) == before


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"thesis.tex": "mine"}, "holds files costeer_lab did not write (e.g. 'thesis.tex')"),
        ({"data/x.csv": "1"}, "(e.g. 'data')"),
        ({"kb/deep/er/x.db": ""}, "(e.g. 'kb/deep/er')"),
        ({"kb/a-seed0.db.indexes/notes.txt": ""}, "(e.g. 'kb/a-seed0.db.indexes/notes.txt')"),
        ({"results.parquet": "x"}, "does not look like a costeer_lab run (no spec.json)"),
        ({"spec.json": "{not json"}, "(its spec.json is unreadable: JSONDecodeError)"),
        ({"spec.json": '{"a": 1}'}, "(its spec.json is not an experiment spec)"),
    ],
)
def test_what_fresh_refuses(tmp_path: Path, files: dict[str, str], message: str) -> None:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    with pytest.raises(ConfigurationError) as info:
        check_fresh_out(tmp_path)
    assert message in str(info.value) and "choose another --out" in str(info.value)


def test_a_symlink_is_never_followed_or_deleted(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.mkdir()
    (target / "a-seed0.db").write_text("precious")
    out = tmp_path / "run"
    (out / "kb").mkdir(parents=True)
    (out / "spec.json").write_text('{"name": "x", "suite": "s", "arms": []}')
    (out / "kb" / "stage").symlink_to(target)
    with pytest.raises(ConfigurationError, match="'kb/stage'"):
        check_fresh_out(out)
    assert (target / "a-seed0.db").read_text() == "precious"


def test_what_fresh_accepts(tmp_path: Path) -> None:
    check_fresh_out(tmp_path / "missing")
    check_fresh_out(tmp_path)  # empty
    (tmp_path / "kb" / "learn" / "a-seed0.db.indexes").mkdir(parents=True)
    (tmp_path / "kb" / "a-seed0.db.indexes").mkdir(parents=True)
    for rel in (
        "kb/a-seed0.db.indexes/kg_task_description-c3ae708b.exact.clvidx",
        "kb/learn/a-seed0.db.indexes/kg_error-1a2b3c4d.exact.clvidx",
        "spec.json",
        "results.parquet",
        "report.html",
        "infra_errors.json",
        "settings.json",
        "llm_cache.db",
        "llm_cache.db-wal",
        "run.lock",
        ".results.parquet.abc123.tmp",
        "kb/a-seed0.db",
        "kb/a-seed0.db-shm",
        "kb/learn/a-seed0.db",
        "kb/learn/a-seed1.db.tmp",
    ):
        (tmp_path / rel).write_text('{"name": "x", "suite": "s", "arms": []}')
    check_fresh_out(tmp_path)
