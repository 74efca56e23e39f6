"""Exact outputs of the error fingerprints, rule by rule (written against surviving mutants of
``costeer_lab/_fingerprint.py``: each case pins one branch; see docs/testing.md)."""

from __future__ import annotations

import pytest

from costeer_lab._fingerprint import MAX_MESSAGE_CHARS, error_fingerprint, extract_errors
from costeer_lab._fingerprint._mask import cut as _cut


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # identifiers: masked when dotted, snake_case, with digits, camelCase or exception names
        ("ValueError: bad os.path here", "ValueError: bad <id> here"),
        ("ValueError: bad my_var here", "ValueError: bad <id> here"),
        ("ValueError: bad col2 here", "ValueError: bad <id> here"),
        ("ValueError: bad camelCase here", "ValueError: bad <id> here"),
        ("ValueError: bad xLabel here", "ValueError: bad <id> here"),
        ("ValueError: bad Timeout here", "ValueError: bad <id> here"),
        # kept: plain words, capitalised words, ACRONYMS, None/True/False/NaN
        ("ValueError: Bad window NAN None here", "ValueError: Bad window NAN None here"),
        ("ValueError: got NaN and True", "ValueError: got NaN and True"),
        # calls, quotes, reprs, paths, numbers, addresses, placeholders
        ("TypeError: f() takes 2", "TypeError: <id>() takes <num>"),
        ('KeyError: `col` and "x"', "KeyError: <str> and <str>"),
        ("TypeError: <function f at 0x7f> bad", "TypeError: <obj> bad"),
        ("OSError: no /tmp/ws/main.py", "OSError: no <path>"),
        ("ValueError: -1.5e3 rows", "ValueError: <num> rows"),
        ("ValueError: id 12345678 gone", "ValueError: id <num> gone"),
        ("ValueError: at 0x7f3a9 gone", "ValueError: at <addr> gone"),
        ("ValueError: hash abcdef12 gone", "ValueError: hash <addr> gone"),
        ("ValueError: word deadbeef kept", "ValueError: word deadbeef kept"),
        ("ValueError: already <str> and <num>", "ValueError: already <str> and <num>"),
    ],
)
def test_masking_rules(text: str, expected: str) -> None:
    assert error_fingerprint(text) == expected
    assert error_fingerprint(expected) == expected  # idempotent


def test_camel_case_is_masked_but_capitalised_words_are_not() -> None:
    """A mutation that stops masking camelCase must fail here."""
    assert error_fingerprint("NameError: name dataFrame is not defined") == (
        "NameError: name <id> is not defined"
    )
    assert error_fingerprint("NameError: name Frame is not defined") == (
        "NameError: name Frame is not defined"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # an exception name glued to a digit or a dot is not an exception line
        ("1KeyError: boom", "<num><id>: boom"),
        ("x 1KeyError: boom", "x <num><id>: boom"),
        ("1.KeyError: boom", "<num>.<id>: boom"),
        # ...but a later, well-formed one on the same line is
        ("1KeyError: a ValueError: b", "ValueError: b"),
        # "Name:message" without a space, and a bare name
        ("KeyError:'a'", "KeyError: <str>"),
        ("raise StopIteration", "StopIteration"),
        # an indented "name: message" last line (no exception suffix)
        ("  my_thing: x", "my_thing: x"),
    ],
)
def test_exception_line_detection(text: str, expected: str) -> None:
    assert error_fingerprint(text) == expected


def test_non_strings_and_blank_text() -> None:
    assert error_fingerprint(None) == ""  # type: ignore[arg-type]
    assert error_fingerprint(" \n\t") == ""
    assert extract_errors(None) == []  # type: ignore[arg-type]
    assert extract_errors("\n\n") == []


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("abc", 3, "abc"),  # at the limit: unchanged
        ("aa bb cc dd ee", 12, "aa bb ..."),  # cut at the last space that fits
        ("a bcd-efgh", 9, "a ..."),  # a space at index 1
        (" abc-efghij", 8, " abc ..."),  # a space at index 0 only: back off inside the chunk
        ("abcdefghij", 8, "abcd ..."),  # one word: cut inside it
        ("ab.cdefgh", 8, "ab. ..."),  # back off to the start of the word cut in two
        ("-abcdefgh", 8, "- ..."),  # back off to index 1
    ],
)
def test_cut(text: str, limit: int, expected: str) -> None:
    assert _cut(text, limit) == expected


def test_long_messages_are_cut_at_the_limit() -> None:
    message = " ".join(["word"] * 200)
    fp = error_fingerprint(f"ValueError: {message}")
    assert fp.startswith("ValueError: word word") and fp.endswith(" ...")
    assert len(fp) - len("ValueError: ") <= MAX_MESSAGE_CHARS
