"""The plain-data codec: exact round trips, and nothing but builtin types ever comes out."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costeer_lab.evaluate._plaindata import PlainDataError, canonical, decode, encode

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.builds(lambda e, d: d * 7**e, st.integers(0, 9000), st.sampled_from([1, -1]))  # huge
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.just(-0.0)
    | st.text()
    | st.binary()
    | st.complex_numbers(allow_nan=True, allow_infinity=True)
)
_hashable = st.recursive(
    _scalars,
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=4),
    max_leaves=8,
)
plain = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(_hashable, inner, max_size=4)
        | st.sets(_hashable, max_size=4)
        | st.frozensets(_hashable, max_size=4)
    ),
    max_leaves=20,
)


def same(a: Any, b: Any) -> bool:
    """Equal value *and* exact type, recursively (nan equals nan, -0.0 differs from 0.0)."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if type(a) is complex:
        return same(a.real, b.real) and same(a.imag, b.imag)
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return len(a) == len(b) and all(
            same(ka, kb) and same(va, vb)
            for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True)
        )
    if type(a) in (set, frozenset):
        return len(a) == len(b) and all(any(same(x, y) for y in b) for x in a)
    return bool(a == b)


@settings(max_examples=300, deadline=None)
@given(plain)
def test_round_trip_is_exact_also_through_json_text(value: Any) -> None:
    encoded = encode(value)
    text = json.dumps(encoded, allow_nan=False)  # strict JSON: nan/inf are tagged strings
    assert same(decode(json.loads(text)), value)
    assert canonical(value) == canonical(decode(encoded))


@pytest.mark.parametrize(
    "value",
    [True, 1, 1.0, -0.0, 0.0, float("nan"), "1", b"1", 1j, [1], (1,), ((1,),), [(1, [2])], {1}],
)
def test_types_are_kept_apart(value: Any) -> None:
    out = decode(encode(value))
    assert same(out, value)
    others = [True, 1, 1.0, -0.0, 0.0, "1", b"1", 1j, [1], (1,), ((1,),), [(1, [2])], {1}]
    assert sum(canonical(v) == canonical(value) for v in others) == (
        0 if isinstance(value, float) and math.isnan(value) else 1
    )


def test_sets_and_dict_keys() -> None:
    value = {(1, "a"): frozenset({2.5, None}), None: {b"k": [True]}, 3: set()}
    assert same(decode(encode(value)), value)
    assert canonical({3, 1, 2}) == canonical({2, 3, 1})


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class SneakyInt(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class SneakyStr(str):
    pass


class SneakyList(list[int]):
    pass


class SneakyDict(dict[str, int]):
    pass


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        (AlwaysEqual(), "AlwaysEqual"),
        (SneakyInt(3), "SneakyInt"),
        (SneakyStr("x"), "SneakyStr"),
        (SneakyList([1]), "SneakyList"),
        (SneakyDict(a=1), "SneakyDict"),
        ([1, (2, {SneakyInt(1)})], "SneakyInt"),
        ({"k": lambda: 1}, "function"),
        (range(3), "range"),
        (iter([1]), "list_iterator"),
        (bytearray(b"x"), "bytearray"),
    ],
)
def test_anything_else_is_refused_with_its_type_name(value: Any, type_name: str) -> None:
    with pytest.raises(PlainDataError, match=type_name):
        encode(value)


def test_numpy_values_are_refused_unless_converted() -> None:
    np = pytest.importorskip("numpy")
    with pytest.raises(PlainDataError, match=r"numpy\.float64"):
        encode(np.float64(1.5))  # a float subclass: refused like any other subclass
    assert encode(np.int64(3), default=lambda v: v.item()) == {"int": "3"}  # type: ignore[attr-defined]
    with pytest.raises(PlainDataError, match="ndarray"):
        encode(np.arange(3), default=lambda v: v)  # the default returned it unchanged


def test_cycles_and_deep_nesting_are_refused() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(PlainDataError, match="deeper"):
        encode(cyclic)
    deep: Any = []
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(PlainDataError, match="deeper"):
        decode(deep)


@pytest.mark.parametrize(
    "obj",
    [
        1,
        1.5,
        {"int": 1},
        {"int": "zz"},
        {"float": 1.0},
        {"float": "x"},
        {"tuple": [], "list": []},
        {"unknown": []},
        {"set": [[1]]},
        {"frozenset": [{"dict": []}]},
        {"dict": [[[], 1]]},
        {"dict": [[1]]},
        {"bytes": "***"},
        {"complex": ["1.0"]},
        {"complex": [1, 2]},
        {"tuple": "abc"},
    ],
)
def test_invalid_encodings_are_rejected(obj: Any) -> None:
    with pytest.raises(PlainDataError):
        decode(obj)


_keys = st.sampled_from(["int", "float", "tuple", "set", "dict", "x"])
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=2),
    max_leaves=12,
)


def _only_builtins(value: Any) -> bool:
    tp = type(value)
    if tp in (list, tuple, set, frozenset):
        return all(_only_builtins(v) for v in value)
    if tp is dict:
        return all(_only_builtins(k) and _only_builtins(v) for k, v in value.items())
    return tp in (type(None), bool, int, float, str, bytes, complex)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_decoding_any_json_gives_builtins_or_refuses(obj: Any) -> None:
    try:
        value = decode(obj)
    except PlainDataError:
        return
    assert _only_builtins(value)
