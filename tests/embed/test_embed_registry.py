"""get_embedder / register_embedder: built-in names, plug-ins, helpful errors."""

from __future__ import annotations

import pytest

from costeer_lab.embed import (
    HashingEmbedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    _registry,
    get_embedder,
    register_embedder,
)
from costeer_lab.embed._registry import known_embedders
from costeer_lab.errors import InvalidInputError, UnknownNameError
from costeer_lab.testing import FakeOpenAIServer


@pytest.fixture(autouse=True)
def _isolated_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_registry, "_factories", dict(_registry._factories))


def test_builtin_names() -> None:
    assert known_embedders() == ["hashing", "minilm", "openai:<model>"]
    hashing = get_embedder("hashing")
    assert isinstance(hashing, HashingEmbedder) and hashing.dim == 384
    assert get_embedder("hashing", dim=64).id == "hashing@1:64"
    assert isinstance(get_embedder("minilm"), MiniLMEmbedder)


def test_openai_prefix_passes_the_model(fake_openai: FakeOpenAIServer) -> None:
    emb = get_embedder(
        "openai:text-embedding-3-large", api_key=fake_openai.api_key, base_url=fake_openai.base_url
    )
    assert isinstance(emb, OpenAIEmbedder)
    assert emb.model == "text-embedding-3-large" and emb.dim == 3072


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [("hashin", "'hashing'"), ("MiniLM", None), ("opnai:gpt-embed", "'openai:gpt-embed'")],
)
def test_unknown_names_list_known_ones(name: str, suggestion: str | None) -> None:
    with pytest.raises(UnknownNameError) as info:
        get_embedder(name)
    message = str(info.value)
    assert repr(name) in message and "'hashing', 'minilm', 'openai:<model>'" in message
    if suggestion:
        assert f"did you mean {suggestion}?" in message
    assert isinstance(info.value, KeyError)


@pytest.mark.parametrize("name", ["openai:", "openai:   "])
def test_prefix_without_model(name: str) -> None:
    with pytest.raises(InvalidInputError, match="needs a model"):
        get_embedder(name)


def test_non_string_name() -> None:
    with pytest.raises(InvalidInputError, match="string"):
        get_embedder(384)  # type: ignore[arg-type]


def test_register_plugin_and_prefix_plugin() -> None:
    register_embedder("tiny", lambda **kw: HashingEmbedder(dim=kw.get("dim", 8)))
    assert get_embedder("tiny").dim == 8 and get_embedder("tiny", dim=12).dim == 12
    register_embedder("hash:", lambda model, **kw: HashingEmbedder(dim=int(model)))
    assert get_embedder("hash:24").id == "hashing@1:24"
    assert "hash:<model>" in known_embedders() and "tiny" in known_embedders()


def test_register_refuses_duplicates_unless_replace() -> None:
    with pytest.raises(InvalidInputError, match="already registered"):
        register_embedder("hashing", HashingEmbedder)
    register_embedder("hashing", lambda **kw: HashingEmbedder(dim=16), replace=True)
    assert get_embedder("hashing").dim == 16


@pytest.mark.parametrize("name", ["", ":", "  "])
def test_register_refuses_empty_names(name: str) -> None:
    with pytest.raises(InvalidInputError):
        register_embedder(name, HashingEmbedder)
