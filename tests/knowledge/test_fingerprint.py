"""Error fingerprints: examples with known answers and hypothesis properties."""

from __future__ import annotations

import os
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costeer_lab._fingerprint import extract_errors
from costeer_lab.knowledge import error_fingerprint

PROPS = settings(
    max_examples=int(os.environ.get("FP_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _traceback(path: str, line: int, func: str, final: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "{path}", line {line}, in <module>\n'
        f"    {func}(df)\n"
        f'  File "/usr/lib/python3.11/site-packages/pandas/core/frame.py", line {line * 7}, in f\n'
        "    raise KeyError(key)\n"
        f"{final}\n"
    )


# -- examples with known answers ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("KeyError: 'close'", "KeyError: <str>"),
        (
            "Execution failed: ValueError: window 20 > length 5",
            "ValueError: window <num> > length <num>",
        ),
        (
            "NameError: name 'np' is not defined",
            "NameError: name <str> is not defined (missing import)",
        ),
        ("NameError: name 'total_x' is not defined", "NameError: name <str> is not defined"),
        (
            "TypeError: f() takes 2 positional arguments but 3 were given",
            "TypeError: wrong number of arguments in a call",
        ),
        (
            "AttributeError: module pandas has no attribute rolling_mean",
            "AttributeError: object has no attribute <str>",
        ),
        ("/tmp/x.py:3: RuntimeWarning: invalid value", "RuntimeWarning: invalid value"),
        (
            "FileNotFoundError: No such file: /data/ws_1/in.h5",
            "FileNotFoundError: No such file: <path>",
        ),
        ("MemoryError", "MemoryError"),
        ("mod.Custom: at <object at 0x7f3a>", "mod.Custom: at <obj>"),
        ("output shape (100, 2) != (100, 1)", "output shape <shape> != <shape>"),
        ("expected (3,) got (4, 1)", "expected <shape> got <shape>"),
        ("", ""),
        ("   \n\t", ""),
    ],
)
def test_known_fingerprints(text: str, expected: str) -> None:
    assert error_fingerprint(text) == expected


def test_full_traceback_uses_final_exception_line() -> None:
    tb = _traceback("/tmp/ws_9/main.py", 12, "compute", "KeyError: 'close'")
    assert error_fingerprint(tb) == "KeyError: <str>"
    assert extract_errors(tb) == [("KeyError: <str>", "KeyError: 'close'")]


def test_traceback_with_custom_exception_and_chaining() -> None:
    first = _traceback("/a.py", 1, "f", "KeyError: 'x'")
    chained = (
        first
        + "\nDuring handling of the above exception, another exception occurred:\n\n"
        + _traceback("/b.py", 2, "g", "mylib.errors.Boom: bad column 'x'")
    )
    assert error_fingerprint(chained) == "mylib.errors.Boom: bad column <str>"
    assert [fp for fp, _ in extract_errors(chained)] == [  # the error finally raised first
        "mylib.errors.Boom: bad column <str>",
        "KeyError: <str>",
    ]


def test_syntax_error_traceback() -> None:
    tb = (
        "Traceback (most recent call last):\n"
        '  File "/tmp/main.py", line 3\n'
        "    x = (\n"
        "        ^\n"
        "SyntaxError: '(' was never closed\n"
    )
    assert error_fingerprint(tb) == "SyntaxError: invalid syntax"  # a typo family


def test_indented_traceback_in_a_report() -> None:
    report = "Evaluation report\n    " + _traceback("/p.py", 4, "h", "IndexError: 3").replace(
        "\n", "\n    "
    )
    assert error_fingerprint(report) == "IndexError: <num>"


def test_extract_errors_dedupes_in_order_and_keeps_warning_lines() -> None:
    text = "UserWarning: slow\nValueError: bad 1\nValueError: bad 2\nTypeError: nope"
    assert extract_errors(text) == [
        ("TypeError: nope", "TypeError: nope"),  # the error finally raised first
        ("UserWarning: slow", "UserWarning: slow"),
        ("ValueError: bad <num>", "ValueError: bad 1"),
    ]
    assert error_fingerprint(text) == "TypeError: nope"


def test_message_without_exception_falls_back_to_last_line() -> None:
    text = "running factor\nIC is 0.0123, expected at least 0.02"
    assert error_fingerprint(text) == "IC is <num>, expected at least <num>"
    assert extract_errors(text) == [
        (error_fingerprint(text), "IC is 0.0123, expected at least 0.02")
    ]
    assert extract_errors("") == []


def test_long_messages_are_cut_at_a_word() -> None:
    fp = error_fingerprint("ValueError: " + "word " * 200)
    assert fp.endswith(" ...")
    assert len(fp) <= len("ValueError: ") + 300
    assert error_fingerprint(fp) == fp


# -- properties ------------------------------------------------------------------------------

EXC_TYPES = st.sampled_from(
    [
        "KeyError",
        "ValueError",
        "TypeError",
        "IndexError",
        "ZeroDivisionError",
        "AttributeError",
        "RuntimeError",
        "pandas.errors.MergeError",
        "AssertionError",
    ]
)
IDENTIFIERS = st.from_regex(r"\A[a-z][a-z0-9]*_[a-z0-9_]{0,8}\Z").filter(lambda s: len(s) < 20)
PATHS = st.lists(
    st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=8),
    min_size=1,
    max_size=5,
).map(lambda parts: "/" + "/".join(parts) + ".py")
NUMBERS = st.one_of(
    st.integers(-(10**9), 10**9).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
)
LITERALS = st.text(
    st.characters(blacklist_characters="'", blacklist_categories=("Cs", "Cc", "Zl", "Zp")),
    max_size=20,
).map(lambda s: f"'{s}'")
HEX = st.integers(0, 2**48).map(hex)

TEMPLATES = [
    "cannot use {ident} with window {num} at {path} (object {addr}), key {lit}",
    "{lit} not found in {path}:{num}",
    "shape ({num}, {num}) at {addr} for {ident}()",
]


@PROPS
@given(st.text(max_size=300))
def test_never_raises_and_is_idempotent(text: str) -> None:
    fp = error_fingerprint(text)
    assert isinstance(fp, str)
    assert "\n" not in fp
    assert error_fingerprint(fp) == fp
    pairs = extract_errors(text)
    if text.strip():
        assert fp in [f for f, _ in pairs]
    for f, _line in pairs:
        assert error_fingerprint(f) == f


ADVERSARIAL = st.lists(
    st.sampled_from(
        [
            *"aZ_0 .:'\"<>/\\()-xEe\t",
            "Error",
            "Key",
            "Traceback (most recent call last):\n",
            "\n  ",
            "\n",
        ]
    ),
    max_size=40,
).map("".join)


@PROPS
@given(ADVERSARIAL)
def test_idempotent_on_adversarial_alphabet(text: str) -> None:
    fp = error_fingerprint(text)
    assert error_fingerprint(fp) == fp


@PROPS
@given(
    EXC_TYPES,
    st.sampled_from(TEMPLATES),
    st.data(),
)
def test_invariant_to_paths_numbers_addresses_literals_identifiers(
    exc: str, template: str, data: st.DataObject
) -> None:
    def fill() -> str:
        return template.format(
            ident=data.draw(IDENTIFIERS),
            num=data.draw(NUMBERS),
            path=data.draw(PATHS),
            addr=data.draw(HEX),
            lit=data.draw(LITERALS),
        )

    one, two = fill(), fill()
    line_a, line_b = data.draw(st.integers(1, 5000)), data.draw(st.integers(1, 5000))
    tb_a = _traceback(data.draw(PATHS), line_a, data.draw(IDENTIFIERS), f"{exc}: {one}")
    tb_b = _traceback(data.draw(PATHS), line_b, data.draw(IDENTIFIERS), f"{exc}: {two}")
    assert error_fingerprint(tb_a) == error_fingerprint(tb_b)
    # the one-line evaluator form agrees with the traceback form
    assert error_fingerprint(f"Execution failed: {exc}: {one}") == error_fingerprint(tb_a)
    assert error_fingerprint(tb_a).startswith(exc + ":")


@PROPS
@given(
    st.lists(EXC_TYPES, min_size=2, max_size=2, unique=True), st.sampled_from(TEMPLATES), st.data()
)
def test_different_exception_types_differ(
    types: list[str], template: str, data: st.DataObject
) -> None:
    msg = template.format(
        ident=data.draw(IDENTIFIERS), num="1", path="/a.py", addr="0x1", lit="'a'"
    )
    a = error_fingerprint(_traceback("/x.py", 1, "f", f"{types[0]}: {msg}"))
    b = error_fingerprint(_traceback("/x.py", 1, "f", f"{types[1]}: {msg}"))
    assert a != b


@PROPS
@given(st.from_regex(r"\A[A-Z][A-Za-z]{0,12}(Error|Exception|Warning)\Z"), st.text(max_size=80))
def test_any_named_exception_keeps_its_type(exc: str, message: str) -> None:
    fp = error_fingerprint(f"{exc}: {message}".replace("\n", " ").replace("\r", " "))
    assert fp == exc or fp.startswith(exc + ": ")
