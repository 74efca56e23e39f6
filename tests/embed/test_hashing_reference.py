"""The hashing embedder's vectors equal, bit for bit, those of a plain reference implementation.

The reference below restates the documented feature set one feature at a time (blake2b per
feature, weights, order of summation) with no caches and no vectorisation, so any speed-up of
the embedder that changes a single bit of a vector fails here. The corpus is fixed and seeded
(stopwords, camelCase, digits, Unicode, empty texts, repeated tokens; small dims force hash
collisions, including ones that cancel a whole text).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import re

import numpy as np
import pytest

from costeer_lab.embed._hashing import _STOPWORDS, HashingEmbedder, tokenize


def _tokens(text: str) -> list[str]:
    """The documented tokenizer in its plain form: split camelCase, lowercase, then runs of
    letters or of digits (Unicode aware)."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text)
    return re.findall(r"[^\W\d_]+|\d+", text.lower())


def _feature(feature: str, weight: float, dim: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return h % dim, (weight if (h >> 63) & 1 else -weight)


def _stem(token: str) -> str:
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def _reference(text: str, dim: int) -> np.ndarray:
    feats: list[tuple[int, float]] = []
    tokens = _tokens(text)
    for tok in tokens:
        if tok in _STOPWORDS:
            feats.append(_feature("w:" + tok, 0.25, dim))
            continue
        feats.append(_feature("w:" + _stem(tok), 1.0, dim))
        marked = f"<{tok}>"
        grams = [marked[i : i + n] for n in (3, 4, 5) for i in range(len(marked) - n + 1)]
        feats.extend(_feature("c:" + g, 1.0 / math.sqrt(len(grams)), dim) for g in grams)
    content = [t for t in tokens if t not in _STOPWORDS]
    for a, b in itertools.pairwise(content):
        feats.append(_feature(f"b:{_stem(a)} {_stem(b)}", 0.5, dim))
    empty = [_feature("\x00empty", 1.0, dim)]
    dense = np.zeros((1, dim), dtype=np.float64)
    for col, val in feats or empty:  # summed in feature order, as float64
        dense[0, col] += val
    norm = np.sqrt(np.square(dense).sum(axis=1, keepdims=True))
    if norm[0, 0] == 0.0:  # every feature cancelled: the empty-text vector
        dense[:] = 0.0
        col, val = empty[0]
        dense[0, col] = val
        norm[0, 0] = 1.0
    row: np.ndarray = (dense / norm).astype(np.float32)[0]
    return row


def _corpus() -> list[str]:
    rng = random.Random(7)
    words = ["close", "prices", "rollingMean", "HTTPServer", "the", "of", "bond_yield", "MA5",
             "zscore", "volume", "é", "naïve", "日本", "x", "ab", "is", "status", "2024",
             "df['close'].shift(1)", "Traceback", "KeyError:"]  # fmt: skip
    fixed = ["", "  ", "!!", "a", "the of", "rolling_mean rolling mean", "close close close"]
    return fixed + [
        " ".join(rng.choice(words) for _ in range(rng.randint(1, 40))) for _ in range(400)
    ]


@pytest.mark.parametrize("dim", [384, 64, 8, 2])
def test_vectors_equal_the_reference_bit_for_bit(dim: int) -> None:
    texts = _corpus()
    expected = np.stack([_reference(t, dim) for t in texts])
    got = HashingEmbedder(dim=dim).embed(texts)
    assert got.dtype == np.float32
    assert got.tobytes() == expected.tobytes()
    again = HashingEmbedder(dim=dim)
    again.embed(texts[::-1])  # warm caches in another order, then embed in small chunks
    chunks = [again.embed(texts[i : i + 37]) for i in range(0, len(texts), 37)]
    assert np.concatenate(chunks).tobytes() == expected.tobytes()


def test_tokenize_equals_the_plain_tokenizer() -> None:
    # ASCII texts take a faster pattern; mixed, non-ASCII and lowercase-to-ASCII texts
    # (the Kelvin sign lowercases to "k") the Unicode one
    rng = random.Random(11)
    alphabet = "aZ09_ -.'(\n\tXyHTTPs\u00e9\u00c9\u212a\u0130\u65e5\u00b2\u0663"
    texts = _corpus() + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(3000)
    ]
    # ASCII only, dense in case changes (runs of capitals before and after lowercase letters,
    # digits between them): the one-scan pattern against the two substitutions
    texts += [
        "".join(rng.choice("aAbBzZ09_ .(-\t") for _ in range(rng.randint(0, 16)))
        for _ in range(20_000)
    ]
    assert [tokenize(t) for t in texts] == [_tokens(t) for t in texts]
    assert tokenize("\u212aelvinScale") == ["kelvin", "scale"]


def test_feature_tables_emptied_at_their_limit_keep_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import costeer_lab.embed._hashing as hashing

    texts = _corpus()
    expected = HashingEmbedder(dim=64).embed(texts)
    monkeypatch.setattr(hashing, "_CACHE_LIMIT", 25)  # emptied before most chunks below
    small = HashingEmbedder(dim=64)
    chunks = [small.embed(texts[i : i + 5]) for i in range(0, len(texts), 5)]
    assert np.concatenate(chunks).tobytes() == expected.tobytes()
    assert len(small._tokens) + len(small._pairs) < 25 + 5 * 80  # one chunk's worth at most
