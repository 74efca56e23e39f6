"""Exact behaviour of the store's encoding helpers (strict JSON, float32 blobs, checks)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from costeer_lab.errors import InvalidInputError
from costeer_lab.store._codec import (
    _short,
    as_matrix,
    check_str,
    check_where,
    decode_matrix,
    decode_vector,
    dumps_json,
    encode_vector,
    loads_json,
)


def test_dumps_json_is_compact_strict_and_keeps_unicode() -> None:
    assert dumps_json({"a": [1, 2.5, None, True], "é": "ü"}, what="x") == (
        '{"a":[1,2.5,null,true],"é":"ü"}'
    )
    assert loads_json(dumps_json({"k": [1]}, what="x")) == {"k": [1]}
    for bad, name in ((math.nan, "nan"), ({1, 2}, "set"), (b"x", "bytes"), (math.inf, "inf")):
        with pytest.raises(InvalidInputError) as err:
            dumps_json({"v": bad}, what="attrs of node n")
        text = str(err.value)
        assert text.startswith("attrs of node n must be JSON-serializable"), name
        assert f"got {_short({'v': bad})}" in text
        assert err.value.__cause__ is None and err.value.__suppress_context__


def test_short_cuts_long_reprs_at_80() -> None:
    assert _short("a" * 78) == repr("a" * 78)  # 80 characters with the quotes
    assert _short("a" * 79) == repr("a" * 79)[:77] + "..."
    assert len(_short(list(range(100)))) == 80


def test_check_str() -> None:
    assert check_str("x", "name") == "x"
    with pytest.raises(InvalidInputError, match=r"^name must be a str, got int 3$"):
        check_str(3, "name")


def test_vector_blobs_are_little_endian_float32_and_fresh() -> None:
    v = np.array([1.5, -2.0, 3.25], dtype=np.float64)
    blob = encode_vector(v)
    assert blob == np.array([1.5, -2.0, 3.25], dtype="<f4").tobytes() and len(blob) == 12
    out = decode_vector(blob, 3)
    assert out.dtype == np.float32 and out.tolist() == [1.5, -2.0, 3.25]
    out[0] = 9.0  # writable copy, the blob is untouched
    assert decode_vector(blob, 3)[0] == 1.5
    assert decode_vector(blob + encode_vector([7.0]), 3).tolist() == [1.5, -2.0, 3.25]
    m = decode_matrix([blob, encode_vector([4.0, 5.0, 6.0])], 3)
    assert m.dtype == np.float32 and m.shape == (2, 3) and m.flags.writeable
    assert m.tolist() == [[1.5, -2.0, 3.25], [4.0, 5.0, 6.0]]
    empty = decode_matrix([], 5)
    assert empty.shape == (0, 5) and empty.dtype == np.float32


def test_as_matrix_accepts_numbers_and_refuses_the_rest() -> None:
    ints = as_matrix([[1, 2], [3, 4]], 2, "vectors")
    assert ints.dtype == np.float32 and ints.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    f32 = np.ones((1, 3), dtype=np.float32)
    assert as_matrix(f32, 1, "v") is f32  # no copy when already float32
    assert as_matrix(np.ones((2, 1), dtype=np.uint8), 2, "v").shape == (2, 1)
    cases = [
        ([1.0, 2.0], 1, r"^v must be 2-D \(n, dim\), got shape \(2,\)$"),
        (np.ones((2, 3)), 3, r"^v has 2 rows but 3 ids were given$"),
        (np.ones((2, 0)), 2, r"^v must have at least one column, got shape \(2, 0\)$"),
        (np.array([["a"]]), 1, r"^v must hold numbers, got dtype <U1$"),
        (np.array([[True]]), 1, r"^v must hold numbers, got dtype bool$"),
        (np.array([[1.0, np.nan]]), 1, r"^v contains NaN or infinite values$"),
        (np.array([[np.inf]]), 1, r"^v contains NaN or infinite values$"),
        ([[1.0], [1.0, 2.0]], 2, r"^v must be a 2-D float array: "),
    ]
    for value, n, message in cases:
        with pytest.raises(InvalidInputError, match=message):
            as_matrix(value, n, "v")


def test_check_where() -> None:
    assert check_where(None) == [] and check_where({}) == []
    where = {"a": "x", "b": 1, "c": 2.5, "d": True, "e": None, "f": -(2**63), "g": 2**63 - 1}
    assert check_where(where) == list(where.items())
    bad_fields = ["", 'a"b', "a\\b", 3]
    for field in bad_fields:
        with pytest.raises(InvalidInputError, match=r"^where field names must be non-empty"):
            check_where({field: 1})  # type: ignore[dict-item]
    with pytest.raises(
        InvalidInputError, match=r"^where\['a'\] must be a JSON scalar .* list \[1\]$"
    ):
        check_where({"a": [1]})
    for value in (math.nan, math.inf, -math.inf):
        with pytest.raises(InvalidInputError, match=r"^where\['a'\] must be finite"):
            check_where({"a": value})
    for value in (2**63, -(2**63) - 1):
        with pytest.raises(InvalidInputError, match=r"^where\['a'\] must fit in 64 bits"):
            check_where({"a": value})
