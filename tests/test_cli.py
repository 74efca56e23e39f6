"""The costeer-lab command line: every subcommand has --help; run → report → kb on a tiny spec."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from costeer_lab.cli import build_parser, main

SUBCOMMANDS = [["run"], ["report"], ["kb"], ["kb", "stats"], ["kb", "query"]]


@pytest.mark.parametrize("words", SUBCOMMANDS, ids=" ".join)
def test_every_subcommand_has_help(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*words, "--help"])
    assert exc.value.code == 0
    assert "usage: costeer-lab" in capsys.readouterr().out


def test_parser_lists_every_subcommand() -> None:
    text = build_parser().format_help()
    for word in ("run", "report", "kb"):
        assert word in text


def test_module_entry_point_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "costeer_lab", "--help"], capture_output=True, text=True, check=True
    )
    assert "run" in out.stdout and "report" in out.stdout


def test_bad_spec_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(yaml.safe_dump({"name": "x", "suite": "alpha158", "arms": [], "seeds": [0]}))
    assert main(["run", str(spec), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "costeer-lab: error:" in err and "arms" in err


def test_run_report_and_kb_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = {
        "name": "cli",
        "suite": "alpha158",
        "suite_options": {"n_instruments": 5, "n_days": 60, "cache_dir": str(tmp_path / "c")},
        "tasks": {"ids": ["alpha158/MA10", "alpha158/KLEN"]},
        "arms": [{"name": "no_knowledge"}, {"name": "rag_v2", "rag": "v2"}],
        "max_loop": 2,
        "parallelism": {"executor": "serial"},
    }
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec))
    out = tmp_path / "out"
    assert main(["run", str(spec_file), "--out", str(out), "--quiet"]) == 0
    assert main(["report", str(out)]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "no_knowledge" in page and "rag_v2" in page
    db = str(out / "kb" / "rag_v2-seed0.db")
    capsys.readouterr()
    assert main(["kb", "stats", db, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["nodes.task_description"] > 0 and stats["query_log"] > 0
    assert main(["kb", "query", db, "10-day moving average of close", "-k", "3", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 3
    assert hits == sorted(hits, key=lambda h: -h["score"])
    assert "MA10" in hits[0]["content"] or "Mean($close" in hits[0]["content"]
