"""``costeer-lab docs ingest|query|stats`` on a real store file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costeer_lab.cli import main

from ._docs_helpers import write_corpus


@pytest.mark.parametrize(
    "words", [["docs"], ["docs", "ingest"], ["docs", "query"], ["docs", "stats"]]
)
def test_docs_subcommands_have_help(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*words, "--help"])
    assert exc.value.code == 0 and "usage: costeer-lab docs" in capsys.readouterr().out


def test_ingest_query_and_stats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = write_corpus(tmp_path / "docs")
    db = ["--db", str(tmp_path / "kb.db"), "--collection", "cli"]
    assert main(["docs", "ingest", str(docs), *db]) == 0
    assert "4 file(s): 4 added, 0 updated, 0 unchanged" in capsys.readouterr().out
    assert main(["docs", "ingest", str(docs), *db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unchanged"] == 4

    assert main(["docs", "query", "failed requests retried", *db, "--version", "2", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["metadata"]["section_title"] == "Retries"
    assert {h["metadata"]["version"] for h in hits} == {"2"}

    where = json.dumps({"author": "ana"})
    assert main(["docs", "query", "dough", *db, "--where", where, "--mode", "keyword"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("0.411  cooking.md > Bread")  # no 0 fill

    assert main(["docs", "stats", *db]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["documents"] == 4 and stats["versions"] == ["1", "2"]


def test_bad_where_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--db", str(tmp_path / "kb.db")]
    main(["docs", "ingest", str(write_corpus(tmp_path / "docs")), *db])
    capsys.readouterr()
    assert main(["docs", "query", "x", *db, "--where", "{bad json"]) == 2
    assert "--where must be a JSON object" in capsys.readouterr().err
    assert main(["docs", "query", "x", *db, "--where", '{"n": {"$near": 1}}']) == 2
    assert "unknown operator '$near'" in capsys.readouterr().err


def test_query_without_a_store_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "none.db"
    assert main(["docs", "query", "x", "--db", str(missing)]) == 2
    assert f"no document store at {str(missing)!r}" in capsys.readouterr().err
    assert not missing.exists()


def test_query_without_match_prints_one_clean_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing matching prints one line naming why, and no Python warning (issue 26)."""
    db = ["--db", str(tmp_path / "kb.db"), "--collection", "c"]
    assert main(["docs", "ingest", str(write_corpus(tmp_path / "docs")), *db]) == 0
    capsys.readouterr()
    where = json.dumps({"author": "nobody"})
    assert main(["docs", "query", "dough", *db, "--where", where]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "no matching documents (document collection 'c' has no chunk matching the filters)"
    ]
    assert "Warning" not in err and err == ""
    assert main(["docs", "query", "bake a chocolate cake", *db]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["no matching documents (none scored 0.18 or more)"] and err == ""
