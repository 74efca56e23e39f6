"""The document KB's secret screen pinned exactly: the refusal message (at most five secrets
listed, then a count) and the mode check."""

from __future__ import annotations

import pytest

from costeer_lab.docs._secrets import screen_secrets
from costeer_lab.errors import InvalidInputError

ADVICE = (
    "; the document KB never stores credentials (remove them, or set docs.secrets to 'redact' "
    "to store the document with each secret replaced)"
)


def keys(n: int) -> str:
    return "\n".join(f'k{i} = "AKIAABCDEFGHIJKLMNO{i}"' for i in range(n))


def listed(n: int) -> str:
    return ", ".join(f"an AWS access key id on line {i}" for i in range(1, n + 1))


def refusal(text: str) -> str:
    with pytest.raises(InvalidInputError) as err:
        screen_secrets(text, "notes.md", "refuse")
    return str(err.value)


def test_five_secrets_are_all_listed() -> None:
    assert refusal(keys(5)) == f"refusing to ingest 'notes.md': it contains {listed(5)}{ADVICE}"


def test_past_five_the_rest_are_counted() -> None:
    assert refusal(keys(6)) == (
        f"refusing to ingest 'notes.md': it contains {listed(5)} and 1 more{ADVICE}"
    )
    assert refusal(keys(7)) == (
        f"refusing to ingest 'notes.md': it contains {listed(5)} and 2 more{ADVICE}"
    )


def test_redact_counts_every_secret() -> None:
    clean, n = screen_secrets(keys(7), "notes.md", "redact")
    assert n == 7 and "AKIA" not in clean and clean.count("[REDACTED ") == 7


def test_an_unknown_mode_is_named() -> None:
    with pytest.raises(InvalidInputError) as err:
        screen_secrets("x", "notes.md", "warn")  # type: ignore[arg-type]
    assert str(err.value) == "docs secrets mode must be 'redact' or 'refuse', got 'warn'"
