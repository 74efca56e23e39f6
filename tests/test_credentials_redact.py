"""``redact_credentials``: every kind the memory refuses is removed from a text, the rest stays."""

from __future__ import annotations

import pytest

from costeer_lab._credentials import credential_spans, redact_credentials, scan_credentials

from .memory.test_credentials import SECRETS


@pytest.mark.parametrize(("kind", "line"), SECRETS)
def test_every_refused_kind_is_redacted(kind: str, line: str) -> None:
    text = f"intro line\n{line}\noutro line"
    clean, found = redact_credentials(text)
    assert kind in {f.kind for f in found} and all(f.line == 2 for f in found)
    assert scan_credentials(clean) == []  # nothing left to find
    assert clean.startswith("intro line\n") and clean.endswith("\noutro line")
    assert "[REDACTED " in clean


def test_spans_do_not_overlap_and_keep_the_name() -> None:
    text = 'api_key = "sk-' + 24 * "a" + '"'
    spans = credential_spans(text)
    assert len(spans) == 1
    assert redact_credentials(text)[0] == 'api_key = "[REDACTED OpenAI-style API key]"'
