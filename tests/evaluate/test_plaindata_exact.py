"""The plain-data codec (``costeer_lab/evaluate/_plaindata.py``) pinned exactly: the encoded
form, the depth and size limits on their edges for every container, payloads of one tag sent
under another, and the messages (they are feedback, and name the refused type exactly).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

from costeer_lab.evaluate._plaindata import (
    MAX_DEPTH,
    MAX_FLOAT_CHARS,
    MAX_ITEMS,
    DecodeBudget,
    PlainDataError,
    canonical,
    decode,
    encode,
)


class Box:
    """Not plain data; the ``default`` of :func:`encode` unwraps it."""

    def __init__(self, x: object) -> None:
        self.x = x

    def __hash__(self) -> int:
        return hash(self.x)


def _unbox(v: object) -> object:
    return v.x if isinstance(v, Box) else v


def _refusal(tp_name: str) -> str:
    return (
        f"a value of type {tp_name!r} is not plain data (allowed: None, bool, int, float, str, "
        "bytes, complex, list, tuple, dict, set, frozenset)"
    )


def _message(fn: Callable[[], object]) -> str:
    with pytest.raises(PlainDataError) as info:
        fn()
    return str(info.value)


# -- the encoded form ----------------------------------------------------------------------------
def test_encoded_form_is_exact() -> None:
    assert encode([255, -255, 2.5, b"\xff", 1 + 2j, True, None, "s"]) == [
        {"int": "ff"},
        {"int": "-ff"},
        {"float": "2.5"},
        {"bytes": "/w=="},
        {"complex": ["1.0", "2.0"]},
        True,
        None,
        "s",
    ]
    assert encode({3, 1, 2}) == {"set": [{"int": "1"}, {"int": "2"}, {"int": "3"}]}
    assert encode({1: (2,)}) == {"dict": [[{"int": "1"}, {"tuple": [{"int": "2"}]}]]}


def test_canonical_text_is_compact_and_sorted() -> None:
    assert canonical((1, {"a": [None]})) == '{"tuple":[{"int":"1"},{"dict":[["a",[null]]]}]}'


# -- type names in refusals ----------------------------------------------------------------------
def test_refusals_name_the_type_exactly() -> None:
    assert _message(lambda: encode(range(3))) == _refusal("range")
    assert _message(lambda: encode([lambda: 1])) == _refusal("function")

    class Inner:
        pass

    qual = f"{__name__}.test_refusals_name_the_type_exactly.<locals>.Inner"
    assert _message(lambda: encode(Inner())) == _refusal(qual)
    nameless = type("Nameless", (), {"__module__": ""})
    assert _message(lambda: encode(nameless())) == _refusal("Nameless")
    moduleless = type("Moduleless", (), {"__module__": None})
    assert _message(lambda: encode(moduleless())) == _refusal("Moduleless")
    with pytest.raises(PlainDataError) as info:
        encode({"k": Box(1)})
    assert info.value.value_type is Box


def test_default_converts_in_every_container() -> None:
    for value, expected in (
        ([Box(1)], [1]),
        ((Box(1),), (1,)),
        ({Box(1)}, {1}),
        (frozenset({Box(1)}), frozenset({1})),
        ({Box(1): 2}, {1: 2}),
        ({2: Box(1)}, {2: 1}),
        (Box(Box(1)), None),  # the replacement must be plain itself
    ):
        if expected is None:
            with pytest.raises(PlainDataError, match="Box"):
                encode(value, default=_unbox)
            continue
        out = decode(encode(value, default=_unbox))
        assert out == expected and type(out) is type(expected)


# -- depth: MAX_DEPTH levels below the top are accepted, one more is refused ---------------------
_WRAPS: dict[str, Callable[[Any], Any]] = {
    "list": lambda x: [x],
    "tuple": lambda x: (x,),
    "frozenset": lambda x: frozenset({x}),
    "set": lambda x: {x},  # only the outermost level: a set is unhashable
    "dict key": lambda x: {x: None},
    "dict value": lambda x: {None: x},
}
_ENCODED_WRAPS: dict[str, Callable[[Any], Any]] = {
    "list": lambda x: [x],
    "tuple": lambda x: {"tuple": [x]},
    "frozenset": lambda x: {"frozenset": [x]},
    "set": lambda x: {"set": [x]},
    "dict key": lambda x: {"dict": [[x, None]]},
    "dict value": lambda x: {"dict": [[None, x]]},
}


def _nested(levels: int, outer: Callable[[Any], Any], inner: Callable[[Any], Any]) -> Any:
    """``levels`` containers around ``0``: the outermost is ``outer``, the rest ``inner``
    (tuples or their encoding); the ``0`` lies ``levels`` levels down."""
    value: Any = 0 if inner is _WRAPS["tuple"] else {"int": "0"}
    for _ in range(levels - 1):
        value = inner(value)
    return outer(value)


@pytest.mark.parametrize("kind", list(_WRAPS))
def test_encode_depth_limit_is_exact_in_every_container(kind: str) -> None:
    ok = _nested(MAX_DEPTH, _WRAPS[kind], _WRAPS["tuple"])
    assert decode(encode(ok)) == ok
    with pytest.raises(PlainDataError, match=f"nested deeper than {MAX_DEPTH} levels"):
        encode(_nested(MAX_DEPTH + 1, _WRAPS[kind], _WRAPS["tuple"]))


@pytest.mark.parametrize("kind", list(_ENCODED_WRAPS))
def test_decode_depth_limit_is_exact_in_every_container(kind: str) -> None:
    decode(_nested(MAX_DEPTH, _ENCODED_WRAPS[kind], _ENCODED_WRAPS["tuple"]))
    with pytest.raises(PlainDataError, match=f"encoding nested deeper than {MAX_DEPTH} levels"):
        decode(_nested(MAX_DEPTH + 1, _ENCODED_WRAPS[kind], _ENCODED_WRAPS["tuple"]))


# -- sizes ---------------------------------------------------------------------------------------
def test_float_text_limit_is_inclusive() -> None:
    assert decode({"float": "1" * MAX_FLOAT_CHARS}) == float("1" * MAX_FLOAT_CHARS)
    assert decode({"complex": ["1" * MAX_FLOAT_CHARS, "2"]}).imag == 2.0
    too_long = "1" * (MAX_FLOAT_CHARS + 1)
    for obj in ({"float": too_long}, {"complex": ["1", too_long]}, {"complex": [too_long, "1"]}):
        assert _message(functools.partial(decode, obj)) == "float text of more than 64 characters"


# -- a payload under the wrong tag is refused, never read as another type ------------------------
@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            {"int": ["1.0", "2.0"]},
            "invalid encoding: unknown tag or payload 'int': ['1.0', '2.0']",
        ),
        ({"complex": "12"}, "invalid encoding: unknown tag or payload 'complex': '12'"),
        ({"complex": "AAAA"}, "invalid encoding: unknown tag or payload 'complex': 'AAAA'"),
        (
            {"complex": ["1.0", 2]},
            "invalid encoding: unknown tag or payload 'complex': ['1.0', 2]",
        ),
        ({"bytes": ["AAAA"]}, "invalid encoding: unknown tag or payload 'bytes': ['AAAA']"),
        ({"dict": ["ab"]}, "invalid dict item 'ab'"),
        ({"dict": [["a", "b", "c"]]}, "invalid dict item ['a', 'b', 'c']"),
        ({"dict": "ab"}, "invalid encoding: unknown tag or payload 'dict': 'ab'"),
    ],
)
def test_payloads_under_the_wrong_tag_are_refused(obj: Any, message: str) -> None:
    assert _message(lambda: decode(obj)) == message


def test_long_payloads_are_shortened_to_80_characters() -> None:
    fits = "x" * 78  # repr: 80 characters
    assert _message(lambda: decode({"dict": [fits]})) == f"invalid dict item {fits!r}"
    longer = "x" * 79  # repr: 81 characters, shown as 77 and "..."
    shown = repr(longer)[:77] + "..."
    assert _message(lambda: decode({"dict": [longer]})) == f"invalid dict item {shown}"
    assert decode({"bytes": "AAAA"}) == b"\x00\x00\x00"
    assert decode({"dict": [["a", "b"]]}) == {"a": "b"}


# -- written against the survivors of the first mutmut run --------------------------------------
def test_item_limit_of_one_decode_is_inclusive() -> None:
    assert len(decode([None] * (MAX_ITEMS - 1))) == MAX_ITEMS - 1  # and the list: MAX_ITEMS
    assert _message(lambda: decode([None] * MAX_ITEMS)) == (
        f"encoding holds more than {MAX_ITEMS} items"
    )


def test_a_shared_budget_counts_items_exactly() -> None:
    budget = DecodeBudget(max_items=5)
    assert decode([None] * 4, budget=budget) == [None] * 4  # 5 items: the budget is spent
    assert budget.items_left == 0
    assert _message(lambda: decode(None, budget=budget)) == "encoding holds too many items"


def test_the_cpu_clock_is_read_every_1024_items() -> None:
    assert len(decode([None] * 1022, budget=DecodeBudget(cpu_s=-1.0))) == 1022  # 1023 items
    spent = DecodeBudget(cpu_s=-1.0)
    assert _message(lambda: decode([None] * 1023, budget=spent)) == (
        "decoding took too much CPU time"
    )  # the 1024th item looks at the clock
    assert len(decode([None] * 5000, budget=DecodeBudget(cpu_s=100.0))) == 5000


def test_invalid_encoding_messages() -> None:
    assert _message(lambda: decode(1.5)) == "invalid encoding: float 1.5"
    assert _message(lambda: decode({"a": 1, "b": 2})) == "invalid encoding: dict {'a': 1, 'b': 2}"
    assert _message(lambda: decode({"int": "zz"})) == (
        "invalid 'int' encoding 'zz': invalid literal for int() with base 16: 'zz'"
    )
