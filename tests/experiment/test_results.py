"""Results schema: validation errors, Parquet/CSV round trips, atomic saves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.experiment import (
    QUERY_KINDS,
    RESULT_COLUMNS,
    load_results,
    save_results,
    validate_results,
)
from costeer_lab.testing import example_results, make_row

from ._results_tables import hand_table


def test_columns_and_kinds() -> None:
    assert list(RESULT_COLUMNS)[:6] == ["run_id", "arm", "seed", "task_id", "attempt", "success"]
    assert len(RESULT_COLUMNS) == 25
    assert list(RESULT_COLUMNS)[-3:] == ["memory_queried", "memory_patterns", "memory_used"]
    assert QUERY_KINDS == ("similar", "former_trace", "component", "error")


def test_validate_returns_canonical_copy() -> None:
    df = hand_table()
    df["note"] = "x"
    out = validate_results(df[list(reversed(df.columns))])
    assert list(out.columns) == [*RESULT_COLUMNS, "note"]
    assert out["seed"].dtype == np.int64 and out["success"].dtype == bool
    assert out["cost_usd"].dtype == np.float64
    keys = list(zip(out["arm"], out["seed"], out["task_id"], out["attempt"], strict=True))
    assert keys == sorted(keys)
    assert "note" in df.columns and df.index.tolist() == list(range(len(df)))


def test_missing_columns_are_named() -> None:
    df = example_results().drop(columns=["kb_nodes", "retrieved"])
    with pytest.raises(
        InvalidInputError, match=r"missing column\(s\) \['retrieved', 'kb_nodes'\]"
    ):
        validate_results(df)


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("seed", "zero", r"'seed'.*expected a finite number, got 'zero'"),
        ("attempt", 1.5, r"'attempt'.*expected an integer, got 1.5"),
        ("success", "yes", r"'success'.*expected bool, got 'yes'"),
        ("success", 1, r"'success'.*expected bool, got 1"),
        ("arm", 3, r"'arm'.*expected str, got 3"),
        ("duration_s", float("nan"), r"'duration_s'.*finite number"),
        ("kb_nodes", True, r"'kb_nodes'.*finite number"),
        ("error_fingerprints", "not json", r"'error_fingerprints', row 2: invalid JSON"),
        ("error_fingerprints", '{"a": 1}', r"'error_fingerprints'.*JSON list of str"),
        ("used_knowledge_ids", "[1]", r"'used_knowledge_ids'.*JSON list of str"),
        ("retrieved", "[]", r"'retrieved'.*expected a JSON object"),
        ("retrieved", '{"semantic": []}', r"query kind 'semantic' is not one of"),
        ("retrieved", '{"error": {}}', r"'error' must map to a list"),
        ("retrieved", '{"error": [{"id": "k"}]}', r"items must be"),
        ("retrieved", '{"error": [{"id": 1, "score": 0.5}]}', r"items must be"),
    ],
)
def test_bad_values_are_reported(column: str, value: object, message: str) -> None:
    df = example_results().astype({column: object})
    df.at[2, column] = value  # type: ignore[assignment]  # deliberately any object
    with pytest.raises(InvalidInputError, match=message):
        validate_results(df)


def test_structural_rules() -> None:
    df = example_results()
    with pytest.raises(InvalidInputError, match=r"attempt.*>= 1, got 0"):
        validate_results(df.assign(attempt=df["attempt"] - 1))
    dup = pd.concat([df, df.iloc[[0]]], ignore_index=True)
    with pytest.raises(InvalidInputError, match=r"duplicate row.*\('no_knowledge', 0, 't1', 1\)"):
        validate_results(dup)
    after = pd.DataFrame([*df.to_dict("records"), make_row("rag", 0, "t1", 2, False)])
    with pytest.raises(InvalidInputError, match=r"\('rag', 0, 't1', 2\) comes after"):
        validate_results(after)
    with pytest.raises(InvalidInputError, match="must be a pandas DataFrame"):
        validate_results([1, 2])  # type: ignore[arg-type]


def test_empty_table_is_valid() -> None:
    empty = validate_results(pd.DataFrame({c: [] for c in RESULT_COLUMNS}))
    assert empty.empty and list(empty.columns) == list(RESULT_COLUMNS)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_round_trip(tmp_path: Path, fmt: str) -> None:
    df = hand_table()
    df.loc[0, "return_checking"] = ""  # empty strings must survive CSV
    df.loc[1, "code_feedback"] = 'line1\nline "two", 3'
    df.loc[2, "cost_usd"] = 0.1 + 0.2
    path = save_results(df, tmp_path, format=fmt)  # type: ignore[arg-type]
    assert path == tmp_path / f"results.{fmt}"
    back = load_results(path)
    pd.testing.assert_frame_equal(back, validate_results(df))
    pd.testing.assert_frame_equal(load_results(tmp_path), back)
    assert [p.name for p in tmp_path.iterdir()] == [f"results.{fmt}"]  # no temp files left


def test_directory_prefers_parquet_and_save_replaces(tmp_path: Path) -> None:
    save_results(example_results(), tmp_path, format="csv")
    save_results(hand_table(), tmp_path)
    assert len(load_results(tmp_path)) == len(hand_table())
    save_results(example_results(), tmp_path)  # overwrite
    assert len(load_results(tmp_path / "results.parquet")) == 6


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"no results\.parquet or results\.csv"):
        load_results(tmp_path)
    with pytest.raises(InvalidInputError, match="does not exist"):
        load_results(tmp_path / "nope.parquet")
    (tmp_path / "r.json").write_text("{}")
    with pytest.raises(InvalidInputError, match=r"expected a \.parquet or \.csv"):
        load_results(tmp_path / "r.json")
    with pytest.raises(InvalidInputError, match="format must be"):
        save_results(example_results(), tmp_path, format="xlsx")  # type: ignore[arg-type]


def test_invalid_table_is_not_written(tmp_path: Path) -> None:
    bad = example_results().assign(retrieved=json.dumps({"bogus": []}))
    with pytest.raises(InvalidInputError):
        save_results(bad, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_make_row_rejects_unknown_columns() -> None:
    with pytest.raises(InvalidInputError, match="unknown result column"):
        make_row("a", 0, "t", 1, True, colour="red")


def test_json_columns_decode_to_lists_and_dicts() -> None:
    from costeer_lab.experiment._decoded import decode_json_columns
    from costeer_lab.testing import example_results

    raw = example_results()
    df = decode_json_columns(raw)
    for i in range(len(raw)):
        assert df["error_fingerprints"].iloc[i] == json.loads(raw["error_fingerprints"].iloc[i])
        assert df["used_knowledge_ids"].iloc[i] == json.loads(raw["used_knowledge_ids"].iloc[i])
        assert df["retrieved"].iloc[i] == json.loads(raw["retrieved"].iloc[i])
    assert all(isinstance(v, str) for v in raw["retrieved"])  # the input is left as it was
    bad = raw.copy()
    bad.loc[bad.index[1], "retrieved"] = "[1]"
    with pytest.raises(InvalidInputError, match=r"'retrieved', row 1: expected a JSON object"):
        decode_json_columns(bad)
