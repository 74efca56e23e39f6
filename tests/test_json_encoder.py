"""``costeer_lab._json.encoder``: the text of ``json.dumps`` with the same options, its errors,
and no state kept between calls (an error leaves nothing behind; threads share one)."""

from __future__ import annotations

import json
import math
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costeer_lab._json import encoder
from costeer_lab.errors import InvalidInputError
from costeer_lab.store._codec import dumps_json

_OPTIONS: list[dict[str, Any]] = [
    {},
    {"sort_keys": True},
    {"ensure_ascii": False, "separators": (",", ":"), "allow_nan": False},
    {"sort_keys": True, "ensure_ascii": False, "separators": (",", ":")},
]

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()  # lone surrogates, control characters, quotes and non-ASCII included
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def _dumps(value: Any, options: dict[str, Any]) -> str | type[Exception]:
    try:
        return json.dumps(value, **options)
    except (TypeError, ValueError) as exc:
        return type(exc)


def _encode(value: Any, options: dict[str, Any]) -> str | type[Exception]:
    try:
        return encoder(**options)(value)
    except (TypeError, ValueError) as exc:
        return type(exc)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_the_text_of_json_dumps_with_the_same_options(value: Any) -> None:
    for options in _OPTIONS:
        assert _encode(value, options) == _dumps(value, options), options


def test_errors_are_those_of_json_dumps_and_leave_no_state_behind() -> None:
    strict = encoder(allow_nan=False)
    box: dict[str, Any] = {"x": math.nan}
    items: list[Any] = [1, {2}]
    with pytest.raises(ValueError, match="not JSON compliant"):
        strict({"a": box})
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        strict([items])
    # the containers a failure stopped inside are encoded as usual once fixed (an encoder
    # that kept its circular-reference marks would call them circular now)
    box["x"], items[1] = 1.5, 2
    assert strict({"again": box, "twice": [items, items]}) == json.dumps(
        {"again": box, "twice": [items, items]}
    )
    assert encoder()(math.inf) == "Infinity"


def test_a_value_that_holds_itself_ends_in_recursion_error() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(RecursionError):
        encoder()(loop)
    with pytest.raises(InvalidInputError, match=r"attrs of n1 .*holds itself or is nested"):
        dumps_json(loop, what="attrs of n1")
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InvalidInputError, match="nested too deeply"):
        dumps_json(deep, what="data")
    assert dumps_json({"fine": [1]}, what="data") == '{"fine":[1]}'


def test_one_encoder_serves_several_threads() -> None:
    encode = encoder(sort_keys=True)
    values = [{"k": i, "nested": {"z": [i] * (i % 7), "a": str(i)}} for i in range(2_000)]
    expected = [json.dumps(v, sort_keys=True) for v in values]
    got: list[list[str]] = [[] for _ in range(4)]

    def work(slot: int) -> None:
        got[slot] = [encode(v) for v in values]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [expected] * 4
