"""Metadata filters pinned exactly: operators on strings and versions, how keys combine, the
full error messages, and the column caches."""

from __future__ import annotations

from typing import Any

import pytest

from costeer_lab.docs import COMPARISONS, Columns, evaluate_where, version_key
from costeer_lab.errors import InvalidInputError

ROWS: list[dict[str, Any]] = [
    {"source": "a", "n": 1, "version": "v9"},
    {"source": "b", "n": 5, "version": "V10"},
    {"source": "c", "n": 2.5, "version": "10.1"},
    {"source": "a", "n": "5"},
    {"n": None},
]


def match(where: dict[str, Any]) -> list[int]:
    return [i for i, hit in enumerate(evaluate_where(where, Columns(ROWS))) if hit]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"source": {"$lt": "b"}}, [0, 3]),  # strictly less: "b" itself is out
        ({"source": {"$lte": "b"}}, [0, 1, 3]),
        ({"source": {"$gte": "b"}}, [1, 2]),
        ({"version": {"$lt": "10"}}, [0]),  # "v9" is version 9, "V10" version 10
        ({"version": {"$gte": "v10"}}, [1, 2]),
        ({"n": {"$ne": 5}}, [0, 2, 3, 4]),  # "5" is a string, not 5
        ({"n": {"$nin": [5, 1]}}, [2, 3, 4]),
        ({"n": {"$in": [2.5]}}, [2]),
        ({"n": {"$lt": 5}}, [0, 2]),  # strictly less: 5 itself is out
        ({"n": {"$lte": 5}}, [0, 1, 2]),
        # a key before a logical operator still restricts the result
        ({"source": "a", "$or": [{"n": 5}, {"n": 1}]}, [0]),
        ({"$or": [{"n": 5}, {"n": 1}], "source": "b"}, [1]),
        ({"source": "a", "$and": [{"n": {"$gte": 0}}]}, [0]),
    ],
)
def test_operators_exactly(where: dict[str, Any], expected: list[int]) -> None:
    assert match(where) == expected


def test_version_keys_ignore_a_leading_v_in_either_case() -> None:
    assert version_key("v2.1") == version_key("V2.1") == version_key("2.1") == ((0, 2), (0, 1))
    assert version_key("1.0rc2") == ((0, 1), (0, 0), (1, "rc"), (0, 2))


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (
            {"n": {"$regex": "x"}},
            "where: unknown operator '$regex' on field 'n'; known operators: "
            + ", ".join(COMPARISONS),
        ),
        (
            {"$not": {"n": 1}},
            "where: unknown operator '$not' at the top of a filter; logical operators are "
            "$and, $or, $contains (on the content), and field operators " + ", ".join(COMPARISONS),
        ),
        ({"n": {"$lte": None}}, "where: 'n' $lte compares numbers or strings, got None"),
        ({"n": {"$lt": True}}, "where: 'n' $lt compares numbers or strings, got True"),
        ({"n": {"$gte": [1]}}, "where: 'n' $gte compares numbers or strings, got [1]"),
        ({"n": {"$ne": [1]}}, "where: 'n' $ne needs a str, number, bool or null, got list [1]"),
        ({"n": {"$eq": {"a": 1}}}, "where: 'n' $eq needs a str, number, bool or null, got dict"),
        ({"n": {"$nin": [1, [2]]}}, "where: 'n' $nin needs a str, number, bool or null, got list"),
        ({"n": {"$in": "ab"}}, "where: 'n' $in needs a list of values, got str"),
        ({1: "a"}, "where keys must be strings, got 1"),
        ({"$or": [{"n": 1}, {}]}, "where must be a non-empty mapping such as {'version': '3'}"),
        ({"$and": [{"n": {"$bad": 1}}]}, "where: unknown operator '$bad' on field 'n'"),
        ({"$contains": 3}, "where: $contains on the content needs a non-empty string, got 3"),
        ({"$contains": "x"}, "where: $contains on the content needs the chunk texts"),
    ],
)
def test_error_messages_exactly(where: Any, message: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        evaluate_where(where, Columns(ROWS))
    assert str(err.value).startswith(message)


def test_a_filter_that_is_not_a_mapping_is_refused() -> None:
    message = r"^where must be a non-empty mapping .* got \['n'\]$"
    with pytest.raises(InvalidInputError, match=message):
        evaluate_where(["n"], Columns(ROWS))  # type: ignore[arg-type]


def test_columns_need_one_content_per_row() -> None:
    with pytest.raises(
        InvalidInputError, match=r"^Columns needs one content per row: 5 rows, 1 contents$"
    ):
        Columns(ROWS, contents=["only one"])


def test_columns_are_built_once_and_typed() -> None:
    cols = Columns(ROWS)
    assert cols.column("n") is cols.column("n")
    nums = cols.numbers("n")
    assert cols.numbers("n") is nums
    assert [x if x == x else "nan" for x in nums.tolist()] == [1.0, 5.0, 2.5, "nan", "nan"]
    assert cols.numbers("source").tolist() != cols.numbers("source").tolist()  # all NaN
    assert cols.rows_equal("source", "a").tolist() == [0, 3]
    assert cols.rows_equal("source", "zz").tolist() == []
    assert cols.rows_equal("n", 1).dtype.name == "int64"


def test_missing_and_unhashable_values_skip_only_their_row() -> None:
    rows: list[dict[str, Any]] = [{}, {"a": [1]}, {"a": 1}, {"a": None}]
    cols = Columns(rows)
    assert evaluate_where({"a": 1}, cols).tolist() == [False, False, True, False]
    assert evaluate_where({"a": None}, cols).tolist() == [False, False, False, True]
    assert evaluate_where({"b": None}, cols).tolist() == [False] * 4  # missing is not null


def test_every_key_of_a_mapping_restricts_the_result() -> None:
    assert match({"n": {"$gte": 1}, "source": "a"}) == [0]
    cols = Columns(ROWS, contents=["retry", "retry", "x", "x", "retry"])
    assert evaluate_where({"source": "a", "$contains": "retry"}, cols).tolist() == [
        True,
        False,
        False,
        False,
        False,
    ]


def test_only_the_version_field_compares_naturally() -> None:
    rows = [{"name": "item10", "version": "item10"}]
    assert evaluate_where({"name": {"$gt": "item9"}}, Columns(rows)).tolist() == [False]
    assert evaluate_where({"version": {"$gt": "item9"}}, Columns(rows)).tolist() == [True]
