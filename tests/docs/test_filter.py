"""Metadata filters: every operator, type rules, bad filters, and filtering before ranking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from costeer_lab.docs import Columns, evaluate_where
from costeer_lab.errors import InvalidInputError

from ._docs_helpers import open_kb, write_corpus

ROWS: list[dict[str, Any]] = [
    {"source": "a", "n": 1, "version": "9", "flag": True},
    {"source": "b", "n": 5, "version": "10", "flag": False},
    {"source": "c", "n": 2.5, "version": "10.1"},
    {"source": "a", "n": "5"},  # a string where others hold numbers
    {"n": None},
]


def match(where: dict[str, Any]) -> list[int]:
    return [i for i, hit in enumerate(evaluate_where(where, Columns(ROWS))) if hit]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"source": "a"}, [0, 3]),
        ({"source": {"$eq": "b"}}, [1]),
        ({"source": {"$ne": "a"}}, [1, 2, 4]),  # a missing field is "not equal"
        ({"n": {"$gt": 2}}, [1, 2]),  # the string "5" and null are not numbers
        ({"n": {"$gte": 2.5}}, [1, 2]),
        ({"n": {"$lt": 2.5}}, [0]),
        ({"n": {"$lte": 2.5}}, [0, 2]),
        ({"n": {"$in": [1, "5"]}}, [0, 3]),
        ({"source": {"$nin": ["a", "b"]}}, [2, 4]),
        ({"n": 5}, [1]),
        ({"n": None}, [4]),
        ({"flag": True}, [0]),
        ({"n": True}, []),  # booleans never equal numbers
        ({"n": 1.0}, [0]),  # 1 == 1.0
        ({"$and": [{"source": "a"}, {"n": {"$gte": 1}}]}, [0]),
        ({"$or": [{"source": "c"}, {"n": {"$lt": 2}}]}, [0, 2]),
        ({"$or": [{"$and": [{"source": "a"}, {"n": "5"}]}, {"n": None}]}, [3, 4]),
        ({"source": "a", "flag": True}, [0]),  # keys of one mapping are joined by AND
        ({"n": {"$gt": 1, "$lt": 5}}, [2]),
        ({"version": {"$gt": "9"}}, [1, 2]),  # versions compare naturally, not as text
        ({"version": {"$lte": "10"}}, [0, 1]),
        ({"source": {"$gt": "a"}}, [1, 2]),  # other strings compare as text
    ],
)
def test_every_operator(where: dict[str, Any], expected: list[int]) -> None:
    assert match(where) == expected


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ({"n": {"$regex": "x"}}, r"unknown operator '\$regex' on field 'n'"),
        ({"$not": {"n": 1}}, r"unknown operator '\$not' at the top"),
        ({"$and": []}, r"\$and needs a non-empty list"),
        ({"$or": {"n": 1}}, r"\$or needs a non-empty list"),
        ({"n": {"$in": 3}}, r"'n' \$in needs a list of values, got int"),
        ({"n": {"$gt": None}}, r"'n' \$gt compares numbers or strings"),
        ({"n": {"$gt": [1]}}, r"'n' \$gt compares numbers or strings"),
        ({"n": [1, 2]}, r"'n' \$eq needs a str, number, bool or null, got list"),
        ({"n": {}}, r"'n' has an empty operator mapping"),
        ({}, "where must be a non-empty mapping"),
    ],
)
def test_bad_filters_name_the_operator(where: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        evaluate_where(where, Columns(ROWS))


def test_filter_is_applied_before_ranking(tmp_path: Path) -> None:
    """The garden note ranks last for an API query, yet a filter selecting the notes returns
    both notes chunks; a filter with fewer matches than n returns exactly the matches."""
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(write_corpus(tmp_path / "docs"))
    query = "how often are failed requests retried"
    for mode in ("vector", "keyword", "hybrid"):
        unfiltered = kb.retrieve(query, n_results=3, mode=mode)
        assert all(h["metadata"]["file_name"] == "api.md" for h in unfiltered)
        notes = kb.retrieve(query, n_results=10, where={"file_type": "text"}, mode=mode)
        assert [h["metadata"]["file_name"] for h in notes] == ["garden.txt"]  # 1 < n matches
        cooking = kb.retrieve(query, n_results=2, where={"author": "ana"}, mode=mode)
        assert len(cooking) == 2 and {h["metadata"]["section_title"] for h in cooking} == {
            "Bread",
            "Soup",
        }
        ranged = kb.retrieve(
            query, n_results=5, where={"$and": [{"rating": {"$gte": 4}}, {"part": 0}]}, mode=mode
        )
        assert len(ranged) == 2
    with pytest.raises(InvalidInputError, match=r"\$like"):
        kb.retrieve(query, where={"source": {"$like": "x"}})
    kb.close()


def test_contains_on_content_and_string_metadata() -> None:
    """``$contains`` (issue 26): a substring of the content, or of a string field."""
    rows: list[dict[str, Any]] = [
        {"path": "v1/api.md", "n": 3},
        {"path": "x/cook.md", "n": "13"},
        {},
    ]
    cols = Columns(rows, contents=["Set max_retries=3", "Knead the dough", "max_retries"])
    assert evaluate_where({"$contains": "max_retries"}, cols).tolist() == [True, False, True]
    assert evaluate_where({"$contains": "Max_retries"}, cols).tolist() == [False] * 3
    assert evaluate_where({"path": {"$contains": "api"}}, cols).tolist() == [True, False, False]
    # a number never contains a string; a missing field does not match
    assert evaluate_where({"n": {"$contains": "3"}}, cols).tolist() == [False, True, False]
    both = {"$or": [{"$contains": "dough"}, {"path": {"$contains": "v1/"}}]}
    assert evaluate_where(both, cols).tolist() == [True, True, False]
    with pytest.raises(InvalidInputError, match=r"\$contains on the content needs a non-empty"):
        evaluate_where({"$contains": ""}, cols)
    with pytest.raises(InvalidInputError, match=r"\$contains on 'path' needs a non-empty string"):
        evaluate_where({"path": {"$contains": 3}}, cols)
    with pytest.raises(InvalidInputError, match="needs the chunk texts"):
        evaluate_where({"$contains": "x"}, Columns(rows))


def test_contains_filters_retrieval_before_ranking(tmp_path: Path) -> None:
    kb = open_kb(tmp_path / "kb.db")
    kb.ingest(write_corpus(tmp_path / "docs"))
    hits = kb.retrieve("requests", n_results=10, where={"$contains": "max_retries"})
    assert hits and all("max_retries" in h["content"] for h in hits)
    assert {h["metadata"]["version"] for h in hits} == {"2"}
    where = {"file_name": {"$contains": "cook"}}
    assert {h["metadata"]["file_name"] for h in kb.retrieve("dough", where=where)} == {
        "cooking.md"
    }
    kb.close()
