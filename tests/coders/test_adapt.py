"""Token-level adaptation of source code to a similar target task."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from costeer_lab.coders._adapt import Adaptation, adapt_code, derive_adaptation
from costeer_lab.records import Task

from ._coder_helpers import ma_code, ma_task


def test_window_and_name_mapping() -> None:
    ad = derive_adaptation(ma_task(5), ma_task(10))
    assert dict(ad.numbers) == {5.0: "10"}
    assert dict(ad.names) == {"MA5": "MA10"}
    assert not ad.fields
    assert adapt_code(ma_code(5), ad) == ma_code(10)


def test_field_mapping_rewrites_strings_not_attributes() -> None:
    ad = derive_adaptation(ma_task(5), ma_task(5, "open"))
    assert dict(ad.fields) == {"$close": "$open"}
    code = 'close = df["$close"]\nf.close()\nlabel = "close"\n'
    assert adapt_code(code, ad) == 'open = df["$open"]\nf.close()\nlabel = "open"\n'


def test_operator_names_follow_the_formulation() -> None:
    src = Task("s", "MA5", "", formulation="Mean($close, 5)")
    dst = Task("t", "STD5", "", formulation="Std($close, 5)")
    ad = derive_adaptation(src, dst)
    assert ad.names["Mean"] == "Std"
    assert adapt_code("y = x.rolling(5).mean()\n", ad) == "y = x.rolling(5).std()\n"


def test_only_whole_number_literals_change_and_fixed_keywords_are_untouched() -> None:
    ad = Adaptation(numbers={1.0: "3"})
    code = "a = x.shift(1)\nb = 1.0 * y\nc = df.mean(axis=1)\nd = y**1 + 1e0\n"
    want = "a = x.shift(3)\nb = 1.0 * y\nc = df.mean(axis=1)\nd = y**1 + 1e0\n"
    assert adapt_code(code, ad) == want


def test_comments_are_untouched_and_swaps_are_simultaneous() -> None:
    ad = Adaptation(fields={"$open": "$close", "$close": "$open"})
    code = 'd = df["$open"] - df["$close"]  # $open minus $close\n'
    assert adapt_code(code, ad) == 'd = df["$close"] - df["$open"]  # $open minus $close\n'


def test_conflicting_numbers_keep_the_first_and_are_reported() -> None:
    src = Task("s", "A", "", formulation="Mean($close, 5)/Std($close, 5)")
    dst = Task("t", "B", "", formulation="Mean($close, 10)/Std($close, 20)")
    ad = derive_adaptation(src, dst)
    assert dict(ad.numbers) == {5.0: "10"}
    assert ad.conflicts == ("5",)


def test_name_digits_do_not_override_the_formulation() -> None:
    src = Task("s", "ROC5", "", formulation="Ref($close, 5)/$close")
    dst = Task("t", "ROC20", "", formulation="Ref($close, 10)/$close")
    ad = derive_adaptation(src, dst)
    assert dict(ad.numbers) == {5.0: "10"}
    assert not ad.conflicts


def test_entry_points_of_function_tasks_are_renamed() -> None:
    src = Task("h/1", "add", "", extra={"entry_point": "add", "prompt": "def add(a, b):\n"})
    dst = Task("h/2", "plus", "", extra={"entry_point": "plus", "prompt": "def plus(a, b):\n"})
    ad = derive_adaptation(src, dst)
    assert adapt_code("def add(a, b):\n    return a + b\n", ad).startswith("def plus(a, b):")


def test_code_that_does_not_tokenize_is_returned_unchanged() -> None:
    ad = Adaptation(numbers={5.0: "10"})
    bad = 'x = (5\ny = """unterminated\n'
    assert adapt_code(bad, ad) == bad


def test_identical_tasks_give_an_empty_adaptation() -> None:
    ad = derive_adaptation(ma_task(5), ma_task(5))
    assert ad.empty
    assert ad.describe() == "no change"


@settings(max_examples=60, deadline=None)
@given(
    window=st.integers(1, 400),
    target=st.integers(1, 400),
    field=st.sampled_from(["close", "open", "volume", "high"]),
)
def test_property_adapted_code_parses_and_matches_direct_code(
    window: int, target: int, field: str
) -> None:
    ad = derive_adaptation(ma_task(window), ma_task(target, field))
    out = adapt_code(ma_code(window), ad)
    ast.parse(out)
    assert out == ma_code(target, field)


@settings(max_examples=200, deadline=None)
@given(code=st.text(max_size=300))
def test_property_adapt_code_never_raises(code: str) -> None:
    ad = Adaptation(numbers={5.0: "10"}, fields={"$close": "$open"}, names={"MA5": "MA10"})
    out = adapt_code(code, ad)
    assert isinstance(out, str)
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return
    ast.parse(out)  # rewriting tokens of valid code keeps it valid
