"""Every embedder rejects malformed input the same way, before any work is done."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from costeer_lab.embed import (
    BaseEmbedder,
    CachedEmbedder,
    HashingEmbedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
)
from costeer_lab.errors import InvalidInputError
from costeer_lab.store import SQLiteStore
from costeer_lab.testing import FakeOpenAIServer

KINDS = ["hashing", "minilm", "openai", "cached"]


@pytest.fixture(params=KINDS)
def embedder(
    request: pytest.FixtureRequest, fake_openai: FakeOpenAIServer, tmp_path: Path
) -> Iterator[BaseEmbedder]:
    makers: dict[str, Callable[[], BaseEmbedder]] = {
        "hashing": HashingEmbedder,
        "minilm": MiniLMEmbedder,
        "openai": lambda: OpenAIEmbedder(
            "text-embedding-3-small", api_key=fake_openai.api_key, base_url=fake_openai.base_url
        ),
        "cached": lambda: CachedEmbedder(HashingEmbedder(), store),
    }
    with SQLiteStore(tmp_path / "v.db") as store:
        yield makers[request.param]()


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ([], "empty list"),
        ("a bare string", "single str"),
        (b"bytes", "single bytes"),
        (["ok", 3], "item 1 is int"),
        (["ok", None], "item 1 is NoneType"),
        ({"a", "b"}, "takes a list of strings, got set"),
    ],
)
def test_malformed_input_is_rejected(embedder: BaseEmbedder, bad: object, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        embedder.embed(bad)  # type: ignore[arg-type]
    assert embedder.calls == 0 and embedder.texts_embedded == 0


def test_no_request_is_sent_for_bad_input(fake_openai: FakeOpenAIServer) -> None:
    emb = OpenAIEmbedder(
        "text-embedding-3-small", api_key=fake_openai.api_key, base_url=fake_openai.base_url
    )
    with pytest.raises(InvalidInputError):
        emb.embed(["fine", 1.5])  # type: ignore[list-item]
    assert fake_openai.requests == []


def test_tuples_are_accepted(embedder: BaseEmbedder) -> None:
    assert embedder.embed(("a", "b")).shape == (2, embedder.dim)
