"""Message families of the fingerprints: hypothesis properties over the wordings of each."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costeer_lab._fingerprint import (
    canonical_message,
    error_fingerprint,
    extract_errors,
    mismatch_name,
)
from costeer_lab._fingerprint._families import CANONICAL_MESSAGES

PROPS = settings(
    max_examples=int(os.environ.get("FP_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
NAMES = st.from_regex(r"\A[a-z_][a-z0-9_]{0,12}\Z")
SMALL = st.integers(0, 9)
TYPES = st.sampled_from(["int", "str", "list", "float", "tuple", "dict", "Series", "ndarray"])
OPS = st.sampled_from(["+", "-", "*", "/", "%", "**", "//"])

#: family -> (exception type, strategy of its wordings as Python, numpy and pandas print them)
FAMILIES: dict[str, st.SearchStrategy[str]] = {
    "arity": st.one_of(
        st.builds("TypeError: {}() takes {} positional arguments but {} were given".format,
                  NAMES, SMALL, SMALL),
        st.builds("TypeError: {}() missing {} required positional argument: '{}'".format,
                  NAMES, SMALL, NAMES),
        st.builds("TypeError: {} expected at most {} arguments, got {}".format,
                  NAMES, SMALL, SMALL),
        st.builds("TypeError: {}() takes exactly one argument ({} given)".format, NAMES, SMALL),
    ),
    "operand": st.one_of(
        st.builds("TypeError: unsupported operand type(s) for {}: '{}' and '{}'".format,
                  OPS, TYPES, TYPES),
        st.builds('TypeError: can only concatenate {} (not "{}") to {}'.format,
                  TYPES, TYPES, TYPES),
        st.builds("TypeError: '{}' not supported between instances of '{}' and '{}'".format,
                  st.sampled_from(["<", ">", "<=", ">="]), TYPES, TYPES),
    ),
    "index": st.one_of(
        st.builds("IndexError: {} index out of range".format, TYPES),
        st.builds("IndexError: index {} is out of bounds for axis {} with size {}".format,
                  st.integers(0, 10**6), SMALL, st.integers(0, 10**6)),
    ),
    "unpack": st.one_of(
        st.builds("ValueError: not enough values to unpack (expected {}, got {})".format,
                  SMALL, SMALL),
        st.builds("ValueError: too many values to unpack (expected {})".format, SMALL),
    ),
    "attribute": st.one_of(
        st.builds("AttributeError: '{}' object has no attribute '{}'".format, TYPES, NAMES),
        st.builds("AttributeError: module '{}' has no attribute '{}'".format, NAMES, NAMES),
        st.builds("AttributeError: type object '{}' has no attribute '{}'".format,
                  TYPES, NAMES),
    ),
    "key": st.one_of(
        st.builds("KeyError: '{}'".format, NAMES),
        st.builds("KeyError: {}".format, st.integers(-(10**6), 10**6)),
        st.builds("KeyError: ({}, '{}')".format, SMALL, NAMES),
    ),
    "zero": st.sampled_from(
        [
            "ZeroDivisionError: division by zero",
            "ZeroDivisionError: float division by zero",
            "ZeroDivisionError: integer division or modulo by zero",
            "ZeroDivisionError: integer modulo by zero",
            "ZeroDivisionError: float modulo",
        ]
    ),
    "convert": st.one_of(
        st.builds("ValueError: invalid literal for int() with base {}: '{}'".format,
                  st.sampled_from([2, 10, 16]), NAMES),
        st.builds("ValueError: could not convert string to float: '{}'".format, NAMES),
    ),
}  # fmt: skip


@PROPS
@given(st.sampled_from(sorted(FAMILIES)), st.data())
def test_every_wording_of_a_family_gets_one_signature(family: str, data: st.DataObject) -> None:
    one = data.draw(FAMILIES[family])
    two = data.draw(FAMILIES[family])
    assert error_fingerprint(one) == error_fingerprint(two), (one, two)


@PROPS
@given(st.lists(st.sampled_from(sorted(FAMILIES)), min_size=2, max_size=2, unique=True), st.data())
def test_different_families_get_different_signatures(
    families: list[str], data: st.DataObject
) -> None:
    a = error_fingerprint(data.draw(FAMILIES[families[0]]))
    b = error_fingerprint(data.draw(FAMILIES[families[1]]))
    assert a != b


@PROPS
@given(st.sampled_from(sorted(FAMILIES)), st.data(), NAMES)
def test_python_hints_and_tracebacks_do_not_change_the_signature(
    family: str, data: st.DataObject, hint: str
) -> None:
    line = data.draw(FAMILIES[family])
    tb = f'Traceback (most recent call last):\n  File "/w/{hint}.py", line 3, in f\n    x\n{line}'
    assert error_fingerprint(f"{line}. Did you mean: '{hint}'?") == error_fingerprint(line)
    assert error_fingerprint(tb) == error_fingerprint(line)
    assert extract_errors(tb)[0][0] == error_fingerprint(line)


@PROPS
@given(st.text(max_size=300))
def test_the_first_extracted_error_is_the_fingerprint(text: str) -> None:
    pairs = extract_errors(text)
    if text.strip():
        assert pairs[0][0] == error_fingerprint(text)
        assert len({fp for fp, _ in pairs}) == len(pairs)
    else:
        assert pairs == []


@pytest.mark.parametrize("message", sorted(CANONICAL_MESSAGES))
def test_canonical_messages_are_fixed_points(message: str) -> None:
    for exc in ("TypeError", "ValueError", "NameError", "KeyError", "SyntaxError"):
        fp = error_fingerprint(f"{exc}: {message}")
        assert error_fingerprint(fp) == fp


@PROPS
@given(st.text(max_size=80), st.text(max_size=30))
def test_the_mismatch_class_is_kept_and_idempotent(text: str, mismatch: str) -> None:
    fp = error_fingerprint(text, mismatch=mismatch)
    assert error_fingerprint(fp) == fp
    name = mismatch_name(mismatch)
    if text.strip() and name:
        assert fp.endswith(f" [mismatch: {name}]")
        assert fp.startswith(error_fingerprint(text))


def test_mismatch_classes_tell_value_mismatches_apart() -> None:
    text = "FactorCheckError: equal values 0.12 <= 0.99 of the ground truth"
    scale = error_fingerprint(text, mismatch="scale")
    lag = error_fingerprint(text, mismatch="lag")
    assert (
        scale
        == "FactorCheckError: equal values <num> <= <num> of the ground truth [mismatch: scale]"
    )
    assert lag != scale and error_fingerprint(text) not in (lag, scale)
    assert error_fingerprint(text, mismatch="") == error_fingerprint(text)
    assert error_fingerprint("", mismatch="scale") == ""
    assert mismatch_name("Sign Flip!") == "sign_flip"
    assert mismatch_name("__") == "" and mismatch_name(3) == ""


@pytest.mark.parametrize(
    ("exc", "message", "expected"),
    [
        ("NameError", "name 'np' is not defined", "name <str> is not defined (missing import)"),
        ("NameError", "name 'string' is not defined", "name <str> is not defined"),
        ("NameError", "name 'totl' is not defined. Did you mean: 'total'?", None),
        ("UnboundLocalError", "cannot access local variable 'x' where it is not associated "
         "with a value", "local variable used before assignment"),
        ("SyntaxError", "'return' outside function", None),
        ("IndentationError", "unexpected indent", "invalid indentation"),
        ("ImportError", "cannot import name 'x' from 'y' (/a/y.py)",
         "cannot import name <str> from <str>"),
        ("KeyError", "'Level ticker not found'", "<str>"),
        ("KeyError", "not a literal key", None),
        ("ValueError", "max() arg is an empty sequence", "empty sequence given to max or min"),
        ("pandas.errors.MergeError", "No common columns to perform merge on", None),
        ("ValueError", "window too long", None),
    ],
)  # fmt: skip
def test_canonical_message_examples(exc: str, message: str, expected: str | None) -> None:
    from costeer_lab._fingerprint._families import strip_hints

    got = canonical_message(exc, strip_hints(message))
    if exc == "NameError" and expected is None:
        assert got == "name <str> is not defined"
    else:
        assert got == expected
